"""Rewrites checked by the one reading: an endpoint's LIMIT and a saved query's prefixed names.

Each rewrite is proposed without a lexer and kept only where the parser reads the result as the same query;
these tests build queries with decoys (the words LIMIT and VALUES in strings and comments, a sub-query's
LIMIT, a closing VALUES block, IRIs inside strings) and check the result against Oxigraph's answers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode, Quad, Store

from sparqlqa.query.sparql_reading import read_query
from sparqlqa.query.sparql_rewrite import compact_iris, with_limit

E = "http://e.org/"
ROOT = Path(__file__).resolve().parents[2]


def _store() -> Store:
    store = Store()
    for n in range(6):
        store.add(Quad(NamedNode(f"{E}s{n}"), NamedNode(f"{E}p"), Literal(f"LIMIT {n} VALUES <{E}p>")))
    return store


def _rows(store: Store, query: str) -> list[tuple[str, ...]]:
    return sorted(tuple(str(term) for term in row) for row in store.query(query))  # type: ignore[union-attr]


#: pieces of a WHERE clause, each a decoy for a text reader
PIECES = (
    f"?s <{E}p> ?o .",
    "?s ?p 'LIMIT 3' .",
    '?s ?p """VALUES ?s { 1 }""" .',
    "# LIMIT 4 VALUES ?s {}\n",
    f"{{ SELECT ?s {{ ?s <{E}p> ?x }} LIMIT 5 }}",
    "FILTER(?o != 'VALUES')",
    "OPTIONAL { ?s ?q ?r }",
)
TAILS = ("", " LIMIT 2", " ORDER BY ?s", f" VALUES ?s {{ <{E}s1> <{E}s2> }}", " # VALUES ?s { 1 }",
         f" LIMIT 9 VALUES ?s {{ <{E}s1> }}", " OFFSET 1")


@pytest.fixture(scope="module", autouse=True)
def _parser_started() -> None:
    """The parser thread raises the recursion limit when it starts: before hypothesis watches it."""
    read_query("ASK {}")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=4), st.sampled_from(TAILS))
def test_with_limit_sets_the_top_level_limit_and_keeps_the_rows(pieces: list[str], tail: str) -> None:
    query = f"SELECT ?s WHERE {{ {' '.join(pieces)} }}{tail}"
    original = read_query(query)
    limited = with_limit(query, 1000)
    reading = read_query(limited)
    assert reading.meaning == original.meaning
    assert reading.limit == (original.limit if original.limit is not None else 1000)
    store = _store()
    assert _rows(store, limited) == _rows(store, query)  # 1000 is more than the rows: the same answer


def test_with_limit_puts_it_before_a_closing_values_block_not_inside_a_string() -> None:
    query = f"SELECT ?s {{ ?s ?p 'x VALUES y' }} VALUES ?s {{ <{E}a> }} # VALUES ?t {{ 1 }}"
    expected = f"SELECT ?s {{ ?s ?p 'x VALUES y' }} LIMIT 7\nVALUES ?s {{ <{E}a> }} # VALUES ?t {{ 1 }}"
    assert with_limit(query, 7) == expected
    assert with_limit("ASK { ?s ?p ?o }", 7) == "ASK { ?s ?p ?o }"


def test_compact_iris_keeps_what_oxigraph_answers() -> None:
    query = (f'SELECT ?s ?o WHERE {{ ?s <{E}p> ?o . FILTER(?o != "<{E}p>") '
             f'FILTER(datatype(?o) = <http://www.w3.org/2001/XMLSchema#string>) }} # <{E}p>\n')
    compacted, used = compact_iris(query, {"e": E, "xsd": "http://www.w3.org/2001/XMLSchema#"})
    assert "e:p ?o" in compacted and f'"<{E}p>"' in compacted and "xsd:string" in compacted
    declared = "".join(f"PREFIX {name}: <{iri}>\n" for name, iri in used.items())
    store = _store()
    assert _rows(store, declared + compacted) == _rows(store, query) != []


def test_compact_iris_leaves_an_unreadable_query_as_written() -> None:
    broken = f"SELECT * WHERE {{ ?s <{E}p> ?o "
    assert compact_iris(broken, {"e": E}) == (broken, {})


def test_only_text_the_parser_cannot_read_or_an_llm_wrote_is_lexed() -> None:
    """The lexical splitters (``query/sparql_text.py``) read a syntax error's text and an LLM's query: no other
    module imports them, so no query sparqlqa writes is read back by a lexer."""
    importers = set()
    for path in (ROOT / "sparqlqa").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(node, ast.ImportFrom) and node.module == "sparqlqa.query.sparql_text"
               for node in ast.walk(tree)):
            importers.add(path.relative_to(ROOT).as_posix())
    assert importers == {"sparqlqa/query/query_errors.py", "sparqlqa/strategies/text2sparql/query.py"}
