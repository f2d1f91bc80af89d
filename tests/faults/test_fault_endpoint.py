"""Fault suite, endpoint faults: a user's SPARQL endpoint misbehaving in every way we could script.

Small fake servers on 127.0.0.1 (bounded: each answers from a script, or stays silent under a
client timeout).  Each case checks the error names the endpoint, says what happened, retries
only what may pass on a retry, and never lets a traceback or an unbounded read through.
"""

from __future__ import annotations

import json
import socket
import tracemalloc
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from fake_servers import FakeSparqlServer, Scripted
from virtuoso import SAMPLES, OxigraphSparqlServer

from faults.helpers import assert_clean_failure, cli
from sparqlqa.errors import EndpointError
from sparqlqa.kb.knowledge_base import kb_exists
from sparqlqa.remote.endpoint import MAX_RESPONSE_BYTES, EndpointStore

QUERY = "SELECT ?s ?label WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?label }"
ROWS = {"head": {"vars": ["s", "label"]}, "results": {"bindings": [
    {"s": {"type": "uri", "value": "http://e/a"}, "label": {"type": "literal", "value": "A"}}]}}


@pytest.fixture
def server() -> Iterator[FakeSparqlServer]:
    with FakeSparqlServer() as fake:
        yield fake


def store(url: str, **options: Any) -> tuple[EndpointStore, list[float]]:
    """A store with a short timeout, 2 retries and a recorded (not slept) backoff."""
    waits: list[float] = []
    endpoint = EndpointStore(url, **{"timeout": 1.0, "max_retries": 2, "backoff": 0.01, **options})
    endpoint.sleep = waits.append
    return endpoint, waits


def fails(endpoint: EndpointStore, *fragments: str) -> EndpointError:
    with pytest.raises(EndpointError) as err:
        endpoint.select(QUERY)
    text = err.value.full_message()
    assert endpoint.url in text and "Traceback" not in text
    for fragment in fragments:
        assert fragment in text, text
    return err.value


def test_refused() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    endpoint, waits = store(f"http://127.0.0.1:{port}/sparql")
    fails(endpoint, "connection refused", "after 3 attempts")
    assert endpoint.requests_sent == 3 and len(waits) == 2


def test_silent_times_out_within_one_deadline_retries_included() -> None:
    with socket.socket() as silent:  # accepts connections (backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        endpoint, _ = store(f"http://127.0.0.1:{silent.getsockname()[1]}/sparql", timeout=0.3, max_retries=3)
        fails(endpoint, "timed out", "within the 0.3 s timeout")
    assert endpoint.requests_sent == 1  # the attempt spent the deadline: no retry starts after it


@pytest.mark.parametrize("status, retried, fragment", [
    (500, False, "HTTP 500"), (503, True, "HTTP 503"), (502, True, "HTTP 502"), (404, False, "HTTP 404"),
])
def test_server_errors(server: FakeSparqlServer, status: int, retried: bool, fragment: str) -> None:
    server.script(*[Scripted(status, b"<html>down</html>", content_type="text/html")] * 3)
    endpoint, _ = store(server.url)
    fails(endpoint, fragment)
    assert len(server.seen) == (3 if retried else 1)


def test_429_waits_as_asked_then_succeeds(server: FakeSparqlServer) -> None:
    server.script(Scripted(429, b"slow down", headers={"Retry-After": "7"}), Scripted(body=ROWS))
    endpoint, waits = store(server.url, timeout=30.0)
    assert len(endpoint.select(QUERY).rows) == 1
    assert waits == [7.0] and len(server.seen) == 2


def test_429_asking_too_long_a_wait_fails_at_once(server: FakeSparqlServer) -> None:
    server.script(Scripted(429, b"", headers={"Retry-After": "3600"}))
    endpoint, waits = store(server.url)
    fails(endpoint, "HTTP 429", "3600 s")
    assert waits == [] and len(server.seen) == 1


def test_truncated_body_every_time(server: FakeSparqlServer) -> None:
    server.script(*[Scripted(body=ROWS, truncate=True)] * 3)
    endpoint, _ = store(server.url)
    fails(endpoint, "after 3 attempts")
    assert len(server.seen) == 3


def test_html_body_with_200(server: FakeSparqlServer) -> None:
    server.script(Scripted(body="<!DOCTYPE html><html>Login</html>", content_type="text/html"))
    endpoint, _ = store(server.url)
    fails(endpoint, "not SPARQL JSON results", "Login")
    assert len(server.seen) == 1


def test_100_mb_body_announced_is_refused_unread(server: FakeSparqlServer) -> None:
    server.script(Scripted(body=b'{"head": {"vars": ["s"]}, "results": {"bindings": [', stream=100 << 20))
    endpoint, _ = store(server.url)
    assert endpoint.config.max_response_bytes == MAX_RESPONSE_BYTES < 100 << 20
    fails(endpoint, "larger than max_response_bytes", "raise max_response_bytes")
    assert len(server.seen) == 1


def test_100_mb_body_without_length_is_read_only_up_to_the_cap(server: FakeSparqlServer) -> None:
    server.script(Scripted(body=b'{"head": {"vars": ["s"]}, "results": {"bindings": [', stream=100 << 20,
                           no_length=True))
    endpoint, _ = store(server.url, max_response_bytes=4 << 20)
    tracemalloc.start()
    try:
        fails(endpoint, "larger than max_response_bytes")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20  # the 100 MB never sat in memory
    assert len(server.seen) == 1


@pytest.mark.parametrize("body, fragment", [
    ({"head": {"vars": ["s"]}, "results": {"bindings": [{"s": {"type": "uri", "value": "http://e/a"}}]}},
     "lacks variable(s) ?label"),
    ({"head": {}, "results": {"bindings": []}}, "lacks variable(s) ?s, ?label"),
    ({"head": {"vars": ["s", "label"]}, "results": {"bindings": [{"s": {"type": "spaceship", "value": "x"}}]}},
     "not SPARQL JSON results"),
    ({"head": {"vars": ["s", "label"]}}, "not SPARQL JSON results"),
    ([1, 2, 3], "not SPARQL JSON results"),
])
def test_rows_of_an_unexpected_shape(server: FakeSparqlServer, body: Any, fragment: str) -> None:
    server.script(Scripted(body=json.dumps(body)))
    endpoint, _ = store(server.url)
    fails(endpoint, fragment)
    assert len(server.seen) == 1


def test_reordered_or_extra_variables_are_read_in_the_select_order(server: FakeSparqlServer) -> None:
    body = {"head": {"vars": ["extra", "label", "s"]}, "results": {"bindings": [
        {"s": {"type": "uri", "value": "http://e/a"}, "label": {"type": "literal", "value": "A"}}]}}
    server.script(Scripted(body=body))
    result, _ = store(server.url)
    rows = result.select(QUERY)
    assert rows.variables == ["s", "label"] and [t.value for t in rows.rows[0]] == ["http://e/a", "A"]


class DroppingProxy(OxigraphSparqlServer):
    """A real endpoint behind a broken cache: SELECT answers lose their last variable."""

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, body: bytes | None, content_type: str) -> None:
        if content_type == "application/sparql-results+json" and body:
            data = json.loads(body)
            if data.get("head", {}).get("vars"):
                dropped = data["head"]["vars"].pop()
                for row in data["results"]["bindings"]:
                    row.pop(dropped, None)
            body = json.dumps(data).encode()
        OxigraphSparqlServer._send(handler, status, body, content_type)


def test_kbs_add_against_rows_missing_a_variable_fails_clearly() -> None:
    with DroppingProxy(list(SAMPLES.values())) as proxy:
        code, output = cli("kbs", "add", "wd", "--endpoint", proxy.sparql_url, "--profile", "wikidata")
    assert_clean_failure(code, output, EndpointError.exit_code, proxy.sparql_url, "lacks variable")
    assert not kb_exists("wd")
