"""The read-only guard: updates never reach a store, reads always pass."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyoxigraph import Literal

from sparqlqa.errors import QueryError, UpdateRefused
from sparqlqa.kb.sparql_guard import query_form
from sparqlqa.kb.store import OxigraphStore


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
