"""The house stays as ARCHITECTURE.md draws it: dependencies flow one way, no import cycle, small modules.

Every ``import`` of the package is read with :mod:`ast` — module level, inside functions and under
``TYPE_CHECKING`` alike, so a lazy import cannot hide a cycle.  A unit is a first-level package
(``sparqlqa.kb``) or a flat module (``sparqlqa.errors``).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sparqlqa"

#: each unit's layer: a unit may import units of lower layers only (and itself)
LAYERS: dict[str, int] = {
    "errors": 0, "deadlines": 0,  # deadlines: the time limits in force, one ContextVar (imports nothing of sparqlqa)
    "registry": 1, "net": 1, "paths": 1, "version": 1, "samples": 1, "text_input": 1, "english": 1, "language": 1,
    "llm": 2, "embed": 2, "query": 2,  # query: the read path (guards, pool, worker, limits); kb imports it
    "kb": 3,
    "remote": 4, "vectors": 4,
    "ingest": 5,
    "stages": 6,
    "strategies": 7,
    "evaluation": 8,
    "serve": 9,
    "cli": 10, "__main__": 11, "": 11,  # "" is the package root (the public API: sparqlqa.ask ...)
}
MAX_FLAT_MODULES = 12
MAX_MODULE_LINES = 600


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The sparqlqa modules ``name`` imports, anywhere in the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        found.update(t for t in targets if t in known and t != name)
    return found


def unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def graph(level: str) -> dict[str, set[str]]:
    known = modules()
    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in known.items():
        for target in imported(name, path, known):
            a, b = (name, target) if level == "module" else (unit(name), unit(target))
            if a != b:
                edges[a].add(b)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(set(edges) | {t for targets in edges.values() for t in targets}):
        if node not in index:
            visit(node)
    return found


@pytest.mark.parametrize("level", ["module", "unit"])
def test_no_import_cycles(level: str) -> None:
    assert cycles(graph(level)) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_dependencies_flow_down_the_layers() -> None:
    units = {unit(name) for name in modules()}
    assert units <= set(LAYERS), f"units without a layer (add to LAYERS and ARCHITECTURE.md): {units - set(LAYERS)}"
    upward = sorted(f"{a or 'sparqlqa'} -> {b}" for a, targets in graph("unit").items() for b in targets
                    if LAYERS[b] >= LAYERS[a])
    assert upward == [], "imports against the layers of ARCHITECTURE.md"


def test_few_flat_modules_and_none_too_long() -> None:
    flat = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(flat) <= MAX_FLAT_MODULES, flat
    long = sorted(f"{name} ({n})" for name, path in modules().items()
                  if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES)
    assert long == []


def test_architecture_md_names_every_unit() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    missing = [name for name in LAYERS if name not in ("", "__main__") and f"`{name}" not in text]
    assert missing == []


def constructions(name: str) -> list[str]:
    """``module:function`` of every call ``name(...)`` in the package (docstring examples are not code)."""
    found = []
    for module, path in modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
                    found.append(f"{module}:{function.name}")
    return sorted(set(found))


def test_the_answer_is_built_in_one_place() -> None:
    assert constructions("Answer") == ["sparqlqa.strategies.pipeline:build_answer"]


def test_the_construction_finder_finds_a_call() -> None:
    assert "sparqlqa.stages.answer:ranked" in constructions("cls")
