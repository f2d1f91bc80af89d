"""What the edge adds: ``clean_text`` on typical input, and the guarded h11 protocol per HTTP request.

1. ``clean_text`` on a question (ASCII and accented), a compiled SPARQL query and a 16 KiB question,
   against the baseline of ``json.loads`` of the same text as a JSON string (what a server does anyway).
2. ``GET /healthz`` on the real ``create_app`` over uvicorn on loopback, 2,000 sequential requests on one
   keep-alive connection, with uvicorn's own h11 protocol (baseline) and with
   :class:`~sparqlqa.serve.connections.GuardedH11Protocol` (read deadline, cap, access log to a null
   handler), same run, alternating rounds; p50 and p95 per request.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_edge.py
"""

from __future__ import annotations

import json
import logging
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from sparqlqa.serve.app import create_app
from sparqlqa.serve.connections import access_log, guarded_protocol
from sparqlqa.serve.service import ServeSettings, Service
from sparqlqa.text_input import CODE, PROSE, TextKind, clean_text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import p50_us

TEXTS: list[tuple[str, str, TextKind]] = [
    ("question (ASCII)", "Which films did Ridley Scott direct after 1990 that starred Russell Crowe?", PROSE),
    ("question (accents)", "Quels films a réalisés Agnès Varda après Cléo de 5 à 7 ?", PROSE),
    ("SPARQL query", "PREFIX kb: <https://sparqlqa.dev/kb/movies/> SELECT DISTINCT ?x1 WHERE {\n"
     "  ?x1 <https://sparqlqa.dev/kb/movies/relation/directed_by> ?c0 .\n"
     "  VALUES ?c0 { <https://sparqlqa.dev/kb/movies/entity/Ridley%20Scott> } } LIMIT 1000", CODE),
    ("16 KiB question", "who directed é " * 1092, PROSE),
]


def bench_text() -> None:
    for name, text, kind in TEXTS:
        encoded = json.dumps(text)
        base = p50_us(runs=3000, work=lambda e=encoded: json.loads(e))  # type: ignore[misc]
        spent = p50_us(runs=3000, work=lambda t=text, k=kind: clean_text(t, kind=k, field="f"))  # type: ignore[misc]
        print(f"clean_text, {name:19} ({len(text):>6} chars): {spent:7.2f} us; json.loads of it {base:7.2f} us "
              f"({spent / base:.2f}x)")


def serve(http: Any) -> tuple[uvicorn.Server, threading.Thread, int]:
    config = uvicorn.Config(create_app(Service(ServeSettings(kbs=("none",)))), host="127.0.0.1", port=0,
                            log_level="warning", access_log=False, http=http)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    return server, thread, port


def requests_ms(port: int, runs: int) -> list[float]:
    times = []
    with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
        for _ in range(50):
            client.get("/healthz")
        for _ in range(runs):
            start = time.perf_counter()
            client.get("/healthz")
            times.append((time.perf_counter() - start) * 1000)
    return times


def bench_protocol(rounds: int = 4, runs: int = 500) -> None:
    access_log.addHandler(logging.NullHandler())
    access_log.setLevel(logging.INFO)  # the line is formatted and handled, as in `serve`
    access_log.propagate = False
    kinds = {"uvicorn h11 (baseline)": "h11", "guarded h11": guarded_protocol(read_timeout=20, max_connections=64)}
    times: dict[str, list[float]] = {name: [] for name in kinds}
    for _ in range(rounds):
        for name, http in kinds.items():
            server, thread, port = serve(http)
            times[name] += requests_ms(port, runs)
            server.should_exit = True
            thread.join(timeout=10)
    base = statistics.median(times["uvicorn h11 (baseline)"])
    for name, values in times.items():
        p50, p95 = statistics.median(values), statistics.quantiles(values, n=20)[18]
        print(f"GET /healthz, {name:23}: p50 {p50:.3f} ms, p95 {p95:.3f} ms ({p50 / base:.2f}x)")


if __name__ == "__main__":
    bench_text()
    bench_protocol()
