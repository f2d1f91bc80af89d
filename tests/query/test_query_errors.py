"""Readable SPARQL syntax errors: line, column, caret and a hint for the common mistakes."""

from __future__ import annotations

import pytest

from sparqlqa.errors import SparqlSyntaxError
from sparqlqa.kb.store import OxigraphStore
from sparqlqa.kb.vocab import PREFIXES
from sparqlqa.query.query_errors import snippet, syntax_error, tokens
from sparqlqa.query.sparql_reading import query_with_prefixes


def failure(query: str, prefixes: dict[str, str] | None = None) -> SparqlSyntaxError:
    store = OxigraphStore.in_memory()
    with pytest.raises(SparqlSyntaxError) as caught:
        if prefixes is None:
            store.query(query)
        else:
            query_with_prefixes(store.query, query, prefixes)
    return caught.value


def test_unknown_prefix_is_named_with_the_well_known_iri() -> None:
    error = failure("SELECT ?d WHERE {\n  ?f dbo:director ?d .\n}")
    assert (error.line, error.column, error.problem) == (2, 6, "unknown prefix 'dbo:'")
    assert error.message.splitlines()[1:] == ["  2 |   ?f dbo:director ?d .", "    |      ^"]
    assert error.hint == "declare it before the query: PREFIX dbo: <http://dbpedia.org/ontology/>"


def test_an_unknown_prefix_nobody_knows_gets_the_general_advice() -> None:
    error = failure("SELECT * WHERE { ?s zzz:p ?o }")
    assert error.problem == "unknown prefix 'zzz:'" and "PREFIX zzz: <namespace IRI>" in (error.hint or "")


def test_a_declared_prefix_is_not_blamed() -> None:
    error = failure("PREFIX dbo: <http://dbpedia.org/ontology/>\nSELECT * WHERE { ?s dbo:p ?o ")
    assert error.problem == "this '{' is never closed" and (error.line, error.column) == (2, 16)
    assert error.hint == "add the missing '}'"


def test_extra_closing_brace() -> None:
    error = failure("SELECT * WHERE { ?s ?p ?o }}")
    assert (error.line, error.column, error.problem) == (1, 28, "'}' closes nothing")


def test_parenthesis_left_open_inside_braces() -> None:
    error = failure("SELECT * WHERE { ?s ?p ?x FILTER(?x > 1 }")
    assert (error.column, error.problem) == (33, "this '(' is never closed")
    assert error.hint == "add the missing ')' before the '}' at line 1, column 41"


def test_missing_dot_between_two_patterns() -> None:
    error = failure("SELECT * WHERE {\n  ?s <http://e/a> ?o\n  ?s <http://e/b> ?x }")
    assert (error.line, error.column) == (2, 21) and "'.' seems to be missing" in error.problem
    assert error.hint == "end line 2 with ' .'"


def test_otherwise_the_parser_position_and_a_clean_expected_list() -> None:
    error = failure("SELECT ?x WHERE { ?x ?p ?o } LIMIT x")
    assert (error.line, error.column) == (1, 36)
    assert error.problem.startswith("expected one of") and "[" not in error.problem and "u{" not in error.problem


def test_lines_count_in_the_query_as_written_when_prefixes_were_added() -> None:
    error = failure("SELECT * WHERE {\n  ?s rdfs:label ?l ; dbo:x ?y .\n}", PREFIXES)
    assert (error.line, error.column, error.problem) == (2, 22, "unknown prefix 'dbo:'")
    assert "rdfs" not in error.problem and error.message.splitlines()[1] == "  2 |   ?s rdfs:label ?l ; dbo:x ?y ."


def test_the_added_prefixes_do_not_shift_a_parser_position() -> None:
    error = failure("SELECT ?x WHERE { ?x rdfs:label ?o } LIMIT x", PREFIXES)
    assert (error.line, error.column) == (1, 44)


def test_a_message_without_a_position_is_kept() -> None:
    error = syntax_error("SELECT", SyntaxError("something odd"))
    assert error.message == "invalid SPARQL: something odd" and error.line == 0


def test_tokens_know_their_lines_and_columns() -> None:
    found = [(t.text, t.line, t.column) for t in tokens("# c\nSELECT '''a\nb''' ?x")]
    assert found == [("SELECT", 2, 1), ("'''a\nb'''", 2, 8), ("?x", 3, 6)]


def test_caret_is_clamped_to_the_line() -> None:
    assert snippet("abc", 1, 99).splitlines()[1] == "    |    ^"
