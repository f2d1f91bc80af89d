"""Faults at the edge: hostile text and hostile connections against real ``sparqlqa serve`` and ``sparqlqa mcp``.

Each server is a child process on loopback (its log captured): bad bytes, lone surrogates, NUL,
control characters and oversized bodies get a 4xx JSON error (HTTP) or an error result (MCP) and
the server keeps answering; a stalled or dripping client is cut off by ``--read-timeout``; clients
past ``--max-connections`` get 503; a client that goes away is one access-log line (499); no
traceback anywhere, and no token in the access log.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from faults.helpers import REPO, assert_clean_failure, build_template, cli, copy_kbs, run_child

TOKEN = "t0ken-not-for-logs"
#: the bound on every wait of these tests: a server that never answers fails the test, never hangs it
WAIT = 10.0
#: one access-log line: time, client, "METHOD PATH", status, milliseconds
ACCESS = re.compile(r'^\S+ \S+ 127\.0\.0\.1:(\d+) "(\S+) (\S+)" (\d{3}) \d+\.\dms$')


@dataclass
class Server:
    url: str
    port: int
    log: Path
    child: subprocess.Popen[bytes]

    def text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def lines_of(self, client_port: int) -> list[str]:
        """The access-log lines of the connection from ``client_port`` (waits until one is there)."""
        deadline = time.monotonic() + WAIT
        while True:
            found = [line for line in self.text().splitlines() if f"127.0.0.1:{client_port} " in line]
            if found or time.monotonic() > deadline:
                return found
            time.sleep(0.05)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    build_template(home, "movies", [REPO / "tests" / "fixtures" / "movies.ttl"])
    return home


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "SPARQLQA_HOME": str(home), "SPARQLQA_EMBEDDER": "fake",
            "SPARQLQA_SERVE_TOKEN": TOKEN}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start(home: Path, log: Path, *options: str) -> Iterator[Server]:
    port = _free_port()
    handle = log.open("wb")
    child = subprocess.Popen([sys.executable, "-m", "sparqlqa", "serve", "--kb", "movies", "--port", str(port),
                              *options], env=_env(home), stdout=handle, stderr=subprocess.STDOUT)
    server = Server(f"http://127.0.0.1:{port}", port, log, child)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert child.poll() is None, server.text()
            try:
                if httpx.get(f"{server.url}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, server.text()
            time.sleep(0.1)
        yield server
    finally:
        child.terminate()
        child.wait(timeout=20)
        handle.close()
    assert "Traceback" not in server.text(), server.text()


@pytest.fixture(scope="module")
def server(home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``serve`` with a 2 s read deadline (the default is 20 s)."""
    yield from _start(home, tmp_path_factory.mktemp("log") / "serve.log", "--read-timeout", "2")


def _api(server: Server) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=WAIT, headers={"Authorization": f"Bearer {TOKEN}"})


def _post(server: Server, path: str, body: bytes) -> httpx.Response:
    with _api(server) as http:
        return http.post(path, content=body, headers={"Content-Type": "application/json"})


# --- text -----------------------------------------------------------------------------------------

ASK_BAD = {
    "invalid UTF-8": (b'{"kb": "movies", "question": "who directed \xff\xfe Alien"}', "not valid UTF-8: byte 0xFF"),
    "lone surrogate": (b'{"kb": "movies", "question": "who directed \\ud800 Alien"}',
                       "body.question holds a lone surrogate (U+D800) at character 14"),
    "escaped NUL": (b'{"kb": "movies", "question": "who\\u0000"}', "body.question holds a NUL character"),
    "escape sequence": (b'{"kb": "movies", "question": "who \\u001b[31m"}', "control character (U+001B)"),
    "raw NUL": (b'{"kb": "movies", "question": "who\x00"}', "not valid JSON"),
    "bad KB name": (b'{"kb": "mov\\u0000ies", "question": "who"}', "body.kb holds a NUL character"),
    "surrogate key": (b'{"kb": "movies", "\\udc80": 1, "question": "who"}', "a key of body holds a lone surrogate"),
    "malformed JSON": (b'{"kb": "movies", "question": ', "not valid JSON"),
    "deep nesting": (b"[" * 60_000, "nests too deeply"),
}
SPARQL_BAD = {
    "invalid UTF-8": (b'{"kb": "movies", "query": "SELECT * { ?s ?p \xc3 }"}', "not valid UTF-8: byte 0xC3"),
    "lone surrogate": (b'{"kb": "movies", "query": "SELECT * { ?s ?p \\"\\udfff\\" }"}',
                       "body.query holds a lone surrogate (U+DFFF)"),
    "NUL": (b'{"kb": "movies", "query": "SELECT * {\\u0000}"}', "body.query holds a NUL character"),
}


@pytest.mark.parametrize(("path", "case"), [*(("/api/ask", c) for c in ASK_BAD),
                                            *(("/api/sparql", c) for c in SPARQL_BAD)])
def test_bad_text_is_a_400_naming_the_field(server: Server, path: str, case: str) -> None:
    body, expected = (ASK_BAD if path == "/api/ask" else SPARQL_BAD)[case]
    response = _post(server, path, body)
    assert response.status_code == 400, response.text
    data = response.json()
    assert expected in data["error"] and data["hint"], data
    assert "Traceback" not in response.text


def test_megabyte_bodies_are_refused_and_the_server_answers_on(server: Server) -> None:
    big = json.dumps({"kb": "movies", "question": "x" * 1_000_000}).encode()
    for path in ("/api/ask", "/api/sparql"):
        response = _post(server, path, big)
        assert response.status_code == 413 and "at most" in response.json()["error"], response.text
        with _api(server) as http:  # no Content-Length: the body is cut off while it streams
            chunked = http.post(path, content=iter([big[i:i + 65536] for i in range(0, len(big), 65536)]),
                                headers={"Content-Type": "application/json"})
        assert chunked.status_code == 413, chunked.text
    with _api(server) as http:
        response = http.get("/api/schema/mov%00ies")
        assert response.status_code == 400 and "holds a NUL character" in response.json()["error"]
        answer = http.post("/api/ask", json={"kb": "movies", "question": "Which films did Ridley Scott direct?"})
        assert answer.status_code == 200 and answer.json()["items"], answer.text
        rows = http.post("/api/sparql", json={"kb": "movies", "query": "ASK { ?s ?p ?o }"})
        assert rows.status_code == 200 and rows.json()["results"]["boolean"] is True


# --- the command line -----------------------------------------------------------------------------


@pytest.fixture
def movies(home: Path, sparqlqa_home: Path) -> None:
    copy_kbs(home, sparqlqa_home)


def test_a_real_invalid_byte_in_argv_is_exit_2(movies: None) -> None:
    """A child gets the byte 0xFF itself in its argv (not a Python string)."""
    code, output = run_child("ask", "movies", "who directed \udcffAlien", "--strategy", "offline")
    assert_clean_failure(code, output, 2, "the question (QUESTION) holds a lone surrogate (U+DCFF) at character 14",
                         "invalid UTF-8 byte 0xFF", "hint:")
    code, output = run_child("sparql", "movi\udce9s", "ASK {}")
    assert_clean_failure(code, output, 2, "the knowledge base name holds a lone surrogate (U+DCE9)")


def test_queries_from_files_and_stdin_are_checked(movies: None, tmp_path: Path) -> None:
    bad = tmp_path / "bad.rq"
    bad.write_bytes(b"SELECT * WHERE {\n  ?s ?p \"\xc3\" }")
    code, output = cli("sparql", "movies", f"@{bad}")
    assert_clean_failure(code, output, 2, f"the query file {bad} is not valid UTF-8: byte 0xC3 at byte 27")
    nul = tmp_path / "nul.rq"
    nul.write_bytes(b"\xef\xbb\xbfASK {\n}\x00")
    code, output = cli("sparql", "movies", f"@{nul}")
    assert_clean_failure(code, output, 2, "holds a NUL character (U+0000) at character 8 (line 2, column 2)")
    child = subprocess.run([sys.executable, "-m", "sparqlqa", "sparql", "movies", "-", "--json"], input=b"ASK {\xff}",
                           capture_output=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert child.returncode == 2 and b"Traceback" not in child.stderr, child.stderr
    assert json.loads(child.stdout)["error"].startswith("the query on stdin is not valid UTF-8: byte 0xFF")
    good = tmp_path / "good.rq"
    good.write_bytes(b"\xef\xbb\xbfASK { ?s ?p ?o }")  # a BOM is fine: dropped
    code, output = cli("sparql", "movies", f"@{good}", "--json")
    assert code == 0 and json.loads(output)["boolean"] is True, output


@pytest.mark.parametrize("args", [("kbs", "remove", "mov\x00ies", "--yes"), ("schema", "mo\x1bvies"),
                                  ("index", "movies\x7f"), ("ask", "mov\x85ies", "who")])
def test_kb_names_are_checked(movies: None, args: tuple[str, ...]) -> None:
    code, output = cli(*args)
    assert_clean_failure(code, output, 2, "knowledge base name", "holds a", "hint: remove it")


def test_eval_question_files_are_checked(movies: None, tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": "a", "question": "who directed Alien", "answers": ["Ridley Scott"]}\n'
                         '{"id": "b", "question": "who \\ud800 directed", "answers": ["x"]}\n', encoding="utf-8")
    code, output = cli("eval", "jsonl", str(questions), "--kb", "movies", "--strategy", "offline",
                       "--out", str(tmp_path / "out"), "--no-plots")
    assert_clean_failure(code, output, 2, f"{questions}: question 'b' holds a lone surrogate (U+D800) at character 5")


# --- connections ----------------------------------------------------------------------------------


def _read_until_closed(sock: socket.socket, limit: float = 30.0) -> bytes:
    """What the server sends until it closes the connection (fails past ``limit`` seconds)."""
    sock.settimeout(limit)
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk


@pytest.mark.parametrize("sent", [
    b"",  # connects and says nothing
    b"POST /api/ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le",  # half a header
    b"POST /api/ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer "
    + TOKEN.encode() + b"\r\nContent-Length: 100\r\n\r\n{\"kb\": ",  # the head, then a stalled body
])
def test_a_stalled_client_gets_408_and_is_closed(server: Server, sent: bytes) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as sock:
        sock.sendall(sent)
        answer = _read_until_closed(sock)
        client_port = sock.getsockname()[1]
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert b"did not arrive within 2 s" in answer
    lines = server.lines_of(client_port)
    assert len(lines) == 1, lines
    match = ACCESS.match(lines[0])
    assert match is not None and match.group(4) == "408", lines


def test_a_dripping_client_is_cut_off_too(server: Server) -> None:
    """One header byte at a time never moves the deadline."""
    head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 400
    with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as sock:
        for byte in head:
            if _readable(sock):  # the server answered (or closed): stop dripping
                break
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                break
            time.sleep(0.05)  # 400 bytes take ~20 s: far past the 2 s deadline
        else:
            pytest.fail("the server waited for the whole dripped header")
        answer = _read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 408 "), answer


def _readable(sock: socket.socket) -> bool:
    with selectors.DefaultSelector() as selector:
        selector.register(sock, selectors.EVENT_READ)
        return bool(selector.select(0))


def test_a_client_gone_mid_request_is_one_quiet_line(server: Server) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as sock:
        sock.sendall(b"POST /api/ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Authorization: Bearer " + TOKEN.encode() + b"\r\nContent-Length: 500\r\n\r\n{\"kb\": \"mo")
        client_port = sock.getsockname()[1]
        time.sleep(0.3)  # the app is reading the body when the client goes
    lines = server.lines_of(client_port)
    assert len(lines) == 1, lines
    match = ACCESS.match(lines[0])
    assert match is not None and match.group(2, 3, 4) == ("POST", "/api/ask", "499"), lines
    assert "Traceback" not in server.text() and "internal error" not in server.text()


def test_access_log_has_one_line_per_request_and_never_the_token(server: Server) -> None:
    with httpx.Client(base_url=server.url, timeout=WAIT) as http:
        statuses = []
        for path, headers in [("/healthz?token=" + TOKEN, {}), ("/api/kbs", {"Authorization": f"Bearer {TOKEN}"}),
                              ("/api/kbs", {"Authorization": "Bearer wrong"}), ("/nowhere%0Aforged", {})]:
            with httpx.Client(base_url=server.url, timeout=WAIT, headers={"Connection": "close"}) as one:
                response = one.get(path, headers=headers)
            statuses.append(response.status_code)
        answered = http.post("/api/ask", headers={"Authorization": f"Bearer {TOKEN}"},
                             json={"kb": "movies", "question": "Which films did Ridley Scott direct?"})
        assert answered.status_code == 200
    assert statuses == [200, 200, 401, 404]
    text = server.text()
    deadline = time.monotonic() + WAIT
    while '"POST /api/ask" 200' not in text and time.monotonic() < deadline:
        time.sleep(0.05)
        text = server.text()
    lines = [line for line in text.splitlines() if ACCESS.match(line)]
    wanted = [('GET', '/healthz', '200'), ('GET', '/api/kbs', '200'), ('GET', '/api/kbs', '401'),
              ('GET', '/nowhere\\x0aforged', '404'), ('POST', '/api/ask', '200')]
    seen = [ACCESS.match(line).group(2, 3, 4) for line in lines]  # type: ignore[union-attr]
    for request in wanted:
        assert request in seen, (request, lines)
    assert TOKEN not in text and "wrong" not in text
    assert "Traceback" not in text


def test_connections_past_the_cap_get_503(home: Path, tmp_path: Path) -> None:
    for server in _start(home, tmp_path / "serve.log", "--max-connections", "2", "--read-timeout", "60"):
        holders = [socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) for _ in range(2)]
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as surplus:
                surplus.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                answer = _read_until_closed(surplus, WAIT)
            assert answer.startswith(b"HTTP/1.1 503 "), answer
            assert b"too many open connections" in answer and b"connection: close" in answer.lower()
        finally:
            for sock in holders:
                sock.close()
        deadline = time.monotonic() + WAIT  # the holders' slots are free again once the server saw them go
        while httpx.get(f"{server.url}/healthz", timeout=WAIT).status_code != 200:
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_one_address_holding_idle_connections_leaves_room_for_everyone_else(home: Path, tmp_path: Path) -> None:
    """Issue 33: one client holding idle sockets took every slot (503 for everyone until the read timeout).
    Past --max-connections-per-client its new connections get 429 and take no slot; a client from another
    address (127.0.0.2: Linux routes all of 127.0.0.0/8 to lo) is still answered."""
    for server in _start(home, tmp_path / "serve.log", "--max-connections", "4", "--max-connections-per-client",
                         "2", "--read-timeout", "60"):
        hog = [socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) for _ in range(8)]
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT,
                                          source_address=("127.0.0.2", 0)) as other:
                other.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                answer = _read_until_closed(other, WAIT)
            assert answer.startswith(b"HTTP/1.1 200 "), answer
            hog[-1].sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            refused = _read_until_closed(hog[-1], WAIT)
            assert refused.startswith(b"HTTP/1.1 429 "), refused
            assert b"too many open connections from your address" in refused and b"connection: close" in refused.lower()
            hog[0].sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            assert _read_until_closed(hog[0], WAIT).startswith(b"HTTP/1.1 200 ")  # its first two were admitted
        finally:
            for sock in hog:
                sock.close()
    assert "Traceback" not in (tmp_path / "serve.log").read_text()


# --- MCP over stdio -------------------------------------------------------------------------------


class McpChild:
    """``sparqlqa mcp`` spoken to line by line (raw bytes, so broken messages can be sent)."""

    def __init__(self, home: Path, log: Path) -> None:
        self.log = log
        self.errors = log.open("wb")
        self.child = subprocess.Popen([sys.executable, "-m", "sparqlqa", "mcp", "--kb", "movies"], env=_env(home),
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors)
        self.buffer = b""

    def send(self, line: bytes) -> None:
        assert self.child.stdin is not None
        self.child.stdin.write(line + b"\n")
        self.child.stdin.flush()

    def call(self, request_id: int, method: str, params: Any) -> None:
        self.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode())

    def reply(self, request_id: int, limit: float = WAIT) -> dict[str, Any]:
        """The answer to ``request_id`` (fails past ``limit`` seconds: a hang is a failure)."""
        assert self.child.stdout is not None
        fd = self.child.stdout.fileno()
        deadline = time.monotonic() + limit
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                message = json.loads(line)
                if message.get("id") == request_id:
                    return message  # type: ignore[no-any-return]
            left = deadline - time.monotonic()
            assert left > 0, f"no answer to request {request_id} within {limit} s"
            with selectors.DefaultSelector() as selector:
                selector.register(fd, selectors.EVENT_READ)
                if selector.select(left):
                    chunk = os.read(fd, 1 << 20)
                    assert chunk, f"the MCP server ended: {self.log.read_text()}"
                    self.buffer += chunk

    def close(self) -> str:
        assert self.child.stdin is not None
        self.child.stdin.close()
        self.child.wait(timeout=30)
        self.errors.close()
        return self.log.read_text(encoding="utf-8", errors="replace")


def _tool(request_id: int, name: str, arguments: str) -> bytes:
    """A ``tools/call`` line with ``arguments`` pasted as raw JSON text (so it may hold \\ud800 or a bad byte)."""
    head = f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", "params": {{"name": "{name}", '
    return (head + '"arguments": ').encode() + arguments.encode("utf-8", "surrogateescape") + b"}}"


def test_mcp_answers_every_bad_call_with_an_error_result(home: Path, tmp_path: Path) -> None:
    from mcp.types import LATEST_PROTOCOL_VERSION

    server = McpChild(home, tmp_path / "mcp.log")
    try:
        server.call(1, "initialize", {"protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {},
                                      "clientInfo": {"name": "faults", "version": "0"}})
        assert "result" in server.reply(1, 60)
        server.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        bad = {
            10: (_tool(10, "ask", '{"kb": "movies", "question": "who \\ud800 directed"}'), "lone surrogate (U+D800)"),
            11: (_tool(11, "ask", '{"kb": "movies", "question": "who \udcff directed"}'), "not valid UTF-8: byte 0xFF"),
            12: (_tool(12, "ask", '{"kb": "movies", "question": "who\\u0000"}'), "question holds a NUL character"),
            13: (_tool(13, "ask", json.dumps({"kb": "movies", "question": "x" * 1_000_000})),
                 "is 1,000,000 characters"),
            14: (_tool(14, "sparql", '{"kb": "movies", "query": "SELECT * { ?s ?p \\"\\udc00\\" }"}'),
                 "lone surrogate"),
            15: (_tool(15, "schema", '{"kb": "mov\\u001bies"}'), "kb holds a control character (U+001B)"),
        }
        server.send(b"{this is not JSON")  # no id to answer: dropped with a warning, the server goes on
        for request_id, (line, expected) in bad.items():
            server.send(line)
            answer = server.reply(request_id)
            result = answer["result"]
            assert result["isError"] is True and expected in result["content"][0]["text"], answer
        server.call(20, "tools/call", {"name": "ask", "arguments": {"kb": "movies", "question":
                                                                    "Which films did Ridley Scott direct?"}})
        good = server.reply(20, 60)["result"]
        assert not good.get("isError") and "Gladiator" in good["content"][0]["text"], good
        server.send(b'{"jsonrpc": "2.0", "id": 21, "method": "ping", "params": {"x": "\\ud800"}}')
        assert server.reply(21)["error"]["code"] == -32602
    finally:
        errors = server.close()
    assert "Traceback" not in errors, errors
    assert server.child.returncode == 0, errors
