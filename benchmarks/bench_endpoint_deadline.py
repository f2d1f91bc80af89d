"""How long a misbehaving endpoint holds a query, against the timeout it was given; and what the HTTP
layer costs on a healthy one.

Part 1: for timeouts of 1, 2 and 5 s, the time until :class:`EndpointStore` gives up on an endpoint that
accepts the connection and never answers (silent), one that sends a byte every 0.1 s (drip), and one that
always answers 503 (retried with backoff until the next wait would pass the deadline); the ratio to the
timeout is the figure (1.0 = exactly the timeout).  The design before issue 24 gave each of the 4 attempts
its own timeout, so a silent endpoint held a query 4 × timeout + backoff (247 s at the 60 s default).

Part 2: p50 of one small SELECT through ``EndpointStore.query`` (watchdog thread, JSON parsing, terms)
against a bare ``urllib.request`` GET of the same answer from the same loopback server, same run.

    PYTHONPATH=.:tests .venv/bin/python benchmarks/bench_endpoint_deadline.py
"""

from __future__ import annotations

import socket
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fake_servers import LoopbackHTTP

from sparqlqa.errors import EndpointError
from sparqlqa.remote.endpoint import EndpointStore

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import p50_ms

ROWS = (b'{"head": {"vars": ["s"]}, "results": {"bindings": [{"s": {"type": "uri", "value": "http://e/a"}}]}}')


def _silent() -> tuple[str, object]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    held: list[socket.socket] = []
    threading.Thread(target=lambda: [held.append(sock.accept()[0]) for _ in iter(int, 1)], daemon=True).start()
    return f"http://127.0.0.1:{sock.getsockname()[1]}/sparql", sock


def _drip(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/sparql-results+json")
    handler.send_header("Content-Length", "100000")
    handler.end_headers()
    try:
        for _ in range(1000):
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(0.1)
    except OSError:
        pass


def _reply(status: int, body: bytes) -> LoopbackHTTP:
    def answer(handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        if length:
            handler.rfile.read(length)
        handler.send_response(status)
        handler.send_header("Content-Type", "application/sparql-results+json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return LoopbackHTTP(answer)


def give_up_seconds(url: str, timeout: float) -> float:
    store = EndpointStore(url, timeout=timeout)
    start = time.monotonic()
    try:
        store.query("SELECT ?s WHERE { ?s ?p ?o }")
    except EndpointError:
        return time.monotonic() - start
    raise AssertionError("the misbehaving endpoint answered")


def part1() -> None:
    silent_url, _keep = _silent()
    with LoopbackHTTP(_drip) as drip, _reply(503, b"busy") as busy:
        urls = {"silent": silent_url, "drip": f"http://127.0.0.1:{drip.port}/sparql",
                "503 always": f"http://127.0.0.1:{busy.port}/sparql"}
        print("| endpoint | timeout (s) | gave up after (s) | ratio |")
        print("|---|---:|---:|---:|")
        for name, url in urls.items():
            for timeout in (1.0, 2.0, 5.0):
                took = give_up_seconds(url, timeout)
                print(f"| {name} | {timeout:g} | {took:.2f} | {took / timeout:.2f} |")


def part2() -> None:
    with _reply(200, ROWS) as server:
        url = f"http://127.0.0.1:{server.port}/sparql"
        store = EndpointStore(url, timeout=10)

        def bare() -> bytes:
            with urllib.request.urlopen(f"{url}?query=SELECT%20%3Fs%20%7B%7D", timeout=10) as response:
                return bytes(response.read())

        base, ours = p50_ms(bare), p50_ms(lambda: store.query("SELECT ?s WHERE { ?s ?p ?o }"))
        print(f"\nsmall SELECT p50: bare urllib GET {base:.2f} ms, EndpointStore.query {ours:.2f} ms "
              f"(ratio {ours / base:.2f})")


if __name__ == "__main__":
    part1()
    part2()
