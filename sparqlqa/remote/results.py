"""An endpoint's answer → :class:`~sparqlqa.kb.store.QueryResult`: SPARQL JSON results, booleans, RDF.

Terms become the pyoxigraph terms the local store returns, so every stage downstream runs
unchanged.  An answer of the wrong shape is a :class:`~sparqlqa.net.call.CallFailure`
whose message says what arrived — the content type, the first bytes and, for JSON, which key
is missing or of the wrong kind — instead of guessing at a cause.

>>> parse_json_results(b'{"head": {}, "boolean": true}', "ASK {}", "ASK").boolean
True
>>> try:
...     parse_json_results(b'{"head": {"vars": ["s"]}}', "SELECT ?s {}", "SELECT", "application/json")
... except CallFailure as failure:
...     print(failure.message.replace("; ", ";\\n"))
the answer is not SPARQL JSON results: key 'results' is missing (the object has: head);
received application/json, 25 bytes: {"head": {"vars": ["s"]}}
"""

from __future__ import annotations

__all__ = ["json_term", "parse_graph", "parse_json_results", "received"]

import json
from typing import Any

from pyoxigraph import BlankNode, Literal, NamedNode, RdfFormat, Triple, parse

from sparqlqa.kb.store import QueryResult, Term
from sparqlqa.kb.vocab import TEXT_DATATYPES
from sparqlqa.net import CallFailure, excerpt
from sparqlqa.query.sparql_guard import projected_variables

ENDPOINT_HINT = "check that the URL is a SPARQL endpoint (a proxy, login page or cache may answer in its place)"


class Malformed(ValueError):
    """Raised inside parsing: what is wrong with the shape (``received`` is added by the caller)."""


def received(body: bytes, content_type: str, size: int = 120) -> str:
    """``received TYPE, N bytes: FIRST BYTES`` (what an error about an answer's shape shows).

    >>> received(b"<html>Login</html>", "text/html")
    'received text/html, 18 bytes: <html>Login</html>'
    """
    head = f"received {content_type or 'no content type'}, {len(body):,} bytes"
    return f"{head}: {excerpt(body, size) or '(empty)'}" if size > 0 else head


def _malformed(why: str, body: bytes, content_type: str) -> CallFailure:
    return CallFailure(f"the answer is not SPARQL JSON results: {why}; {received(body, content_type)}",
                       retryable=False, hint=ENDPOINT_HINT)


def _named(value: str) -> NamedNode:
    try:
        return NamedNode(value)
    except ValueError:
        from urllib.parse import quote

        return NamedNode(quote(value, safe=":/?#[]@!$&'()*+,;=%~"))


def _blank(value: str) -> BlankNode:
    try:
        return BlankNode(value)
    except ValueError:  # Virtuoso sends "nodeID://b1234"
        import hashlib

        return BlankNode("b" + hashlib.sha1(value.encode("utf-8")).hexdigest()[:24])


def _literal(value: dict[str, Any]) -> Literal:
    text = str(value.get("value", ""))
    language = value.get("xml:lang") or value.get("lang")
    if language:
        try:
            return Literal(text, language=str(language))
        except ValueError:
            return Literal(text)
    datatype = value.get("datatype")
    if datatype and datatype not in TEXT_DATATYPES:
        return Literal(text, datatype=_named(str(datatype)))
    return Literal(text)


def json_term(value: Any) -> Term:
    """One SPARQL JSON results term → the pyoxigraph term the local store would return.

    >>> json_term({"type": "literal", "value": "Alien", "xml:lang": "en"}) == Literal("Alien", language="en")
    True
    """
    if not isinstance(value, dict):
        raise Malformed(f"a term is {_kind(value)}, not an object with 'type' and 'value'")
    kind = value.get("type")
    if kind == "uri":
        return _named(str(value.get("value", "")))
    if kind == "bnode":
        return _blank(str(value.get("value", "")))
    if kind in ("literal", "typed-literal"):
        return _literal(value)
    if kind == "triple":
        inner = value.get("value")
        if not isinstance(inner, dict) or not {"subject", "predicate", "object"} <= set(inner):
            raise Malformed("a quoted triple lacks its subject, predicate or object")
        return Triple(json_term(inner["subject"]), json_term(inner["predicate"]),  # type: ignore[arg-type]
                      json_term(inner["object"]))
    raise Malformed(f"unknown term type {kind!r}" if "type" in value else "a term has no 'type'")


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _key(data: dict[str, Any], key: str, kind: type, where: str = "the object") -> Any:
    """``data[key]``, which must be of ``kind``; :class:`Malformed` naming the key otherwise."""
    if key not in data:
        has = ", ".join(sorted(map(str, data))) or "no keys"
        raise Malformed(f"key {key!r} is missing ({where} has: {has})")
    if not isinstance(data[key], kind):
        raise Malformed(f"key {key!r} is {_kind(data[key])}, not {_kind(kind())}")
    return data[key]


def _ask_boolean(data: dict[str, Any]) -> bool:
    """ASK's answer; Virtuoso sometimes answers as one ``__ASK_RETVAL`` row instead of ``boolean``."""
    if "boolean" in data:
        return bool(_key(data, "boolean", bool))
    if "results" not in data:
        raise Malformed("key 'boolean' is missing, as is 'results' (the object has: "
                        + (", ".join(sorted(map(str, data))) or "no keys") + ")")
    bindings = _key(_key(data, "results", dict), "bindings", list, "'results'")
    for row in bindings:
        for term in (row.values() if isinstance(row, dict) else ()):
            return str(term.get("value", "") if isinstance(term, dict) else term).lower() in ("1", "true")
    return False


def _rows(data: dict[str, Any], variables: list[str]) -> list[tuple[Term | None, ...]]:
    bindings = _key(_key(data, "results", dict), "bindings", list, "'results'")
    rows = []
    for number, row in enumerate(bindings, 1):
        if not isinstance(row, dict):
            raise Malformed(f"row {number} is {_kind(row)}, not an object")
        try:
            rows.append(tuple(json_term(row[v]) if v in row else None for v in variables))
        except Malformed as exc:
            raise Malformed(f"row {number}: {exc}") from None
    return rows


def parse_json_results(body: bytes, sparql: str, form: str, content_type: str = "") -> QueryResult:
    """SPARQL 1.1 JSON results → :class:`QueryResult` (a :class:`CallFailure` when malformed or cut short)."""
    if not body.strip():
        raise CallFailure(f"the answer is empty ({received(body, content_type)})", retryable=True,
                          hint="the endpoint may have failed mid-answer; try again later")
    if body.lstrip()[:1] not in (b"{", b"["):
        raise CallFailure(f"the answer is not SPARQL JSON results: {excerpt(body, 120)} "
                          f"({received(body, content_type, 0)})", retryable=False,
                          hint=ENDPOINT_HINT)
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CallFailure(f"truncated or invalid JSON in the answer ({exc}; {received(body, content_type)})",
                          retryable=True, hint="the connection may have been cut; try again later") from exc
    try:
        if not isinstance(data, dict):
            raise Malformed(f"the answer is {_kind(data)}, not an object")
        if form == "ASK":
            return QueryResult(query=sparql, form=form, boolean=_ask_boolean(data))
        variables = _result_variables(data, sparql)
        rows = _rows(data, variables)
    except Malformed as exc:
        raise _malformed(str(exc), body, content_type) from None
    return QueryResult(query=sparql, form=form, variables=variables, rows=rows)


def _result_variables(data: dict[str, Any], sparql: str) -> list[str]:
    """The answer's variables in the SELECT's order; a :class:`CallFailure` when the answer lacks one.

    An answer whose rows have fewer variables than the query asked for (a broken proxy or
    cache can send one) would break every caller that unpacks rows.
    """
    head = data.get("head") or {}
    if not isinstance(head, dict) or not isinstance(head.get("vars", []), list):
        raise Malformed("key 'head' holds no list 'vars'")
    given = [str(v) for v in head.get("vars", [])]
    asked = projected_variables(sparql)
    if asked is None:
        return given
    missing = [v for v in asked if v not in given]
    if missing:
        raise CallFailure("the answer lacks variable(s) " + ", ".join("?" + v for v in missing)
                          + " asked for by the SELECT (it has: " + (", ".join("?" + v for v in given) or "none") + ")",
                          retryable=False, hint="a proxy or cache in front of the endpoint may be altering answers; "
                          "check the endpoint URL")
    return asked


def parse_graph(body: bytes, content_type: str, form: str = "CONSTRUCT") -> list[Triple]:
    """A CONSTRUCT/DESCRIBE answer (N-Triples, Turtle, RDF/XML, JSON-LD) → triples."""
    media = content_type.split(";")[0].strip().lower()
    fmt = RdfFormat.from_media_type(media) if media else None
    if fmt is None or fmt in (RdfFormat.N_QUADS, RdfFormat.TRIG):
        fmt = RdfFormat.TURTLE  # N-Triples is Turtle too
    try:
        return [Triple(q.subject, q.predicate, q.object) for q in parse(body, format=fmt)]
    except SyntaxError as exc:
        looks_like_rdf = media in ("", "text/turtle", "application/n-triples", "application/rdf+xml",
                                   "application/ld+json", "text/plain")
        raise CallFailure(f"the answer to a {form} is not valid {fmt.name} ({exc}; {received(body, content_type)})",
                          retryable=looks_like_rdf and bool(body.strip()),
                          hint="the answer may have been cut short: try again" if looks_like_rdf else
                          ENDPOINT_HINT) from exc
