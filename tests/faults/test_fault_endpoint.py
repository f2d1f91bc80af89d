"""Fault suite, endpoint faults: a user's SPARQL endpoint misbehaving in every way we could script.

Small fake servers on 127.0.0.1 (bounded: each answers from a script, or stays silent under a
client timeout).  Each case checks the error names the endpoint, says what happened, retries
only what may pass on a retry, and never lets a traceback or an unbounded read through.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from fake_servers import FakeSparqlServer, LoopbackHTTP, Scripted
from virtuoso import SAMPLES, OxigraphSparqlServer

from faults.helpers import assert_clean_failure, cli
from sparqlqa.errors import EndpointError
from sparqlqa.kb.knowledge_base import kb_exists
from sparqlqa.remote.endpoint import MAX_RESPONSE_BYTES, EndpointStore
from sparqlqa.remote.profiles import profile_file

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


# -- one deadline per call, whatever the server does (issue 24) ---------------------------------


class SilentListener:
    """Accepts connections on 127.0.0.1, reads nothing, answers nothing; counts them (a context manager)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.05)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/sparql"
        self.accepted: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                self.accepted.append(self.sock.accept()[0])
            except OSError:
                continue

    def __enter__(self) -> SilentListener:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        for conn in self.accepted:
            conn.close()
        self.sock.close()


@pytest.mark.parametrize("command", [
    ["ask", "--endpoint", "{url}", "who directed Alien", "--timeout", "1"],
    ["kbs", "add", "wd", "--endpoint", "{url}", "--timeout", "1"],
])
def test_a_silent_endpoint_fails_within_the_timeout(command: list[str]) -> None:
    with SilentListener() as silent:
        code, output = cli(*[part.format(url=silent.url) for part in command])
        connections = len(silent.accepted)
    assert_clean_failure(code, output, EndpointError.exit_code, silent.url, "within the 1 s timeout", "--timeout")
    assert connections == 1  # the one attempt spent the deadline: no retry after it
    assert not kb_exists("wd")


def test_the_profile_sets_the_timeout_and_the_option_overrides_it(tmp_path: Path) -> None:
    profile = tmp_path / "slow.toml"
    generic = profile_file("generic").read_text("utf-8")
    profile.write_text(generic.replace('name = "generic"', 'name = "slow"') + "\n[endpoint]\ntimeout = 0.5\n")
    with SilentListener() as silent:
        code, output = cli("ask", "--endpoint", silent.url, "--profile", str(profile), "who")
        assert_clean_failure(code, output, EndpointError.exit_code, "within the 0.5 s timeout")
        code, output = cli("ask", "--endpoint", silent.url, "--profile", str(profile), "who", "--timeout", "0.7")
        assert_clean_failure(code, output, EndpointError.exit_code, "within the 0.7 s timeout")


class DripServer(LoopbackHTTP):
    """Sends headers, then one byte of the body every 0.1 s for up to a minute (a stalling endpoint)."""

    def __init__(self) -> None:
        super().__init__(self._drip)

    @staticmethod
    def _drip(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/sparql-results+json")
        handler.send_header("Content-Length", "100000")
        handler.end_headers()
        try:
            for _ in range(600):
                handler.wfile.write(b" ")
                handler.wfile.flush()
                time.sleep(0.1)
        except OSError:  # the client hung up at its deadline
            pass


def test_a_dripping_answer_is_cut_at_the_deadline() -> None:
    with DripServer() as drip:
        endpoint, _ = store(f"http://127.0.0.1:{drip.port}/sparql", timeout=0.5)
        fails(endpoint, "within the 0.5 s timeout")
    assert endpoint.requests_sent == 1


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize("other", ["127.0.0.1:{port}", "localhost:{port}"])
def test_a_redirect_to_another_host_is_refused(server: FakeSparqlServer, method: str, other: str) -> None:
    with FakeSparqlServer() as elsewhere:
        target = f"http://{other.format(port=elsewhere.http.port)}/sparql"
        server.script(Scripted(307, b"", headers={"Location": target}))
        endpoint, _ = store(server.url, method=method)
        error = fails(endpoint, "redirected (HTTP 307)", f"127.0.0.1:{server.http.port}",
                      urlsplit(target).netloc, "refused")
        assert elsewhere.seen == []  # the query (a POST body too) never reached the other host
    assert len(server.seen) == 1 and error.hint and target in error.hint


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_redirect_within_the_host_is_followed_once(server: FakeSparqlServer, method: str) -> None:
    server.script(Scripted(307, b"", headers={"Location": "/moved/sparql"}), Scripted(body=ROWS))
    endpoint, _ = store(server.url, method=method)
    assert len(endpoint.select(QUERY).rows) == 1
    first, second = server.seen
    assert second.path.split("?")[0] == "/moved/sparql" and second.method == method
    if method == "POST":  # the same body, once more, to the same host (a GET follows the Location as given)
        assert second.body == first.body and second.params()["query"] == [QUERY + "\nLIMIT 10000"]


def test_a_redirect_loop_ends(server: FakeSparqlServer) -> None:
    server.script(*[Scripted(302, b"", headers={"Location": "/sparql"})] * 10)
    endpoint, _ = store(server.url)
    fails(endpoint, "more than 5 redirects")
    assert len(server.seen) == 6


@pytest.mark.parametrize("query, body, content_type, fragments", [
    ("ASK { ?s ?p ?o }", {"ok": True}, "application/json",
     ["key 'boolean' is missing", "the object has: ok", "received application/json", '{"ok": true}']),
    ("ASK { ?s ?p ?o }", {"head": {}, "boolean": "yes"}, "application/sparql-results+json",
     ["key 'boolean' is a string, not a boolean"]),
    (QUERY, {"head": {"vars": ["s", "label"]}, "results": []}, "application/json",
     ["key 'results' is an array, not an object", "received application/json"]),
    (QUERY, {"head": {"vars": ["s", "label"]}, "results": {"rows": []}}, "application/json",
     ["key 'bindings' is missing ('results' has: rows)"]),
    (QUERY, {"head": {"vars": ["s", "label"]}, "results": {"bindings": [{"s": "http://e/a"}]}}, "text/plain",
     ["row 1: a term is a string", "received text/plain"]),
    (QUERY, "<html><body>Please log in</body></html>", "text/html",
     ["not SPARQL JSON results: <html><body>Please log in", "received text/html, 39 bytes"]),
    (QUERY, "", "application/sparql-results+json", ["the answer is empty", "0 bytes"]),
    ("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", "<html>Login</html>", "text/html",
     ["the answer to a CONSTRUCT is not valid", "received text/html", "<html>Login"]),
])
def test_malformed_answers_say_what_arrived(server: FakeSparqlServer, query: str, body: Any, content_type: str,
                                            fragments: list[str]) -> None:
    server.script(*[Scripted(body=body if isinstance(body, str) else json.dumps(body),
                             content_type=content_type)] * 3)
    endpoint, _ = store(server.url)
    with pytest.raises(EndpointError) as err:
        endpoint.query(query)
    text = err.value.full_message()
    assert "Traceback" not in text and "holds no triples" not in text and "without 'boolean'" not in text
    for fragment in fragments:
        assert fragment in text, text


def test_an_ask_answer_that_is_not_sparql_json_is_not_an_empty_endpoint() -> None:
    with FakeSparqlServer() as fake:
        fake.script(Scripted(body={"status": "ok"}, content_type="application/json"))
        code, output = cli("kbs", "add", "wd", "--endpoint", fake.url)
    assert_clean_failure(code, output, EndpointError.exit_code, "key 'boolean' is missing", "the object has: status")
    assert "holds no triples" not in output and not kb_exists("wd")


def remote_kb_at(name: str, url: str, timeout: float) -> None:
    """A remote KB whose endpoint is ``url`` (written directly: no sampling against a silent endpoint)."""
    from sparqlqa.kb.knowledge_base import Manifest, write_generation
    from sparqlqa.kb.schema import Schema
    from sparqlqa.remote.endpoint import EndpointConfig

    def build(generation: Path) -> None:
        store = {**EndpointConfig(url=url, timeout=timeout).to_dict()}
        store.pop("user_agent")
        Manifest(name=name, generation=generation.name, store=store, schema=Schema().to_dict()).write(generation)

    write_generation(name, build)


def test_mcp_caps_a_remote_kbs_queries_by_its_timeout() -> None:
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from faults.helpers import child_env

    with SilentListener() as silent:
        remote_kb_at("wd", silent.url, timeout=600)  # the KB's own setting would hold a query 10 minutes
        params = StdioServerParameters(command=sys.executable, args=["-m", "sparqlqa", "mcp", "--kb", "wd",
                                                                     "--timeout", "5"], env=child_env())

        async def main() -> Any:
            with anyio.fail_after(90):
                async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                    await session.initialize()
                    await session.call_tool("schema", {"kb": "wd"})  # opens the KB (no query): imports done
                    return await session.call_tool("sparql", {"kb": "wd", "query": "ASK { ?s ?p ?o }"})

        result = anyio.run(main)
    text = result.content[0].text
    assert result.isError and silent.url in text and "within the 4.5 s timeout" in text, text
    assert "Traceback" not in text


def test_ask_timeout_overrides_a_saved_kbs_own_setting() -> None:
    with SilentListener() as silent:
        remote_kb_at("wd", silent.url, timeout=600)
        code, output = cli("ask", "wd", "who directed Alien", "--strategy", "offline", "--timeout", "1")
        connections = len(silent.accepted)
    assert_clean_failure(code, output, EndpointError.exit_code, silent.url, "within the 1 s timeout")
    assert connections == 1
