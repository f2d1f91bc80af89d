"""Served mode benchmark: a warm ``sparqlqa serve`` ask against the cold CLI ``sparqlqa ask``, in one run.

On the bundled movie sample KB with the default embedder (ONNX all-MiniLM-L6-v2) and the
offline strategy (no LLM): first ``--cold`` runs of ``python -m sparqlqa ask movies Q
--strategy offline --json`` as subprocesses (each pays the imports, the model and the
indexes: what a CLI user waits for), then one ``python -m sparqlqa serve --kb movies``
subprocess (its start-up and warm-up timed), ``--asks`` sequential POST /api/ask (the warm
latency) and ``--concurrent`` asks at once (all must be answered).  The KB and its node index
are built in ``--home`` beforehand (not timed).  The load (``/proc/loadavg``) is printed
before and after: the machine is shared, so read the figures with it.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_serve.py --home /tmp/sqa-serve-home
    PYTHONPATH=. .venv/bin/python benchmarks/bench_serve.py --home /tmp/h --asks 100 --cold 5 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
QUESTIONS = [
    "who directed the movies that Ginger Rogers acted in",
    "which movies did Ridley Scott direct",
    "what genre is Blade Runner",
    "who starred in Nothing in Common",
    "when was Legend released",
    "who wrote the movies directed by Ridley Scott",
    "what language is Prometheus in",
    "which films did Tom Hanks act in",
]


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SPARQLQA_EMBEDDER", "SPARQLQA_LLM")}
    env.update(SPARQLQA_HOME=str(home), PYTHONPATH=str(REPO), SPARQLQA_PROGRESS_EVERY="3600")
    return env


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sparqlqa", *args], env=env, capture_output=True, text=True,
                          check=False, timeout=600)


def prepare(env: dict[str, str]) -> None:
    """The movie sample KB and its node index (default embedder), once."""
    if _cli(env, "schema", "movies", "--json").returncode != 0:
        sample = REPO / "sparqlqa" / "data" / "samples" / "movies.txt"
        done = _cli(env, "ingest", str(sample), "--kb", "movies", "--format", "triples", "--sep", "|")
        assert done.returncode == 0, done.stderr
    done = _cli(env, "index", "movies")
    assert done.returncode == 0, done.stderr


def cold(env: dict[str, str], runs: int) -> list[float]:
    """Wall seconds of ``sparqlqa ask`` subprocesses (one question each)."""
    times = []
    for i in range(runs):
        started = time.perf_counter()
        done = _cli(env, "ask", "movies", QUESTIONS[i % len(QUESTIONS)], "--strategy", "offline", "--json")
        times.append(time.perf_counter() - started)
        assert done.returncode in (0, 3), done.stderr
        assert json.loads(done.stdout)["items"], done.stdout[:500]
    return times


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def warm(env: dict[str, str], asks: int, concurrent: int) -> dict[str, Any]:
    port = _port()
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "sparqlqa", "serve", "--kb", "movies", "--port", str(port)],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as http:
            ready = _wait_ready(http, child) - started

            def one(i: int) -> float:
                t0 = time.perf_counter()
                response = http.post("/api/ask", json={"kb": "movies", "question": QUESTIONS[i % len(QUESTIONS)],
                                                       "strategy": "offline"})
                elapsed = time.perf_counter() - t0
                assert response.status_code == 200 and response.json()["items"], response.text[:500]
                return elapsed

            sequential = [one(i) for i in range(asks)]
            t0 = time.perf_counter()
            with ThreadPoolExecutor(max_workers=concurrent) as pool:
                together = list(pool.map(one, range(concurrent)))
            burst = time.perf_counter() - t0
    finally:
        child.terminate()
        child.wait(timeout=30)
    return {"ready_s": ready, "sequential": sequential, "concurrent": together, "burst_s": burst}


def _wait_ready(http: httpx.Client, child: subprocess.Popen[bytes]) -> float:
    for _ in range(6000):
        if child.poll() is not None:
            raise RuntimeError("sparqlqa serve exited before it was ready")
        try:
            if http.get("/healthz").status_code == 200:
                return time.perf_counter()
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise RuntimeError("sparqlqa serve did not get ready in 300 s")


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True, help="scratch SPARQLQA_HOME (KB + index kept there)")
    parser.add_argument("--asks", type=int, default=50)
    parser.add_argument("--cold", type=int, default=5)
    parser.add_argument("--concurrent", type=int, default=20)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    env = _env(args.home)
    prepare(env)
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    cold_s = cold(env, args.cold)
    served = warm(env, args.asks, args.concurrent)
    load_after = Path("/proc/loadavg").read_text().split()[:3]
    figures = {
        "load_before": load_before, "load_after": load_after, "cpus": os.cpu_count(),
        "cold_cli_p50_ms": round(1000 * statistics.median(cold_s), 1),
        "cold_cli_runs_ms": [round(1000 * t, 1) for t in cold_s],
        "serve_ready_ms": round(1000 * served["ready_s"], 1),
        "warm_p50_ms": round(_ms(served["sequential"], 0.5), 1),
        "warm_p95_ms": round(_ms(served["sequential"], 0.95), 1),
        "warm_asks": args.asks,
        "concurrent": args.concurrent, "concurrent_all_answered": len(served["concurrent"]) == args.concurrent,
        "concurrent_p50_ms": round(_ms(served["concurrent"], 0.5), 1),
        "concurrent_wall_ms": round(1000 * served["burst_s"], 1),
    }
    figures["cold_over_warm"] = round(figures["cold_cli_p50_ms"] / figures["warm_p50_ms"], 1)
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", "utf-8")


if __name__ == "__main__":
    main()
