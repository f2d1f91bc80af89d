"""Queries are bounded in time, rows and memory, and stopped at the bound (sparqlqa/query/limits.py, query_pool.py).

On-disk stores run bounded queries in worker processes: a query past its deadline kills its worker
(the process is gone afterwards, the next query gets a fresh one), a row past the limit is never
read, and a query past its memory limit is stopped.  In-memory stores stream in-process.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pyoxigraph import NamedNode, Quad, Triple
from pyoxigraph import Store as OxStore

from sparqlqa.cli import main
from sparqlqa.errors import ConfigError, QueryError, QueryTimeout, QueryTooLarge, StoreUnavailable
from sparqlqa.kb.store import OxigraphStore
from sparqlqa.query import query_worker
from sparqlqa.query.limits import QueryLimits, bounded, current, unbounded
from sparqlqa.query.query_pool import run_in_process
from sparqlqa.serve.service import status_of

#: triples in the test stores: a chain, so a pattern joined with itself is NODES² rows
NODES = 3000
CARTESIAN = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"  # 2.7e10 rows: never finishes
HUGE_SORT = "SELECT DISTINCT ?a ?c ?d ?f WHERE { ?a ?b ?c . ?d ?e ?f } ORDER BY ?a ?f"  # 9e6 rows held at once


def _chain(store: OxStore) -> None:
    store.extend(Quad(NamedNode(f"http://x/{i}"), NamedNode("http://x/next"), NamedNode(f"http://x/{i + 1}"))
                 for i in range(NODES))


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("chain") / "store"
    writer = OxStore(str(path))
    _chain(writer)
    writer.flush()
    del writer
    return path


@pytest.fixture
def disk(store_dir: Path) -> Iterator[OxigraphStore]:
    store = OxigraphStore.open(store_dir)
    yield store
    store.close()


@pytest.fixture
def memory() -> OxigraphStore:
    store = OxigraphStore.in_memory()
    _chain(store.oxstore)
    return store


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _worker_pids(store: OxigraphStore) -> list[int]:
    pool = store._pool
    return [w.process.pid for w in pool._idle] if pool is not None else []


# --- limits and scopes ---------------------------------------------------------------------------


def test_nested_scopes_keep_the_tighter_bounds() -> None:
    with bounded(QueryLimits(timeout_s=5, max_rows=10, max_memory_mb=100)) as outer:
        with bounded(QueryLimits(timeout_s=500, max_rows=1000, max_memory_mb=1000)) as inner:
            assert inner.deadline == outer.deadline
            assert (inner.limits.max_rows, inner.limits.max_memory_mb) == (10, 100)
            with unbounded():
                assert current() is None
        assert current() is outer


@pytest.mark.parametrize("field, value", [("timeout_s", 0), ("max_rows", 0), ("max_memory_mb", 1)])
def test_nonsense_limits_are_refused(field: str, value: Any) -> None:
    with pytest.raises(ConfigError):
        QueryLimits(**{field: value})


def test_errors_name_the_limit_and_the_option_that_raises_it() -> None:
    timeout, rows, memory = QueryTimeout(5), QueryTooLarge("rows", 100_000), QueryTooLarge("memory", 512)
    assert "5 s" in timeout.message and "--timeout" in (timeout.hint or "")
    assert "100,000 rows" in rows.message and "--max-rows" in (rows.hint or "")
    assert "512 MB" in memory.message and "--max-memory" in (memory.hint or "")
    assert "--query-memory" in (memory.hint or "")
    assert (status_of(timeout), status_of(rows), status_of(memory)) == (504, 413, 413)


# --- rows are capped while they stream -----------------------------------------------------------


class Counting:
    """An iterator that counts how many items were taken from it."""

    def __init__(self, n: int) -> None:
        self.taken = 0
        self.n = n

    def __iter__(self) -> Counting:
        return self

    def __next__(self) -> Triple:
        if self.taken == self.n:
            raise StopIteration
        self.taken += 1
        return Triple(NamedNode("http://x/s"), NamedNode("http://x/p"), NamedNode(f"http://x/{self.taken}"))


class FakeConn:
    def __init__(self) -> None:
        self.sent: list[Any] = []

    def send(self, message: Any) -> None:
        self.sent.append(message)


def test_the_worker_reads_one_row_past_the_limit_and_no_more() -> None:
    rows, conn = Counting(1_000_000), FakeConn()
    assert query_worker._stream(conn, "triples", rows, 5) is True  # type: ignore[arg-type]
    assert rows.taken == 6 and sum(len(batch) for _, batch in conn.sent) == 5


def test_in_process_rows_stop_at_the_limit() -> None:
    class Fake:
        def __init__(self) -> None:
            self.rows = Counting(1_000_000)

        def query(self, sparql: str, **kwargs: Any) -> Counting:
            return self.rows

    fake = Fake()
    with bounded(QueryLimits(max_rows=7, truncate=True)) as scope:
        outcome = run_in_process(fake, "CONSTRUCT WHERE { ?s ?p ?o }", scope)
    assert len(outcome.triples) == 7 and outcome.truncated and fake.rows.taken == 8
    with bounded(QueryLimits(max_rows=7)) as scope, pytest.raises(QueryTooLarge, match="more than 7 rows"):
        run_in_process(Fake(), "CONSTRUCT WHERE { ?s ?p ?o }", scope)


@pytest.mark.parametrize("where", ["memory", "disk"])
def test_row_limit_raises_or_truncates(where: str, request: pytest.FixtureRequest) -> None:
    store: OxigraphStore = request.getfixturevalue(where)
    query = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }"  # 9 million rows
    with pytest.raises(QueryTooLarge, match="more than 10 rows") as info:
        store.query(query, limits=QueryLimits(max_rows=10))
    assert "--max-rows" in (info.value.hint or "")
    result = store.query(query, limits=QueryLimits(max_rows=10, truncate=True))
    assert len(result.rows) == 10 and result.truncated
    whole = store.query("SELECT * WHERE { ?a ?b ?c }", limits=QueryLimits(max_rows=NODES))
    assert len(whole.rows) == NODES and not whole.truncated


def test_a_bounded_query_answers_like_an_unbounded_one(disk: OxigraphStore) -> None:
    for query in ["SELECT ?o WHERE { <http://x/1> ?p ?o }", "ASK { <http://x/1> ?p ?o }",
                  "CONSTRUCT WHERE { <http://x/1> ?p ?o }", "DESCRIBE <http://x/2>"]:
        free, bound = disk.query(query), disk.query(query, limits=QueryLimits())
        assert (bound.form, bound.variables, bound.rows, bound.boolean) == (free.form, free.variables, free.rows,
                                                                            free.boolean)
        assert sorted(map(str, bound.triples)) == sorted(map(str, free.triples))
    assert disk._pool is not None and disk._pool.workers == 1  # one worker, reused


def test_unbounded_queries_run_in_this_process(disk: OxigraphStore) -> None:
    assert len(disk.query("SELECT * WHERE { ?a ?b ?c }").rows) == NODES
    assert disk._pool is None


def test_a_read_only_store_is_opened_here_only_for_a_query_run_here(store_dir: Path, tmp_path: Path) -> None:
    """Bounded queries run in workers that open the store themselves: this process opens it on its first
    unbounded query (a cold ask opens it once, in its worker); a missing folder is still refused at once."""
    store = OxigraphStore.open(store_dir)
    try:
        assert store.query("ASK { <http://x/1> ?p ?o }", limits=QueryLimits()).boolean is True
        assert store._oxstore is None
        assert store.query("ASK { <http://x/1> ?p ?o }").boolean is True and store._oxstore is not None
    finally:
        store.close()
    with pytest.raises(StoreUnavailable, match="the folder is missing"):
        OxigraphStore.open(tmp_path / "nowhere")
    (tmp_path / "garbage").mkdir()
    (tmp_path / "garbage" / "CURRENT").write_text("not a store")
    broken = OxigraphStore.open(tmp_path / "garbage")
    try:
        for limits in (None, QueryLimits()):  # here, and in a worker
            with pytest.raises(StoreUnavailable, match="cannot open the store"):
                broken.query("ASK { ?s ?p ?o }", limits=limits)
    finally:
        broken.close()


# --- the deadline stops the work -----------------------------------------------------------------


def test_a_runaway_query_is_stopped_and_its_worker_killed(disk: OxigraphStore) -> None:
    disk.query("ASK { ?s ?p ?o }", limits=QueryLimits())
    [pid] = _worker_pids(disk)
    with pytest.raises(QueryTimeout, match="time limit of 1 s") as info:
        disk.query(CARTESIAN, limits=QueryLimits(timeout_s=1))
    assert "--timeout" in (info.value.hint or "")
    assert not _alive(pid)  # killed and reaped: no work goes on
    assert disk._pool is not None and disk._pool.workers == 0
    assert disk.query("ASK { ?s ?p ?o }", limits=QueryLimits()).boolean is True  # a fresh worker
    assert _worker_pids(disk) != [pid]


def test_queries_of_a_scope_share_its_deadline(disk: OxigraphStore) -> None:
    with bounded(QueryLimits(timeout_s=1)):
        with pytest.raises(QueryTimeout):
            disk.query(CARTESIAN)
        with pytest.raises(QueryTimeout):  # the time is spent: refused before any worker is used
            disk.query("ASK { ?s ?p ?o }")
    assert disk._pool is not None and disk._pool.workers == 0


def test_in_process_queries_check_the_deadline_between_rows(memory: OxigraphStore) -> None:
    with pytest.raises(QueryTimeout):
        memory.query("SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }",
                     limits=QueryLimits(timeout_s=0.5, max_rows=10**9))


# --- memory --------------------------------------------------------------------------------------


def test_a_query_past_its_memory_limit_is_stopped(disk: OxigraphStore) -> None:
    with pytest.raises(QueryTooLarge, match="more than 64 MB") as info:
        disk.query(HUGE_SORT, limits=QueryLimits(timeout_s=60, max_rows=10**9, max_memory_mb=64))
    assert "--max-memory" in (info.value.hint or "")
    assert disk.query("ASK { ?s ?p ?o }", limits=QueryLimits()).boolean is True


# --- the command line ----------------------------------------------------------------------------


def test_cli_sparql_reports_the_limit_it_hit(movies_kb: Any) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["sparql", "movies", "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }", "--max-rows", "3"])
    assert result.exit_code == 1 and "more than 3 rows" in result.output and "--max-rows" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    ok = runner.invoke(main, ["sparql", "movies", "SELECT * WHERE { ?s ?p ?o } LIMIT 2", "--format", "tsv",
                              "--max-rows", "2", "--timeout", "30", "--max-memory", "256"])
    assert ok.exit_code == 0 and len(ok.output.strip().splitlines()) == 3
    bad = runner.invoke(main, ["sparql", "movies", "ASK {}", "--timeout", "0"])
    assert bad.exit_code == 2 and "--timeout" in bad.output


def test_cli_sparql_has_a_deadline_by_default() -> None:
    from sparqlqa.cli.kb_commands import sparql
    from sparqlqa.query.limits import DEFAULT_TIMEOUT_S

    defaults = {param.name: param.default for param in sparql.params}
    assert defaults["timeout_s"] == DEFAULT_TIMEOUT_S == 60 and defaults["max_rows"] == 100_000
    assert defaults["max_memory_mb"] == 512


def test_ask_bounds_every_query_of_the_pipeline(movies_kb: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from sparqlqa.kb.store import Store
    from sparqlqa.strategies.ask import ask

    ask(movies_kb, "Which films did Ridley Scott direct?", strategy="offline", rerank="none")  # indexes built
    seen: list[float | None] = []
    original = Store._timed

    def spy(self: Store, sparql: str, form: str) -> Any:
        scope = current()
        seen.append(scope.limits.timeout_s if scope is not None else None)
        return original(self, sparql, form)

    monkeypatch.setattr(Store, "_timed", spy)
    answer = ask(movies_kb, "Which films did Ridley Scott direct?", strategy="offline", rerank="none",
                 limits=QueryLimits(timeout_s=42))
    assert answer.items and seen and set(seen) == {42}
    with pytest.raises(QueryTimeout), bounded(QueryLimits(timeout_s=0.001)):  # the whole run shares one deadline
        time.sleep(0.01)
        ask(movies_kb, "Which films did Ridley Scott direct?", strategy="offline", rerank="none")


def test_a_worker_survives_a_bad_query_and_the_row_limit(disk: OxigraphStore) -> None:
    disk.query("ASK { ?s ?p ?o }", limits=QueryLimits())
    [pid] = _worker_pids(disk)
    with pytest.raises(QueryError, match="invalid SPARQL"):
        disk.query("SELECT * WHERE { ?s ?p }", limits=QueryLimits())
    with pytest.raises(QueryTooLarge):
        disk.query("SELECT * WHERE { ?s ?p ?o }", limits=QueryLimits(max_rows=3))
    assert _worker_pids(disk) == [pid] and _alive(pid)


def test_derived_data_is_built_outside_the_limits(movies_kb: Any) -> None:
    with bounded(QueryLimits(max_rows=1)):
        rows = movies_kb.remember("every triple", lambda: len(movies_kb.query("SELECT * WHERE { ?s ?p ?o }").rows))
        assert rows > 1  # the build ran unbounded (in this process) ...
        with pytest.raises(QueryTooLarge):  # ... while the scope's own queries stay bounded
            movies_kb.query("SELECT * WHERE { ?s ?p ?o }")


def test_the_workers_channel_speaks_multiprocessing_connection_framing() -> None:
    """The worker frames its messages itself (no ``multiprocessing`` import at its start); the pool reads them
    with a real ``Connection``: both ways, a short message and one past ``Connection``'s 16 KiB split."""
    import socket
    from multiprocessing.connection import Connection

    ours, theirs = socket.socketpair()
    parent, worker = Connection(ours.detach()), query_worker.Channel(theirs.detach())
    rows = [(NamedNode(f"http://x/{i}"), None) for i in range(2000)]
    try:
        worker.send(("head", ["s", "o"]))
        worker.send(("rows", rows))
        assert parent.recv() == ("head", ["s", "o"]) and parent.recv() == ("rows", rows)
        parent.send(("query", "ASK {}", 10, 512))
        parent.send(("read", "x" * 100_000, 512))
        assert worker.recv() == ("query", "ASK {}", 10, 512) and worker.recv() == ("read", "x" * 100_000, 512)
        parent.close()
        with pytest.raises(EOFError):
            worker.recv()
    finally:
        os.close(worker.fd)
