"""The public API, listed in one place: the package root's and each package's ``__all__`` are exactly these
names, each one imports, and the README's Python examples run as written.

A name added to or removed from a package's face changes this list on purpose.  Every other module says
what it offers in its own ``__all__`` (checked here to name only what the module has).
"""

from __future__ import annotations

import ast
import importlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_architecture import ROOT, modules

#: the public API: package → the names its ``__init__`` exports
PUBLIC_API: dict[str, list[str]] = {
    "sparqlqa": ["Answer", "AnswerItem", "AnswerMeta", "KnowledgeBase", "QueryRecord", "SparqlqaError",
                 "__version__", "ask", "open_kb"],
    "sparqlqa.cli": ["main"],
    "sparqlqa.embed": ["Embedder", "FakeEmbedder", "SentenceTransformerEmbedder", "check_device", "embedders",
                       "get_embedder"],
    "sparqlqa.evaluation": ["LLM_STRATEGIES", "AskFunction", "Dataset", "EvalError", "EvalReport", "EvalResult",
                            "EvalRun", "LLMUsage", "Outcome", "Question", "QuestionResult", "RunSettings", "RunStats",
                            "StrategySummary", "datasets", "evaluate", "ingest_graphs", "load_questions",
                            "question_metrics", "select_questions"],
    "sparqlqa.ingest": ["IngestFormat", "IngestTarget", "check_replace", "ingest", "ingest_formats",
                        "resolve_format"],
    "sparqlqa.kb": ["BrokenKB", "KBScan", "KnowledgeBase", "Manifest", "canonical_kb_name", "kb_exists", "list_kbs",
                    "open_kb", "remove_kb", "scan_kbs", "validate_kb_name", "write_generation"],
    "sparqlqa.llm": ["CACHE_MODES", "DEFAULT_ANTHROPIC_MODEL", "LLM", "CachedAnswer", "FakeLLM", "ImportReport",
                     "LLMCache", "LLMCall", "LLMOptions", "LLMRequest", "LLMResponse", "Message", "RetryPolicy",
                     "cache_key", "current_context", "get_llm", "llm_context", "llms", "parse_structured",
                     "resolve_cache_mode", "resolve_llm_spec"],
    "sparqlqa.net": ["CallFailure", "Deadline", "GiveUp", "Request", "Response", "RetryPolicy", "Transport",
                     "call_with_retries", "excerpt", "parse_retry_after", "same_host", "send", "within"],
    "sparqlqa.query": ["BuiltQuery", "QueryLimits", "QueryReading", "bounded", "read_query"],
    "sparqlqa.remote": ["EndpointConfig", "EndpointStore", "RemoteLabelLookup", "add_remote_kb", "is_remote",
                        "list_profiles", "load_profile", "lookup_for_kb", "open_endpoint", "sample_schema",
                        "timeout_override"],
    "sparqlqa.serve": ["require"],
    "sparqlqa.stages": [],
    "sparqlqa.strategies": ["FourStep", "Strategy", "StrategyRegistry", "VectorSearch", "VectorSearchRerank",
                            "strategies"],
    "sparqlqa.strategies.fiske": [],
    "sparqlqa.strategies.offline": ["Hop", "Mention", "OfflineStrategy", "OfflineTriplets", "RelationPath",
                                    "ScoringSettings", "detect_mentions", "enumerate_paths", "offline_triplets"],
    "sparqlqa.strategies.offline.tables": [],
    "sparqlqa.strategies.text2sparql": [],
    "sparqlqa.vectors": ["NodeIndex", "build_index", "embed_query", "index_nodes", "index_status", "index_supported",
                         "load_index"],
}


def test_every_package_is_listed() -> None:
    packages = {name for name, path in modules().items() if path.name == "__init__.py"}
    assert packages == set(PUBLIC_API)


@pytest.mark.parametrize("package", sorted(PUBLIC_API))
def test_a_package_exports_exactly_its_listed_names(package: str) -> None:
    module = importlib.import_module(package)
    assert sorted(module.__all__) == sorted(PUBLIC_API[package])
    assert len(set(module.__all__)) == len(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is not None, name


def test_an_unknown_name_is_an_attribute_error() -> None:
    import sparqlqa

    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        sparqlqa.nothing  # noqa: B018
    with pytest.raises(ImportError):
        exec("from sparqlqa.kb import nothing", {})


def test_import_sparqlqa_imports_only_its_face() -> None:
    code = "import sparqlqa, sys; print(sorted(m for m in sys.modules if m.startswith('sparqlqa')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "['sparqlqa', 'sparqlqa.version']"  # a query worker imports this package too


def declared_all(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
            try:
                return list(ast.literal_eval(node.value))
            except ValueError:  # computed (sparqlqa.remote: sorted(...)): checked by the package test
                return []
    return None


def top_level_names(tree: ast.Module) -> set[str]:
    """What a module defines or imports at its top (``if TYPE_CHECKING:`` and ``try:`` blocks included)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node in tree.body:
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    for node in tree.body:
        for target in node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]:
            if isinstance(target, ast.Name):
                names.add(target.id)
    return names


def test_every_module_says_what_it_offers() -> None:
    """Each module has an ``__all__``, naming public things it has (a package's lazy names aside)."""
    missing, unknown = [], []
    for name, path in sorted(modules().items()):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        offered = declared_all(tree)
        if offered is None:
            missing.append(name)
            continue
        lazy = name in PUBLIC_API and not set(offered) <= top_level_names(tree)
        unknown += [f"{name}.{n}" for n in offered
                    if (n.startswith("_") and n != "__version__") or (not lazy and n not in top_level_names(tree))]
    assert missing == []
    assert unknown == []


def _all_comes_first(tree: ast.Module) -> bool:
    """Whether ``__all__`` is the first statement after the docstring and ``from __future__`` (PEP 8)."""
    body = [node for node in tree.body if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
            and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")]
    first = body[0] if body else None
    return isinstance(first, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in first.targets)


def test_every_module_says_what_it_offers_before_its_imports() -> None:
    """PEP 8's place for ``__all__``: after the docstring, before the imports — where a reader meets the module's
    face first (a computed ``__all__``, which needs names defined before it, may come later)."""
    late = [name for name, path in sorted(modules().items())
            if not _all_comes_first(tree := ast.parse(path.read_text(encoding="utf-8")))
            and isinstance(_all_node(tree), ast.List)]
    assert late == []
    assert not _all_comes_first(ast.parse("import os\n__all__ = ['x']\nx = os"))


def _unlisted_imports(paths: list[Path], known: dict[str, Path], root: Path = ROOT) -> list[str]:
    """``file: module.name`` for each name ``paths`` import from a sparqlqa module whose literal ``__all__`` does not
    list it (a submodule is fine; a test may reach for a ``_private`` helper on purpose, sparqlqa's code may not)."""
    offered = {name: declared_all(ast.parse(path.read_text(encoding="utf-8"))) for name, path in known.items()}
    found = []
    for path in paths:
        in_package = path.is_relative_to(root / "sparqlqa")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in known):
                continue
            names = offered[node.module]
            found += [f"{path.relative_to(root)}: {node.module}.{alias.name}" for alias in node.names
                      if names and alias.name not in names and f"{node.module}.{alias.name}" not in known
                      and (in_package or not alias.name.startswith("_"))]
    return found


def test_what_is_imported_from_a_module_is_in_its_all() -> None:
    """A module's ``__all__`` is what the rest of the code takes from it: no name is taken around it, and no
    module re-exports another's name (import it from where it is defined)."""
    known = modules()
    paths = [p for folder in ("sparqlqa", "tests", "benchmarks", "scripts") for p in (ROOT / folder).rglob("*.py")]
    assert _unlisted_imports(paths, known) == []


def test_the_import_check_finds_a_name_taken_around_all(tmp_path: Path) -> None:
    known = {"m": tmp_path / "m.py"}
    known["m"].write_text("__all__ = ['a']\na = b = _c = 1\n", encoding="utf-8")
    (tmp_path / "sparqlqa").mkdir()
    (tmp_path / "tests").mkdir()
    inside, test = tmp_path / "sparqlqa" / "user.py", tmp_path / "tests" / "test_user.py"
    for path in (inside, test):
        path.write_text("from m import a, b, _c\n", encoding="utf-8")
    assert _unlisted_imports([inside, test], known, tmp_path) == [
        "sparqlqa/user.py: m.b", "sparqlqa/user.py: m._c", "tests/test_user.py: m.b"]


def _all_node(tree: ast.Module) -> ast.expr | None:
    return next((node.value for node in tree.body if isinstance(node, ast.Assign)
                 and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)), None)


def test_the_module_check_finds_a_missing_all() -> None:
    assert declared_all(ast.parse("x = 1")) is None
    assert declared_all(ast.parse("__all__ = ['x']\nx = 1")) == ["x"]
    assert "x" not in top_level_names(ast.parse("def f():\n    x = 1"))


@pytest.fixture
def movies_sample(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The bundled sample ingested as KB ``movies``; a copy of its file as ``kb.txt`` in the working folder."""
    from sparqlqa.ingest import ingest
    from sparqlqa.samples import SAMPLES, sample_path

    sample = SAMPLES["movies"]
    ingest([sample_path("movies")], kb="movies", format=sample.format, options={"sep": sample.sep})
    shutil.copy(sample_path("movies"), tmp_path / "kb.txt")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_ask_answers_on_the_bundled_sample(movies_sample: Path) -> None:
    import sparqlqa
    from sparqlqa.samples import SAMPLES

    answer = sparqlqa.ask("movies", SAMPLES["movies"].question)
    assert isinstance(answer, sparqlqa.Answer)
    assert answer.strategy == "offline"  # no LLM configured
    labels = [item.label for item in answer.items if item.matched]
    assert {"Mark Sandrich", "Howard Hawks"} <= set(labels)


def readme_examples() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_the_readme_has_python_examples() -> None:
    assert len(readme_examples()) >= 2


@pytest.mark.parametrize("index", range(len(readme_examples())))
def test_a_readme_example_runs(index: int, movies_sample: Path) -> None:
    exec(compile(readme_examples()[index], f"README.md example {index + 1}", "exec"), {})


def test_a_registry_knows_a_builtin_name_without_importing_it() -> None:
    code = ("import sys\n"
            "from sparqlqa.kb.store import stores\n"
            "print('endpoint' in stores, 'sparqlqa.remote.endpoint' in sys.modules,\n"
            "      'importlib.metadata' in sys.modules)\n"
            "print(stores.get('endpoint').__module__, 'sparqlqa.remote.labels' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split("\n")[:2] == ["True False False", "sparqlqa.remote.endpoint False"]
