"""The one HTTP transport: one deadline, the redirect policy, bounded bodies (fake servers on 127.0.0.1)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
from fake_servers import FakeSparqlServer, Scripted

from sparqlqa.net import CallFailure, Deadline, Request, Transport, same_host, send


@pytest.fixture
def server() -> Iterator[FakeSparqlServer]:
    with FakeSparqlServer() as fake:
        yield fake


@pytest.mark.parametrize("origin, target, same", [
    ("http://a.org/sparql", "http://a.org/other", True),
    ("http://A.org/sparql", "http://a.ORG:80/x", True),
    ("http://a.org/sparql", "https://a.org/sparql", True),  # an upgrade on the default ports
    ("https://a.org/sparql", "http://a.org/sparql", False),  # a downgrade
    ("http://a.org:8890/sparql", "https://a.org/sparql", False),
    ("http://a.org/sparql", "http://a.org:8080/sparql", False),
    ("http://a.org/sparql", "http://b.a.org/sparql", False),
    ("http://127.0.0.1:1/x", "http://localhost:1/x", False),
])
def test_same_host(origin: str, target: str, same: bool) -> None:
    assert same_host(origin, target) is same


def test_a_final_answer_with_lower_case_headers(server: FakeSparqlServer) -> None:
    server.script(Scripted(body=b'{"x": 1}', headers={"X-Thing": "yes"}))
    response = send(Request("GET", server.url + "?query=ASK%7B%7D", {"Accept": "application/json"}),
                    Deadline(5), max_bytes=1000)
    assert (response.status, response.body, response.header("X-THING")) == (200, b'{"x": 1}', "yes")
    assert response.content_type == "application/sparql-results+json" and response.url.startswith(server.url)
    assert server.seen[0].headers["accept"] == "application/json"


def test_an_expired_deadline_sends_nothing(server: FakeSparqlServer) -> None:
    deadline = Deadline(0.001)
    while not deadline.expired():
        pass
    with pytest.raises(CallFailure, match=r"within the 0\.001 s timeout") as caught:
        send(Request("GET", server.url), deadline, max_bytes=1000)
    assert not caught.value.retryable and server.seen == []


def test_a_slow_answer_ends_at_the_deadline_not_later(server: FakeSparqlServer) -> None:
    server.script(Scripted(body=b"{}", delay=3.0))
    with pytest.raises(CallFailure, match=r"within the 0\.3 s timeout"):
        send(Request("GET", server.url), Deadline(0.3), max_bytes=1000)


def test_bodies_are_bounded_and_cut_answers_are_retryable(server: FakeSparqlServer) -> None:
    server.script(Scripted(body=b"x" * 2000), Scripted(body=b"y" * 2000, no_length=True),
                  Scripted(body=b'{"head": {}, "boolean": true}', truncate=True))
    with pytest.raises(CallFailure, match="announces 2,000 bytes") as announced:
        send(Request("GET", server.url), Deadline(5), max_bytes=1000)
    with pytest.raises(CallFailure, match="more came"):
        send(Request("GET", server.url), Deadline(5), max_bytes=1000)
    with pytest.raises(CallFailure, match="cut short: 14 of 29 announced bytes") as cut:
        send(Request("GET", server.url), Deadline(5), max_bytes=1000)
    assert not announced.value.retryable and cut.value.retryable


def test_a_refused_connection_is_retryable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/sparql"
    with pytest.raises(CallFailure, match="connection refused") as caught:
        send(Request("GET", url), Deadline(5), max_bytes=1000)
    assert caught.value.retryable


def test_a_post_redirected_elsewhere_is_never_sent_there(server: FakeSparqlServer) -> None:
    with FakeSparqlServer() as other:
        server.script(Scripted(308, b"moved", headers={"Location": other.url}))
        with pytest.raises(CallFailure, match="to another host") as caught:
            send(Request("POST", server.url, {}, b"query=ASK%7B%7D"), Deadline(5), max_bytes=1000)
        assert other.seen == [] and not caught.value.retryable
        assert f"127.0.0.1:{server.http.port}" in caught.value.message
        assert f"127.0.0.1:{other.http.port}" in caught.value.message


def test_a_relative_redirect_keeps_method_and_body(server: FakeSparqlServer) -> None:
    server.script(Scripted(307, b"", headers={"Location": "elsewhere"}), Scripted(body=b"{}"))
    response = send(Request("POST", server.url, {}, b"query=q"), Deadline(5), max_bytes=1000)
    assert response.status == 200 and response.url.endswith("/elsewhere")
    assert [(s.method, s.path, s.body) for s in server.seen] == [("POST", "/sparql", b"query=q"),
                                                                 ("POST", "/elsewhere", b"query=q")]


def test_the_environments_proxy_is_used_and_no_proxy_honoured(server: FakeSparqlServer,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    server.script(Scripted(body=b"{}"))
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{server.http.port}")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    response = send(Request("GET", "http://endpoint.invalid/sparql?query=q"), Deadline(5), max_bytes=1000)
    assert response.status == 200 and server.seen[0].path == "http://endpoint.invalid/sparql?query=q"
    monkeypatch.setenv("no_proxy", "endpoint.invalid")
    with pytest.raises(CallFailure, match=r"cannot resolve|request failed"):  # straight to the (unknown) host
        send(Request("GET", "http://endpoint.invalid/sparql"), Deadline(5), max_bytes=1000)
    assert len(server.seen) == 1


class Dripping:
    """A raw TCP server that sends its answer one byte every ``every`` seconds (headers included)."""

    def __init__(self, answer: bytes, every: float = 0.05) -> None:
        self.answer, self.every = answer, every
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/sparql"

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            conn.recv(65536)
            try:
                for byte in self.answer:
                    conn.sendall(bytes([byte]))
                    time.sleep(self.every)
            except OSError:  # the client cut it: what the test wants
                pass

    def __enter__(self) -> Dripping:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.sock.close()


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 200 OK\r\n" + b"X-Padding: " + b"p" * 200 + b"\r\nContent-Length: 2\r\n\r\n{}",  # headers drip
    b"HTTP/1.1 200 OK\r\nContent-Length: 200\r\n\r\n" + b"x" * 200,  # the body drips
], ids=["headers", "body"])
def test_a_dripping_server_is_cut_at_the_deadline(answer: bytes) -> None:
    """Every byte arrives well within httpx's per-read timeout: only the one deadline can end the call."""
    with Dripping(answer) as server:
        started = time.monotonic()
        with pytest.raises(CallFailure, match=r"within the 0\.5 s timeout"):
            Transport().send(Request("GET", server.url), Deadline(0.5), max_bytes=1000)
        elapsed = time.monotonic() - started
    assert 0.45 <= elapsed < 0.8  # the whole answer would take 10 s or more


def test_a_transport_sends_its_user_agent(server: FakeSparqlServer) -> None:
    server.script(Scripted(body=b"{}"), Scripted(body=b"{}"))
    transport = Transport(user_agent="sparqlqa-test/1")
    transport.send(Request("GET", server.url), Deadline(5), max_bytes=1000)
    transport.send(Request("GET", server.url, {"User-Agent": "mine"}), Deadline(5), max_bytes=1000)
    transport.close()
    assert [seen.headers["user-agent"] for seen in server.seen] == ["sparqlqa-test/1", "mine"]
