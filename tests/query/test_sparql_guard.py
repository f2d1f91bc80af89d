"""The read-only guard: updates never reach a store, reads always pass."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pyoxigraph import Literal

from sparqlqa.errors import QueryError, UpdateRefused
from sparqlqa.kb.store import OxigraphStore
from sparqlqa.query.sparql_guard import query_form


@pytest.mark.parametrize("query,form", [
    ("SELECT * WHERE { ?s ?p ?o }", "SELECT"),
    ("prefix ex: <http://e/> ask { ex:a ?p ?o }", "ASK"),
    ("BASE <http://e/> CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", "CONSTRUCT"),
    ("# comment INSERT\nDESCRIBE <http://e/a>", "DESCRIBE"),
    ("SELECT ?delete WHERE { ?delete ?p 'DROP ALL' }", "SELECT"),
])
def test_read_queries(query: str, form: str) -> None:
    assert query_form(query) == form


@pytest.mark.parametrize("query", [
    "INSERT DATA { <http://e/a> <http://e/b> <http://e/c> }",
    "PREFIX ex: <http://e/> DELETE WHERE { ?s ?p ?o }",
    "SELECT * WHERE { ?s ?p ?o } ; DROP ALL",
    "LOAD <http://e/data.ttl>",
    "CLEAR DEFAULT",
    "WITH <http://e/g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }",
])
def test_updates_are_refused(query: str) -> None:
    with pytest.raises(UpdateRefused):
        query_form(query)


def test_update_never_reaches_store() -> None:
    store = OxigraphStore.in_memory()
    with pytest.raises(UpdateRefused):
        store.query("INSERT DATA { <http://e/a> <http://e/b> <http://e/c> }")
    assert len(store) == 0


def test_not_a_query() -> None:
    with pytest.raises(QueryError):
        query_form("hello world")


@given(st.text())
def test_literal_text_cannot_smuggle_an_update(text: str) -> None:
    query = f"SELECT * WHERE {{ ?s ?p {Literal(text)} }}"
    assert query_form(query) == "SELECT"
    OxigraphStore.in_memory().query(query)  # and it is valid SPARQL


# --- compact_iris: full IRIs as prefixed names in saved .rq files, meaning unchanged ----------------

DBO = "http://dbpedia.org/ontology/"


def _rows(query: str) -> list[tuple[str, ...]]:
    import rdflib

    graph = rdflib.Graph()
    graph.parse(data=f"""@prefix dbo: <{DBO}> . @prefix ex: <http://example.org/> .
        ex:alien dbo:director ex:scott ; dbo:title "<{DBO}title>" . ex:scott dbo:name "Ridley Scott" .""",
                format="turtle")
    return sorted(tuple(str(term) for term in row) for row in graph.query(query))


def test_compact_iris_keeps_the_meaning_and_declares_what_it_used() -> None:
    from sparqlqa.query.sparql_rewrite import compact_iris

    query = (f'SELECT ?d ?t WHERE {{ ?f <{DBO}director> ?d . ?f <{DBO}title> ?t . '
             f'FILTER(?t != "<{DBO}director>") # <{DBO}x>\n}}')
    compacted, used = compact_iris(query, {"dbo": DBO, "d": "http://dbpedia.org/"})
    assert used == {"dbo": DBO} and "dbo:director" in compacted and "dbo:title" in compacted
    assert f'"<{DBO}director>"' in compacted  # a string as written (a comment's IRI may be compacted)
    declared = "".join(f"PREFIX {name}: <{iri}>\n" for name, iri in used.items())
    assert _rows(declared + compacted) == _rows(query) != []


@given(st.text(max_size=30))
@example("PREFIX")  # a keyword inside a string is no declaration: the query is still compacted
def test_compact_iris_never_touches_a_string(text: str) -> None:
    from pyoxigraph import Literal

    from sparqlqa.query.sparql_rewrite import compact_iris

    literal = str(Literal(f"<{DBO}{text}>"))
    query = f"SELECT * WHERE {{ ?s <{DBO}name> {literal} }}"
    compacted, _ = compact_iris(query, {"dbo": DBO})
    assert compacted == f"SELECT * WHERE {{ ?s dbo:name {literal} }}"


def test_compact_iris_leaves_odd_locals_and_declared_queries_alone() -> None:
    from sparqlqa.query.sparql_rewrite import compact_iris

    odd = f"SELECT * WHERE {{ ?s <{DBO}a.b> ?o . ?s <{DBO}> ?o . ?s <{DBO}x%20y> ?o }}"
    assert compact_iris(odd, {"dbo": DBO}) == (odd, {})
    declared = f"PREFIX dbo: <http://other/>\nSELECT * WHERE {{ ?s <{DBO}name> ?o }}"
    assert compact_iris(declared, {"dbo": DBO}) == (declared, {})
