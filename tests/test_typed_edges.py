"""A ratchet on untyped results: ``dict[str, Any]`` stays at the JSON edge and does not spread.

Public results are dataclasses (ARCHITECTURE.md, "typed results"); a ``dict[str, Any]`` is allowed where JSON
itself is handled: the serialisers (``to_dict`` / ``from_dict`` / ``to_json`` / ``from_json``, not counted)
and the edge modules of :data:`EDGE_MODULES`.  Everywhere else each package has a budget: what is left
today.  The test fails when a package exceeds it; when you remove some, lower its number.
"""

from __future__ import annotations

import ast
from collections import Counter

from test_architecture import PACKAGE, modules, unit

UNTYPED = "dict[str, Any]"
#: the methods that turn a typed object into its JSON form and back
SERIALISERS = frozenset({"to_dict", "from_dict", "to_json", "from_json"})
#: modules that are the JSON edge themselves, and why
EDGE_MODULES: dict[str, str] = {
    "sparqlqa.llm.anthropic_backend": "LLM API request and response bodies",
    "sparqlqa.llm.openai_backend": "LLM API request and response bodies",
    "sparqlqa.llm.cache": "the LLM cache's JSONL records, read and written",
    "sparqlqa.llm.structured": "JSON schemas and the JSON an LLM returns",
    "sparqlqa.serve.app": "HTTP request and response bodies",
    "sparqlqa.serve.mcp_server": "MCP tool results (JSON)",
    "sparqlqa.serve.mcp_stdio": "MCP messages (JSON-RPC)",
    "sparqlqa.serve.service": "the bodies the HTTP API and the MCP tools return",
    "sparqlqa.serve.connections": "the connections file (JSON on disk)",
    "sparqlqa.remote.results": "SPARQL JSON results from an endpoint",
    "sparqlqa.net.transport": "HTTP requests and answers",
    "sparqlqa.kb.results_format": "SPARQL results written as JSON",
}
#: ``dict[str, Any]`` outside serialisers and edge modules, per package: never more (before issue 25's
#: typed results: cli 10, evaluation 43, kb 9, stages 11, strategies 23, vectors 12; 146 in all).  strategies 9
#: (16 before the offline strategy's reasons became ``OfflineReasons``, ``Answer.meta.offline``): includes
#: text2sparql's JSON schema for the LLM (an API payload, as the triplet and FiSKE schemas are); kb 9: a KB
#: group's manifest entry (``extra["group"]``, written to disk as JSON)
BUDGET: dict[str, int] = {
    "cli": 7, "embed": 2, "evaluation": 8, "ingest": 15, "kb": 9, "llm": 10, "remote": 8, "stages": 7,
    "strategies": 9, "text_input": 1, "vectors": 4,
}


def untyped_in(source: str) -> int:
    """``dict[str, Any]`` in ``source`` outside its serialisers."""
    skipped: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in SERIALISERS:
            skipped.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return sum(line.count(UNTYPED) for number, line in enumerate(source.splitlines(), start=1)
               if number not in skipped)


def untyped_by_package() -> Counter[str]:
    counts: Counter[str] = Counter()
    for name, path in modules().items():
        if name not in EDGE_MODULES:
            counts[unit(name) or "sparqlqa"] += untyped_in(path.read_text(encoding="utf-8"))
    return +counts


def test_untyped_dicts_do_not_spread() -> None:
    grown = {package: f"{count} > {BUDGET.get(package, 0)}" for package, count in untyped_by_package().items()
             if count > BUDGET.get(package, 0)}
    assert grown == {}, ("new dict[str, Any] outside the JSON edge: return a dataclass (with to_dict() for the "
                         "JSON form), or name the module in EDGE_MODULES with the reason")


def test_the_edge_modules_exist() -> None:
    assert [name for name in EDGE_MODULES if name not in modules()] == []
    assert (PACKAGE / "kb" / "records.py").is_file()


def test_the_counter_counts_outside_serialisers_only() -> None:
    source = ("from typing import Any\n"
              "def report() -> dict[str, Any]:\n    return {}\n"
              "class R:\n    def to_dict(self) -> dict[str, Any]:\n        data: dict[str, Any] = {}\n"
              "        return data\n"
              "x: list[dict[str, Any]] = []\n")
    assert untyped_in(source) == 2
