"""What bounding queries costs, and what it buys (issue 24, item 2).

Cost: the movie sample on disk, the same queries run unbounded in-process (before: how every query ran)
and bounded (after: in a query worker process, :mod:`sparqlqa.query.query_pool`), alternating in one run;
p50 of each, and a whole offline ``ask`` with and without a bounded scope.  Gain: a runaway query (the
cartesian product of 3 triple patterns) through ``sparqlqa sparql --timeout 5`` and through
``sparqlqa serve --timeout 5`` holding four of them: time to stop, peak RSS of the process tree, the
latency of a light query sent 2 s later, and how long until the server's CPU is idle.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_query_bounds.py
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from proc_tree import cpu, rss, tree  # noqa: E402 - the fault suite's /proc reader

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import p50_ms  # noqa: E402

CARTESIAN = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
COUNTED = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
REL = "https://sparqlqa.dev/kb/movies/relation/"
ENTITY = "https://sparqlqa.dev/kb/movies/entity/"
QUERIES = {
    "compiled (1 hop, VALUES, 5 rows)": f"SELECT DISTINCT ?x WHERE {{ ?x <{REL}directed_by> ?c . "
                                        f"VALUES ?c {{ <{ENTITY}Ridley%20Scott> }} }} LIMIT 1000",
    "ASK": "ASK { ?s ?p ?o }",
    "one relation (~650 rows)": f"SELECT ?s ?o WHERE {{ ?s <{REL}directed_by> ?o }}",
    "every triple (4,828 rows)": "SELECT * WHERE { ?s ?p ?o }",
}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# --- the process tree (/proc) ------------------------------------------------------------------------


class Peak:
    def __init__(self, root: int) -> None:
        self.root, self.peak, self.stop = root, 0, threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.stop.is_set():
            self.peak = max(self.peak, rss(tree(self.root)))
            self.stop.wait(0.1)

    def done(self) -> float:
        self.stop.set()
        self.thread.join()
        return self.peak / 1024**2


def seconds_until_idle(root: int, limit: float = 60) -> float:
    start = time.monotonic()
    while time.monotonic() - start < limit:
        before = cpu(tree(root))
        time.sleep(0.5)
        after = cpu(tree(root))
        if sum(after[p] - before[p] for p in after if p in before) < 0.05:  # < 10% of one core
            return time.monotonic() - start
    return float("inf")


# --- the measurements --------------------------------------------------------------------------------


def overhead(runs: int) -> None:
    from sparqlqa.kb.knowledge_base import open_kb
    from sparqlqa.query.limits import QueryLimits, bounded
    from sparqlqa.strategies.ask import ask

    limits = QueryLimits()
    with open_kb("movies") as kb:
        start = time.perf_counter()
        kb.query("ASK { ?s ?p ?o }", limits=limits)
        print(f"first bounded query (starts the worker): {(time.perf_counter() - start) * 1000:.0f} ms")
        print("| query | before: in-process p50 | after: worker p50 | after / before |")
        print("|---|---:|---:|---:|")
        for name, query in QUERIES.items():
            before = after = 0.0
            for _ in range(3):  # alternate, so machine load hits both alike
                before += p50_ms(lambda q=query: kb.query(q), runs) / 3  # type: ignore[misc]
                after += p50_ms(lambda q=query: kb.query(q, limits=limits), runs) / 3  # type: ignore[misc]
            print(f"| {name} | {before:.3f} ms | {after:.3f} ms | {after / before:.2f}x |")
        question = "who directed the movies that Ginger Rogers acted in"
        ask(kb, question, strategy="offline", rerank="none")

        def bounded_ask() -> None:
            with bounded(limits):
                ask(kb, question, strategy="offline", rerank="none")

        free = held = 0.0
        for _ in range(3):
            free += p50_ms(lambda: ask(kb, question, strategy="offline", rerank="none"), max(5, runs // 20)) / 3
            held += p50_ms(bounded_ask, max(5, runs // 20)) / 3
        print(f"| offline ask (13 store queries, all bounded after) | {free:.1f} ms | {held:.1f} ms | "
              f"{held / free:.2f}x |")


def cli_runaway() -> None:
    command = [sys.executable, "-m", "sparqlqa", "sparql", "movies", CARTESIAN, "--timeout", "5"]
    start = time.monotonic()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = Peak(child.pid)
    child.wait(timeout=120)
    print(f"sparqlqa sparql CARTESIAN --timeout 5: exit {child.returncode} after {time.monotonic() - start:.1f} s, "
          f"peak RSS of the process tree {peak.done():.0f} MB")


def serve_runaways() -> None:
    import httpx

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    child = subprocess.Popen([sys.executable, "-m", "sparqlqa", "serve", "--kb", "movies", "--port", str(port),
                              "--timeout", "5"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        peak = Peak(child.pid)
        done: list[tuple[int, float]] = []
        start = time.monotonic()

        def runaway() -> None:
            status = httpx.post(f"{url}/api/sparql", json={"kb": "movies", "query": COUNTED}, timeout=120).status_code
            done.append((status, time.monotonic() - start))

        threads = [threading.Thread(target=runaway) for _ in range(4)]
        for thread in threads:
            thread.start()
        time.sleep(2)
        sent = time.monotonic()
        light = httpx.post(f"{url}/api/sparql", json={"kb": "movies", "query": "ASK { ?s ?p ?o }"}, timeout=120)
        latency = time.monotonic() - sent
        for thread in threads:
            thread.join()
        idle = seconds_until_idle(child.pid)
        print(f"serve --timeout 5, 4 runaways: statuses {sorted(s for s, _ in done)}, answered after "
              f"{max(t for _, t in done):.1f} s; light query 2 s later: {light.status_code} in {latency:.2f} s; "
              f"CPU idle {idle:.1f} s after the last 504; peak RSS {peak.done():.0f} MB")
    finally:
        child.terminate()
        child.wait(timeout=30)


def main() -> None:
    runs = int(os.environ.get("BENCH_RUNS", "200"))
    with tempfile.TemporaryDirectory() as home:
        os.environ["SPARQLQA_HOME"] = home
        os.environ.setdefault("SPARQLQA_EMBEDDER", "fake")
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        from sparqlqa.ingest import ingest
        from sparqlqa.samples import sample_path

        ingest([sample_path("movies")], kb="movies", format="triples", options={"sep": "|"})
        print(f"load average at start: {load()} ({os.cpu_count()} cores)")
        overhead(runs)
        cli_runaway()
        serve_runaways()
        print(f"load average at end: {load()}")


if __name__ == "__main__":
    main()
