"""What the query workers' network filter costs (issue 33 item 2), and text2sparql's check in a worker (item 3).

Worker start: a fresh :class:`~sparqlqa.query.query_pool.QueryPool` on tests/fixtures/movies.ttl on disk, its first
``ASK {}`` answered, then closed; with the filter (``network=False``: what every worker does now) and without
(``network=True``: today's worker, unchanged), alternating in one run, p50 of each.  The filter alone: a child
process timing :func:`~sparqlqa.query.sandbox.deny_network`.  The check of an LLM's query: Oxigraph in this
process on an empty store (before) against :func:`~sparqlqa.query.query_pool.check_query` in a warm worker
(after), alternating, p50.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_worker_sandbox.py     # BENCH_RUNS=30
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import median_seconds

from sparqlqa.query.limits import QueryLimits, Scope
from sparqlqa.query.query_pool import QueryPool, check_query

MOVIES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "movies.ttl"

RUNS = int(os.environ.get("BENCH_RUNS", "30"))
LLM_QUERY = ('PREFIX dbo: <http://dbpedia.org/ontology/> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> '
             'SELECT DISTINCT ?f WHERE { ?f dbo:director ?d . ?d rdfs:label "Christopher Nolan"@en }')
FILTER_ONLY = ("import time; from sparqlqa.query.sandbox import deny_network; t = time.perf_counter(); "
               "r = deny_network(); print((time.perf_counter() - t) * 1000 if r is None else r)")


def scope() -> Scope:
    return Scope(QueryLimits(timeout_s=60), time.monotonic() + 60)


def start_once(path: Path, network: bool) -> None:
    pool = QueryPool(path, 1, network=network)
    try:
        assert pool.run("ASK {}", scope()).boolean is True
    finally:
        pool.close()


def worker_start(path: Path) -> tuple[float, float]:
    """p50 seconds of a worker start + first query: (without the filter, with it), alternating."""
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(RUNS):
        for network in (True, False):
            start = time.perf_counter()
            start_once(path, network)
            times[network].append(time.perf_counter() - start)
    return sorted(times[True])[RUNS // 2], sorted(times[False])[RUNS // 2]


def filter_alone() -> float:
    """p50 ms of :func:`deny_network` itself, each in a fresh child process."""
    found = []
    for _ in range(max(5, RUNS // 3)):
        out = subprocess.run([sys.executable, "-c", FILTER_ONLY], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
        found.append(float(out.stdout))
    return sorted(found)[len(found) // 2]


def check_cost() -> tuple[float, float]:
    """p50 ms of reading the LLM's query: in this process (before), in a warm worker (after)."""
    from pyoxigraph import Store

    check_query(LLM_QUERY, scope())  # the checking worker is up
    before = median_seconds(lambda: Store().query(LLM_QUERY), RUNS * 10)
    after = median_seconds(lambda: check_query(LLM_QUERY, scope()), RUNS * 10)
    return before * 1000, after * 1000


def main() -> None:
    from pyoxigraph import RdfFormat, Store

    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "store"
        store = Store(str(path))
        store.bulk_load(path=str(MOVIES), format=RdfFormat.TURTLE)
        store.flush()
        del store
        without, with_filter = worker_start(path)
    print(f"| worker start + first ASK, p50 of {RUNS} | without filter (today) {without * 1000:.1f} ms | "
          f"with filter {with_filter * 1000:.1f} ms | {with_filter / without:.2f}× |")
    print(f"| the filter alone (deny_network in a fresh child) | {filter_alone():.2f} ms |")
    before, after = check_cost()
    print(f"| text2sparql's check of one query, p50 of {RUNS * 10} | in-process {before:.3f} ms | "
          f"warm worker {after:.3f} ms | {after / before:.2f}× |")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
