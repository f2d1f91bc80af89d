"""Untrusted SPARQL is read in a bounded worker (issue 33 item 3): inside a ``bounded`` scope
:func:`read_query` parses in a query worker under the scope's deadline and memory; outside one it reads here."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from sparqlqa.errors import QueryError, QueryTimeout
from sparqlqa.query import query_pool, sparql_reading
from sparqlqa.query.limits import QueryLimits, bounded
from sparqlqa.query.sparql_reading import read_query

DEEP = "SELECT * WHERE " + "{" * 6000 + " ?s ?p ?o " + "}" * 6000
READS = (
    "PREFIX e: <http://ex.org/> SELECT ?s (COUNT(?o) AS ?n) { SERVICE SILENT e:sparql { ?s ?p ?o } }",
    "BASE <http://b.org/> PREFIX r: <rel/> PREFIX x: <http://x.org/> SELECT ?a ?b { ?a x:p ?b SERVICE ?v {} }",
    "SELECT * { BIND(EXISTS{?s ?p ?o}<'a> b' AS ?z) SERVICE <http://127.0.0.1:9/x> { ?x ?y ?w } }",
    "CONSTRUCT { ?s rdfs:label ?l } WHERE { ?s skos:prefLabel ?l }",
)
REFUSED = (DEEP, "DELETE WHERE { ?s ?p ?o }", "SELECT * WHERE { ?s ?p }", "SELECT ?x WHERE { ?x <a> }",
           "PREFIX a: <http://a/>",
           r"SELECT ('\u0027' AS ?x) {}", "SELECT * { ?s ?p ?o } ; DROP ALL")


@pytest.fixture(autouse=True)
def fresh_cache() -> Iterator[None]:
    sparql_reading.clear_cache()
    yield
    sparql_reading.clear_cache()


def _here(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading in this process fails from now on: whatever is read next was read by a worker."""
    def refuse(text: str) -> Any:
        raise AssertionError("read in the caller's process")

    monkeypatch.setattr(sparql_reading, "_read", refuse)


def _refusal(text: str) -> tuple[Any, ...]:
    try:
        read_query(text)
    except QueryError as exc:
        return (type(exc), str(exc), getattr(exc, "hint", None), *(getattr(exc, name, None) for name in
                                                                   ("line", "column", "problem", "parser_message")))
    raise AssertionError(f"not refused: {text!r}")


def test_a_reading_crossing_the_worker_equals_the_one_read_here(monkeypatch: pytest.MonkeyPatch) -> None:
    here = [read_query(text) for text in READS]
    assert here[0].services[0].iri == "http://ex.org/sparql" and here[1].variables == ("a", "b")
    sparql_reading.clear_cache()
    _here(monkeypatch)
    with bounded(QueryLimits(timeout_s=60)):
        assert [read_query(text) for text in READS] == here


def test_the_guards_refusals_cross_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    here = [_refusal(text) for text in REFUSED]
    assert {kind.__name__ for kind, *_ in here} == {"UnreadableQuery", "UpdateRefused", "SparqlSyntaxError",
                                                    "QueryError"}
    _here(monkeypatch)
    with bounded(QueryLimits(timeout_s=60)):
        assert [_refusal(text) for text in REFUSED] == here


def test_the_deep_query_costs_the_caller_no_cpu() -> None:
    start = time.process_time()
    here = _refusal(DEEP)
    in_process = time.process_time() - start
    with bounded(QueryLimits(timeout_s=60)):
        read_query("ASK {}")  # the pool is warm
        start = time.process_time()
        there = _refusal(DEEP)
        in_worker = time.process_time() - start
    assert there == here and "nested too deeply" in here[1]
    assert in_worker < min(0.05, in_process / 3), (in_worker, in_process)


def test_a_text_read_once_is_not_sent_again(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[str] = []
    real = query_pool.read_untrusted

    def counted(text: str, scope: Any) -> Any:
        sent.append(text)
        return real(text, scope)

    monkeypatch.setattr(query_pool, "read_untrusted", counted)
    with bounded(QueryLimits(timeout_s=60)):
        assert read_query(READS[0]) == read_query(READS[0])
    assert read_query(READS[0]).form == "SELECT" and sent == [READS[0]]
    read_query(READS[1])  # outside a scope: read here
    assert sent == [READS[0]]


def test_a_parse_past_the_deadline_is_a_timeout_and_the_next_read_works() -> None:
    with bounded(QueryLimits(timeout_s=60)):
        read_query("ASK {}")
    with bounded(QueryLimits(timeout_s=0.05)), pytest.raises(QueryTimeout):
        read_query(DEEP + " ")
    with bounded(QueryLimits(timeout_s=60)):
        assert read_query(READS[0]).form == "SELECT"


def test_a_worker_that_dies_while_reading_is_a_clean_error() -> None:
    with bounded(QueryLimits(timeout_s=60)):
        read_query("ASK {}")
        worker = query_pool._checker("read")._idle[-1]  # the one the next read takes
        threading.Timer(0.1, worker.process.kill).start()
        with pytest.raises(QueryError, match="ended unexpectedly"):
            read_query(DEEP + "  ")
        assert read_query(READS[2]).services[0].iri == "http://127.0.0.1:9/x"  # a fresh worker reads next
