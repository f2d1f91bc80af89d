"""Serialise :class:`~sparqlqa.kb.store.QueryResult` as SPARQL 1.1 JSON, CSV, TSV or a table.

>>> from pyoxigraph import Literal, NamedNode
>>> from sparqlqa.kb.store import QueryResult
>>> result = QueryResult(query="", form="SELECT", variables=["x", "n"],
...                      rows=[(NamedNode("http://e/a"), Literal("1"))])
>>> print(to_csv(result), end="")
x,n
http://e/a,1
>>> to_tsv(result).splitlines()
['?x\\t?n', '<http://e/a>\\t"1"']
"""

from __future__ import annotations

__all__ = ["FORMATTERS", "format_result", "shorten", "term_to_json", "to_csv", "to_json", "to_ntriples", "to_rdf",
           "to_tsv"]

import csv
import io
import json
from collections.abc import Callable
from typing import Any

from pyoxigraph import BlankNode, Literal, NamedNode, RdfFormat, Triple, serialize

from sparqlqa.errors import ConfigError
from sparqlqa.kb.store import QueryResult, Term
from sparqlqa.kb.vocab import XSD_STRING


def term_to_json(term: Term) -> dict[str, Any]:
    """A term in the SPARQL 1.1 JSON results encoding."""
    if isinstance(term, NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, BlankNode):
        return {"type": "bnode", "value": term.value}
    if isinstance(term, Literal):
        out: dict[str, Any] = {"type": "literal", "value": term.value}
        if term.language:
            out["xml:lang"] = term.language
        elif term.datatype.value != XSD_STRING:
            out["datatype"] = term.datatype.value
        return out
    if isinstance(term, Triple):
        return {"type": "triple", "value": {"subject": term_to_json(term.subject),
                                            "predicate": term_to_json(term.predicate),
                                            "object": term_to_json(term.object)}}
    raise TypeError(f"not an RDF term: {term!r}")


def to_json(result: QueryResult) -> str:
    if result.form == "ASK":
        return json.dumps({"head": {}, "boolean": result.boolean})
    if result.form != "SELECT":
        triples = [{k: term_to_json(getattr(t, k)) for k in ("subject", "predicate", "object")}
                   for t in result.triples]
        return json.dumps({"triples": triples}, ensure_ascii=False)
    bindings = [{var: term_to_json(term) for var, term in zip(result.variables, row) if term is not None}
                for row in result.rows]
    return json.dumps({"head": {"vars": result.variables}, "results": {"bindings": bindings}},
                      ensure_ascii=False)


def to_ntriples(result: QueryResult) -> str:
    return "".join(f"{t.subject} {t.predicate} {t.object} .\n" for t in result.triples)


def _plain(term: Term | None) -> str:
    if term is None:
        return ""
    if isinstance(term, BlankNode):
        return f"_:{term.value}"
    return term.value if isinstance(term, (NamedNode, Literal)) else str(term)


def to_csv(result: QueryResult) -> str:
    if result.form == "ASK":
        return f"boolean\n{str(result.boolean).lower()}\n"
    if result.form != "SELECT":
        return to_ntriples(result)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(result.variables)
    for row in result.rows:
        writer.writerow([_plain(term) for term in row])
    return buffer.getvalue()


def to_tsv(result: QueryResult) -> str:
    if result.form == "ASK":
        return f"?boolean\n{str(result.boolean).lower()}\n"
    if result.form != "SELECT":
        return to_ntriples(result)
    lines = ["\t".join(f"?{v}" for v in result.variables)]
    for row in result.rows:
        lines.append("\t".join("" if term is None else str(term) for term in row))
    return "\n".join(lines) + "\n"


def shorten(term: Term | None, prefixes: dict[str, str]) -> str:
    """A compact display form: ``rdfs:label``, ``"text"@en``, ``<iri>`` when no prefix fits."""
    if term is None:
        return ""
    if isinstance(term, NamedNode):
        best = max((ns for ns in prefixes.values() if term.value.startswith(ns)), key=len, default=None)
        if best is not None:
            prefix = next(p for p, ns in prefixes.items() if ns == best)
            return f"{prefix}:{term.value[len(best):]}"
        return f"<{term.value}>"
    if isinstance(term, Literal):
        return term.value if term.datatype.value == XSD_STRING and not term.language else str(term)
    return str(term)


FORMATTERS: dict[str, Callable[[QueryResult], str]] = {"json": to_json, "csv": to_csv, "tsv": to_tsv}
#: formats for the triples of a CONSTRUCT or DESCRIBE result (``sparql --format``)
GRAPH_FORMATS: dict[str, RdfFormat] = {"nt": RdfFormat.N_TRIPLES, "turtle": RdfFormat.TURTLE,
                                       "jsonld": RdfFormat.JSON_LD}


def to_rdf(result: QueryResult, fmt: str, prefixes: dict[str, str] | None = None) -> str:
    """A CONSTRUCT/DESCRIBE result's triples as N-Triples, Turtle (with ``prefixes``) or JSON-LD.

    >>> from pyoxigraph import Literal, NamedNode, Triple
    >>> result = QueryResult(query="", form="CONSTRUCT",
    ...                      triples=[Triple(NamedNode("http://e/a"), NamedNode("http://e/p"), Literal("x"))])
    >>> print(to_rdf(result, "turtle", {"e": "http://e/"}), end="")
    @prefix e: <http://e/> .
    e:a e:p "x" .
    """
    if result.form in ("SELECT", "ASK"):
        raise ConfigError(f"--format {fmt} writes the triples of a CONSTRUCT or DESCRIBE query; this is {result.form}",
                          hint="use --format table, json, csv or tsv for SELECT and ASK")
    syntax = GRAPH_FORMATS[fmt]
    data = serialize(result.triples, None, syntax, prefixes=prefixes if syntax == RdfFormat.TURTLE else None)
    return (data or b"").decode("utf-8")


def format_result(result: QueryResult, fmt: str, prefixes: dict[str, str]) -> str:
    """``result`` in ``sparql --format`` ``fmt``: json, csv, tsv (any query), nt, turtle, jsonld (graphs)."""
    if fmt in GRAPH_FORMATS:
        return to_rdf(result, fmt, prefixes)
    return FORMATTERS[fmt](result)
