"""Query workers have no network (issue 33 item 2: sparqlqa/query/sandbox.py) and untrusted SPARQL is read only in a
bounded worker (item 3: ``query_pool.check_query``).  The ground truth is a canary listener on 127.0.0.1: the
queries below go in *under* the SERVICE guard (the worker layer, ``Store._execute``), as a guard bug would let
them through."""

from __future__ import annotations

import ctypes
import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_servers import FakeSparqlServer, Scripted
from proc_tree import cpu, tree

from sparqlqa.errors import QueryError, QueryTimeout, SparqlSyntaxError
from sparqlqa.kb.store import OxigraphStore
from sparqlqa.query import query_pool
from sparqlqa.query.limits import QueryLimits, Scope, bounded
from sparqlqa.query.query_pool import QueryPool, check_query
from sparqlqa.query.sandbox import LIBRARY, deny_network

ROWS = {"head": {"vars": ["o"]}, "results": {"bindings": [{"o": {"type": "literal", "value": "from-the-canary"}}]}}
#: 6,000 nested groups: Oxigraph's parser overflows its stack on it
DEEP = "SELECT * WHERE " + "{" * 6000 + " ?s ?p ?o " + "}" * 6000
#: four 110-value VALUES: 146 million rows before the FILTER, on no data at all
RUNAWAY = "ASK { " + " ".join(f"VALUES ?{v} {{ {' '.join(map(str, range(110)))} }}" for v in "abcd") + \
    " FILTER(?a + ?b + ?c + ?d < 0) }"


def _filter_available() -> bool:
    try:
        return sys.platform.startswith("linux") and bool(ctypes.CDLL(LIBRARY))
    except OSError:
        return False


#: where there is no seccomp the guard is the only line (one warning): these cases test the filter itself
needs_filter = pytest.mark.skipif(not _filter_available(), reason=f"no {LIBRARY}: no network filter here")


@pytest.fixture
def canary() -> Iterator[FakeSparqlServer]:
    with FakeSparqlServer() as server:
        server.script(Scripted(body=ROWS), Scripted(body=ROWS))
        yield server


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    from pyoxigraph import Store

    path = tmp_path / "store"
    Store(str(path)).flush()
    return path


def scope(seconds: float = 20) -> Scope:
    return Scope(QueryLimits(timeout_s=seconds), time.monotonic() + seconds)


def service(url: str) -> str:
    return f"SELECT * WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}"


@needs_filter
def test_a_worker_without_network_fails_cleanly_and_the_canary_sees_nothing(
        store_path: Path, canary: FakeSparqlServer) -> None:
    pool = QueryPool(store_path, 1)
    try:
        for query in (service(canary.url), service(canary.url).replace("SERVICE", "SERVICE SILENT")):
            try:
                outcome = pool.run(query, scope())
            except QueryError as exc:
                assert "Permission denied" in exc.message, exc.message
            else:  # SILENT: the failed call is an empty solution
                assert outcome.rows in ([], [(None, None, None)])
        assert pool.workers == 1 and pool._idle[0].sandbox == "on"  # the same worker answered both, still there
        assert pool.run("ASK { }", scope()).boolean is True
    finally:
        pool.close()
    assert canary.seen == []


def test_a_worker_for_a_run_that_allows_service_reaches_the_host(store_path: Path, canary: FakeSparqlServer) -> None:
    pool = QueryPool(store_path, 1, network=True)
    try:
        outcome = pool.run(service(canary.url), scope())
        assert pool._idle[0].sandbox == "off"
    finally:
        pool.close()
    column = outcome.variables.index("o")
    assert [str(row[column]) for row in outcome.rows] == ['"from-the-canary"']
    assert len(canary.seen) == 1


@needs_filter
def test_the_store_picks_the_pool_by_its_allowance(store_path: Path, canary: FakeSparqlServer) -> None:
    store = OxigraphStore.open(store_path)
    try:
        with bounded(QueryLimits(timeout_s=20)):
            with pytest.raises(QueryError, match="Permission denied"):
                store._execute(service(canary.url), "SELECT")  # below the guard
            assert canary.seen == [] and store._network_pool is None
            store.allow_service = frozenset({canary.url.split("/")[2]})
            result = store.query(service(canary.url))
        assert len(result.rows) == 1 and len(canary.seen) == 1
        assert store._pool is not None and store._network_pool is not None
    finally:
        store.close()
    assert store._pool is None and store._network_pool is None


@needs_filter
def test_checking_a_query_never_reaches_the_network(canary: FakeSparqlServer) -> None:
    for query in (service(canary.url), "ASK { " + service(canary.url)[len("SELECT * WHERE { "):]):
        with pytest.raises(QueryError, match="Permission denied"):
            check_query(query, scope())
    check_query(service(canary.url).replace("SERVICE", "SERVICE SILENT"), scope())
    assert canary.seen == []
    with pytest.raises(SparqlSyntaxError, match="line 1"):
        check_query("SELECT * WHERE { ?s ?p }", scope())
    check_query("SELECT * WHERE { ?s ?p ?o } ORDER BY ?s", scope())


def test_a_query_nested_6000_deep_is_a_clean_error_here() -> None:
    with pytest.raises(QueryError, match="nested"):
        check_query(DEEP, scope())
    check_query("ASK { ?s ?p ?o }", scope())  # a fresh worker answers next


def test_a_runaway_check_stops_at_the_deadline_and_its_worker_is_killed() -> None:
    check_query("ASK { }", scope())  # the checking pool is up
    start = time.monotonic()
    with pytest.raises(QueryTimeout):
        check_query(RUNAWAY, scope(2))
    assert time.monotonic() - start < 6
    before = cpu(tree(os.getpid())[1:])
    time.sleep(1)
    after = cpu(tree(os.getpid())[1:])
    assert sum(after[pid] - before[pid] for pid in after if pid in before) < 0.2  # nothing left working


@needs_filter
def test_the_filter_denies_every_socket_but_a_unix_one() -> None:
    code = """
import socket, sys
from sparqlqa.query.sandbox import LIBRARY, deny_network
assert deny_network() is None
a, b = socket.socketpair(); a.send(b"x"); assert b.recv(1) == b"x"
for family in (socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK, socket.AF_PACKET):
    try:
        socket.socket(family, socket.SOCK_DGRAM)
    except PermissionError:
        continue
    sys.exit(f"family {family} opened")
print("denied")
"""
    assert "cannot be loaded" in (deny_network("libseccomp-missing.so.0") or "")  # nothing set, the reason
    assert "not a usable libseccomp" in (deny_network("libc.so.6") or "")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert done.returncode == 0 and done.stdout.strip() == "denied", done.stderr


def test_without_the_filter_the_pool_warns_once(caplog: pytest.LogCaptureFixture,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(query_pool, "_UNSANDBOXED_WARNED", type(query_pool._UNSANDBOXED_WARNED)())
    with caplog.at_level(logging.WARNING, logger="sparqlqa.query.query_pool"):
        query_pool._warn_unsandboxed("libseccomp.so.2 cannot be loaded")
        query_pool._warn_unsandboxed("libseccomp.so.2 cannot be loaded")
    assert [r.getMessage() for r in caplog.records] == [
        "query workers keep the network: libseccomp.so.2 cannot be loaded; only the SERVICE guard stands between "
        "a query and the network"]
