"""Endpoint answers → QueryResult; every malformed shape says what arrived."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pyoxigraph import Literal, NamedNode

from sparqlqa.net import CallFailure
from sparqlqa.remote.results import json_term, parse_graph, parse_json_results, received

SELECT = "SELECT ?s ?o WHERE { ?s ?p ?o }"


def failure(body: bytes, form: str = "SELECT", content_type: str = "application/json") -> CallFailure:
    with pytest.raises(CallFailure) as caught:
        parse_json_results(body, SELECT if form == "SELECT" else "ASK {}", form, content_type)
    return caught.value


def test_rows_in_the_select_order_and_unbound_values() -> None:
    body = {"head": {"vars": ["o", "s"]}, "results": {"bindings": [
        {"s": {"type": "uri", "value": "http://e/a"}}, {"o": {"type": "literal", "value": "x", "xml:lang": "en"}}]}}
    result = parse_json_results(json.dumps(body).encode(), SELECT, "SELECT")
    assert result.variables == ["s", "o"]
    assert result.rows == [(NamedNode("http://e/a"), None), (None, Literal("x", language="en"))]


@pytest.mark.parametrize("data, form, fragments", [
    ({"boolean": True}, "ASK", []),
    ({"head": {"vars": ["__ASK_RETVAL"]}, "results": {"bindings": [{"r": {"type": "literal", "value": "1"}}]}},
     "ASK", []),
    ({"head": {}}, "ASK", ["key 'boolean' is missing, as is 'results' (the object has: head)"]),
    ({"boolean": 1}, "ASK", ["key 'boolean' is a number, not a boolean"]),
    ({"head": {"vars": ["s", "o"]}}, "SELECT", ["key 'results' is missing (the object has: head)"]),
    ({"head": {"vars": ["s", "o"]}, "results": {"bindings": {}}}, "SELECT",
     ["key 'bindings' is an object, not an array"]),
    ({"head": {"vars": ["s", "o"]}, "results": {"bindings": [[]]}}, "SELECT", ["row 1 is an array, not an object"]),
    ({"head": {"vars": ["s", "o"]}, "results": {"bindings": [{}, {"s": {"value": "x"}}]}}, "SELECT",
     ["row 2: a term has no 'type'"]),
    ({"head": {"vars": "s o"}, "results": {"bindings": []}}, "SELECT", ["key 'head' holds no list 'vars'"]),
    ({"head": {"vars": ["s"]}, "results": {"bindings": []}}, "SELECT", ["lacks variable(s) ?o"]),
])
def test_shapes(data: Any, form: str, fragments: list[str]) -> None:
    body = json.dumps(data).encode()
    if not fragments:
        assert parse_json_results(body, "ASK {}", form).boolean is True
        return
    message = failure(body, form).message
    for fragment in fragments:
        assert fragment in message
    if "lacks" not in message:
        assert f"received application/json, {len(body)} bytes: {body.decode()[:60]}" in message


def test_not_json_empty_and_cut_short() -> None:
    html = failure(b"<!DOCTYPE html><p>Login", content_type="text/html")
    assert html.message == ("the answer is not SPARQL JSON results: <!DOCTYPE html><p>Login "
                            "(received text/html, 23 bytes)") and not html.retryable
    assert failure(b"[1, 2]").message.startswith("the answer is not SPARQL JSON results: the answer is an array")
    empty = failure(b"  ", content_type="")
    assert "the answer is empty (received no content type, 2 bytes" in empty.message and empty.retryable
    cut = failure(b'{"head": {"vars": ["s"]}, "res')
    assert "truncated or invalid JSON" in cut.message and cut.retryable


def test_graph_answers() -> None:
    [triple] = parse_graph(b"<http://a> <http://b> <http://c> .", "application/n-triples")
    assert triple.subject == NamedNode("http://a")
    with pytest.raises(CallFailure, match="not valid Turtle") as caught:
        parse_graph(b"<html>Login</html>", "text/html", "DESCRIBE")
    assert "the answer to a DESCRIBE" in caught.value.message and "received text/html" in caught.value.message
    assert not caught.value.retryable


def test_terms_and_received() -> None:
    assert json_term({"type": "typed-literal", "value": "1",
                      "datatype": "http://www.w3.org/2001/XMLSchema#integer"}) == Literal(1)
    assert received(b"abc", "text/plain", 0) == "received text/plain, 3 bytes"
    assert received(b"a\n b", "") == "received no content type, 4 bytes: a b"
