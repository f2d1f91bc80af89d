"""Built queries (sparqlqa's own, written from terms) declare their reading; untrusted text is always parsed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import sparqlqa.query.sparql_reading as reading
from sparqlqa.errors import QueryError, ServiceRefused
from sparqlqa.kb.store import OxigraphStore
from sparqlqa.query.built_query import CHECK_ENV, BuiltQuery

PACKAGE = Path(__file__).resolve().parents[2] / "sparqlqa"
#: modules that write queries from terms and may construct a BuiltQuery (add one only after checking that
#: every piece of its query text comes from pyoxigraph terms or sparqlqa's own code)
BUILDERS = {
    "evaluation/oracle.py", "query/built_query.py", "kb/data_names.py", "kb/export.py", "kb/group.py", "kb/identity.py",
    "kb/labels.py", "kb/naming.py", "kb/node_text.py", "kb/schema.py", "remote/labels.py", "remote/remote_kb.py",
    "remote/schema_sampling.py", "serve/service.py", "stages/compile.py", "stages/form_query.py",
    "strategies/analytic.py", "strategies/fiske/explore.py", "strategies/offline/form_triplets.py",
    "strategies/offline/paths.py",
    "strategies/offline/strategy.py", "strategies/offline/foreign.py", "strategies/offline/tables/answer.py",
    "strategies/offline/tables/model.py", "strategies/text2sparql/grounding.py", "strategies/text2sparql/prompts.py",
    "vectors/index.py",
}
#: where untrusted text (a user's, an LLM's, a profile's query) enters: no BuiltQuery there at all
UNTRUSTED = {
    "cli/kb_commands.py": None, "serve/app.py": None, "serve/mcp_server.py": None,
    "strategies/text2sparql/strategy.py": None, "strategies/text2sparql/query.py": None, "kb/profile.py": None,
    "serve/service.py": "sparql", "strategies/text2sparql/grounding.py": "unmatched",
}


def _constructs(tree: ast.AST) -> list[int]:
    """Lines that call ``BuiltQuery(...)`` or ``BuiltQuery.<form>(...)``."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func.value if isinstance(node.func, ast.Attribute) else node.func
        if isinstance(func, ast.Name) and func.id == "BuiltQuery":
            found.append(node.lineno)
    return found


def test_only_the_builders_construct_built_queries() -> None:
    users = {str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
             if _constructs(ast.parse(path.read_text()))}
    users.add("query/built_query.py")
    assert users <= BUILDERS, f"new modules construct BuiltQuery: {sorted(users - BUILDERS)}: check they only write "\
        "terms, then list them in BUILDERS"
    assert "stages/execute.py" not in users  # it runs the compiler's own (CompiledQuery.built)


@pytest.mark.parametrize("module", sorted(UNTRUSTED))
def test_untrusted_entry_points_never_build(module: str) -> None:
    tree = ast.parse((PACKAGE / module).read_text())
    function = UNTRUSTED[module]
    if function is not None:
        matches = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function]
        assert matches, f"{module} has no function {function}"
        tree = matches[0]
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert "BuiltQuery" not in names and "built" not in {
        n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the SPARQL 1.1 parser reads from now on."""
    seen: list[str] = []
    original = reading._parse
    monkeypatch.setattr(reading, "_parse", lambda text: seen.append(text) or original(text))
    reading.clear_cache()
    return seen


def test_a_built_query_runs_without_a_parse(parses: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CHECK_ENV)
    store = OxigraphStore.in_memory()
    assert store.query(BuiltQuery.ask("ASK { ?s ?p ?o }")).boolean is False
    assert store.select(BuiltQuery.select("SELECT ?s WHERE { ?s ?p ?o }")).variables == ["s"]
    assert parses == []
    assert store.query("ASK { ?s ?p ?o }").form == "ASK"  # a str: read by the parser
    assert parses == ["ASK { ?s ?p ?o }"]


def test_a_declared_service_meets_the_service_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CHECK_ENV)
    query = BuiltQuery.select("SELECT * WHERE { SERVICE <http://127.0.0.1:9/x> { ?s ?p ?o } }",
                              services=["http://127.0.0.1:9/x"])
    with pytest.raises(ServiceRefused):
        OxigraphStore.in_memory().query(query)


def test_a_wrong_declaration_fails_where_declarations_are_checked() -> None:
    store = OxigraphStore.in_memory()  # the suite runs with SPARQLQA_CHECK_BUILT=1 (tests/conftest.py)
    with pytest.raises(AssertionError, match="declares ASK"):
        store.query(BuiltQuery.ask("SELECT * WHERE { ?s ?p ?o }"))
    with pytest.raises(AssertionError, match="calling"):
        store.query(BuiltQuery.select("SELECT * WHERE { SERVICE <http://127.0.0.1:9/x> { ?s ?p ?o } }"))


def test_a_built_query_is_a_read_query() -> None:
    with pytest.raises(QueryError):
        BuiltQuery("DELETE WHERE { ?s ?p ?o }", "DELETE")
