"""Faults: runaway queries (a cartesian product of 3 triple patterns on the movie sample) are stopped.

``sparqlqa sparql`` with ``--timeout 5`` ends by itself with a message naming the limit, its process
tree (the CLI and its query worker) staying under 2 GB; ``sparqlqa serve --timeout 5`` holding four
runaway queries answers a light query sent 2 s later, stays under 2 GB, and its CPU is idle again
soon after the timeouts (the workers were killed, not abandoned).  The server's runaways are the
counted product (nothing streams); the product itself streams, and the server sends back its first
10,000 rows marked truncated.  Memory and CPU are read from
``/proc`` for the whole process tree, sampled while the test runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from proc_tree import cpu, rss, stat_fields, tree

from faults.helpers import REPO, assert_clean_failure, copy_kbs, spawn
from sparqlqa.errors import QueryTimeout
from sparqlqa.samples import sample_path

pytestmark = pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads memory and CPU from /proc")

CARTESIAN = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
#: the same product counted: no row streams before the end, so only killing the work stops it
COUNTED = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
LIGHT = "ASK { ?s ?p ?o }"
GB = 1024**3


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The movie sample ingested once (copied into each test's home)."""
    from sparqlqa.ingest import ingest

    home = tmp_path_factory.mktemp("runaway-template")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SPARQLQA_HOME", str(home))
        ingest([sample_path("movies")], kb="movies", format="triples", options={"sep": "|"})
    return home


@pytest.fixture
def movies(template: Path, sparqlqa_home: Path) -> str:
    copy_kbs(template, sparqlqa_home)
    return "movies"


# --- the process tree, from /proc --------------------------------------------------------------------


class Sampler:
    """Samples the RSS of ``root``'s process tree every 0.1 s; keeps the peak and every pid seen."""

    def __init__(self, root: int) -> None:
        self.root, self.peak, self.seen = root, 0, set[int]()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            pids = tree(self.root)
            self.seen.update(pids)
            self.peak = max(self.peak, rss(pids))
            self._stop.wait(0.1)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def idle_within(root: int, seconds: float) -> bool:
    """Whether ``root``'s tree uses less than 0.2 s of CPU in some 1 s window before ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        before = cpu(tree(root))
        time.sleep(1)
        after = cpu(tree(root))
        if sum(after[pid] - before[pid] for pid in after if pid in before) < 0.2:
            return True
    return False


def _alive(pid: int) -> bool:
    fields = stat_fields(pid)
    return fields is not None and fields[0] != "Z"


# --- the command line --------------------------------------------------------------------------------


def _run_stopped(*args: str) -> tuple[int, str, Sampler]:
    """``sparqlqa ARGS`` as a child, which must end by itself within 20 s (the bound of the issue)."""
    child = spawn(*args)
    with Sampler(child.pid) as sampler:
        try:
            output, _ = child.communicate(timeout=20)
        finally:
            child.kill()
    assert sampler.peak < 2 * GB, f"peak RSS {sampler.peak / GB:.2f} GB"
    assert len(sampler.seen) >= 2  # the query ran in a worker process ...
    assert not any(_alive(pid) for pid in sampler.seen)  # ... which is gone, like the CLI
    return child.returncode, output, sampler


@pytest.mark.parametrize("query, stopped_by", [
    (COUNTED, ("time limit of 5 s", "--timeout")),  # nothing streams: only the deadline can stop it
    (CARTESIAN, ()),  # rows stream: the deadline or the 100,000-row limit, whichever comes first on this machine
], ids=["counted", "streaming"])
def test_cli_runaway_query_ends_by_itself(movies: str, query: str, stopped_by: tuple[str, ...]) -> None:
    code, output, _ = _run_stopped("sparql", movies, query, "--timeout", "5")
    assert_clean_failure(code, output, 1, "it was stopped", *stopped_by)
    assert "time limit of 5 s" in output or "more than 100,000 rows (the row limit)" in output, output


# --- the server --------------------------------------------------------------------------------------


@pytest.fixture
def server(movies: str, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str, Path]]:
    import httpx
    from serve_helpers import free_port

    port = free_port()
    log = tmp_path / "serve.log"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with log.open("w") as out:
        child = subprocess.Popen([sys.executable, "-m", "sparqlqa", "serve", "--kb", movies, "--port", str(port),
                                  "--timeout", "5", "--workers", "4"], env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert child.poll() is None, log.read_text()
            time.sleep(0.1)
        yield child, url, log
    finally:
        child.terminate()
        try:
            child.wait(timeout=20)
        except subprocess.TimeoutExpired:
            child.kill()


def test_serve_stops_four_runaway_queries_and_keeps_answering(
        server: tuple[subprocess.Popen[bytes], str, Path]) -> None:
    import httpx

    child, url, log = server
    statuses: list[int] = []

    def runaway() -> None:
        statuses.append(httpx.post(f"{url}/api/sparql", json={"kb": "movies", "query": COUNTED}, timeout=60)
                        .status_code)

    with Sampler(child.pid) as sampler:
        threads = [threading.Thread(target=runaway) for _ in range(4)]
        for thread in threads:
            thread.start()
        time.sleep(2)
        light = httpx.post(f"{url}/api/sparql", json={"kb": "movies", "query": LIGHT}, timeout=15)  # within 15 s
        for thread in threads:
            thread.join(timeout=60)
        assert idle_within(child.pid, 20), "the server still burns CPU 20 s after the timeouts"
    assert light.status_code == 200 and light.json()["results"]["boolean"] is True
    assert statuses == [504] * 4
    assert sampler.peak < 2 * GB, f"peak RSS {sampler.peak / GB:.2f} GB"
    assert httpx.get(f"{url}/healthz", timeout=5).status_code == 200
    capped = httpx.post(f"{url}/api/sparql", json={"kb": "movies", "query": CARTESIAN}, timeout=15).json()
    assert capped["truncated"] is True and len(capped["results"]["results"]["bindings"]) == capped["rows"] == 10_000
    assert "Traceback" not in log.read_text()


# --- MCP ---------------------------------------------------------------------------------------------


def test_mcp_runaway_query_is_an_error_result_and_the_tool_answers_again(movies: str) -> None:
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    params = StdioServerParameters(command=sys.executable, env=env, cwd=str(REPO),
                                   args=["-m", "sparqlqa", "mcp", "--kb", movies, "--timeout", "3",
                                         "--query-memory", "256"])

    async def main() -> list[Any]:
        with anyio.fail_after(90):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                return [await session.call_tool("sparql", {"kb": movies, "query": query})
                        for query in (COUNTED, LIGHT)]

    runaway, light = anyio.run(main)
    text = runaway.content[0].text
    assert runaway.isError and ("time limit of 3 s" in text or "timed out after 3 s" in text), text
    assert "Traceback" not in text
    assert not light.isError and '"boolean": true' in light.content[0].text


# --- /healthz tells the truth ------------------------------------------------------------------------


def test_healthz_says_when_work_could_not_be_stopped(movies: str) -> None:
    from starlette.testclient import TestClient

    from sparqlqa.serve.app import create_app
    from sparqlqa.serve.service import OVERDUE_GRACE_S, ServeSettings, Service

    service = Service(ServeSettings(kbs=(movies,), timeout_s=5))
    with TestClient(create_app(service), base_url="http://127.0.0.1") as client:
        assert client.get("/healthz").status_code == 200
        service.busy[-1] = time.monotonic() - 5 - OVERDUE_GRACE_S - 1  # a request's thread stuck past its limit
        stuck = client.get("/healthz")
        assert stuck.status_code == 503 and "1 request(s) still at work" in stuck.json()["error"]
        del service.busy[-1]
        assert client.get("/healthz").status_code == 200
        late = service.bounded_work(lambda: service.sparql({"kb": movies, "query": LIGHT}), time.monotonic() - 1)
        with pytest.raises(QueryTimeout):  # a request whose time ran out while it waited for a thread
            late()
        assert service.busy == {}


# --- a remote KB: --timeout reaches the endpoint query ----------------------------------------------


def test_sparql_timeout_bounds_a_remote_kbs_query() -> None:
    from faults.helpers import cli
    from faults.test_fault_endpoint import SilentListener, remote_kb_at
    from sparqlqa.errors import EndpointError

    with SilentListener() as silent:
        remote_kb_at("slow", silent.url, timeout=600)  # the KB's own setting would hold the query 10 minutes
        code, output = cli("sparql", "slow", "ASK { ?s ?p ?o }", "--timeout", "1")
        assert_clean_failure(code, output, EndpointError.exit_code, silent.url, "within the 1 s timeout")
        remote_kb_at("quick", silent.url, timeout=0.5)  # without --timeout the KB's own (shorter) one holds
        code, output = cli("sparql", "quick", "ASK { ?s ?p ?o }")
        assert_clean_failure(code, output, EndpointError.exit_code, silent.url, "within the 0.5 s timeout")
