"""Bounded queries: run in worker processes that can be killed, or streamed in-process with a row cap.

**Why worker processes.**  pyoxigraph has no way to cancel a query from Python: ``Store.query``
returns an iterator whose evaluation runs in Rust, and a query that sorts, groups or joins
everything before its first row (``ORDER BY``, ``COUNT``, a cartesian product under ``DISTINCT``)
never comes back to Python until it is done.  A thread cannot be stopped either, so a deadline
checked in Python only stops queries that stream.  The only thing that really stops the work is
ending the process doing it.  So a query on an on-disk Oxigraph store is sent to a
:class:`QueryPool` worker (:mod:`sparqlqa.query.query_worker`) that

* opens the store **read-only** (RocksDB allows many read-only openers beside ours),
* limits its own address space to its present size + ``max_memory_mb`` (``RLIMIT_AS``) while a
  query runs, so a runaway cannot grow the machine's memory,
* streams the rows back in batches and stops reading them at ``max_rows`` (a row past the limit is
  never produced, let alone kept),

and the calling thread waits for messages only until the deadline: then the worker gets
``SIGKILL`` and the pool starts a fresh one on the next query.  CPU and memory are back at once,
and the caller (an HTTP request, an MCP tool, the CLI) gets :class:`~sparqlqa.errors.QueryTimeout`
or :class:`~sparqlqa.errors.QueryTooLarge`, never a thread still busy behind a 504.

A worker is a fresh interpreter (``python -S -c ... query_worker.main()``, a socket pair between us,
``multiprocessing.connection`` framing): safe to start from a server full of threads, and unlike
``multiprocessing``'s spawn and forkserver methods it never re-imports the caller's ``__main__``
(a script without an ``if __name__ == "__main__"`` guard would run again).  Starting one costs
an interpreter start (a fraction of a second), paid once: idle workers stay open (one per
concurrent query, at most ``size``), so a normal query pays a socket round trip and the pickling of
its rows (``benchmarks/bench_query_bounds.py`` measures it).

**No network.**  A worker cannot open a socket (a seccomp filter, :mod:`sparqlqa.query.sandbox`, set before it
reads a query), so a SERVICE the guard misread fails in Oxigraph and sends nothing.  A store that allows
SERVICE hosts (``Store.allow_service``: ``--allow-service``, a profile) runs its queries in a separate pool
started with ``network=True``, whose workers keep the network (a filter cannot tell one host from another).
Where the filter cannot be set (not Linux, no ``libseccomp.so.2``) one warning is logged per process and
the guard is the only line.

**Checking untrusted SPARQL.**  :func:`check_query` reads a query with Oxigraph (a user's, an LLM's) in a
worker of one pool of the process whose store is empty and in memory, under the scope's deadline and
memory limit: a query nested thousands of groups deep overflows the parser's stack there, not the
server's; one that computes millions of ``VALUES`` rows is killed at the deadline; a SERVICE meets the
filter.

A worker's stderr goes to ``/dev/null`` (a failed allocation in Rust prints a line before the process
aborts); ``SPARQLQA_WORKER_STDERR=1`` lets it through when debugging.

In-memory stores (tests, rdflib graphs) cannot be shared with another process; :func:`run_in_process`
streams their rows with the same row cap and checks the deadline between rows.  That bounds what
streams; it cannot stop a query that computes everything before its first row.  An untrusted query on
such a store (text2sparql over ``KnowledgeBase.in_memory``) is first read by :func:`check_query`: its
parser crash, a runaway that needs no data (``VALUES`` products) and a SERVICE stay in the worker, and only
then does it run here.  A worker cannot hold that store without a copy of its data, which would go stale
as the caller changes the store (tests do) and cost a load per worker; an in-memory store exists only in
the caller's own Python process (the CLI, ``serve`` and ``mcp`` open every KB from disk), so what remains
there (a runaway that needs the data, a ``SERVICE SILENT`` past the guard) is the caller's own.
"""

from __future__ import annotations

__all__ = ["DEFAULT_WORKERS", "Outcome", "QueryPool", "check_query", "read_untrusted", "run_in_process"]

import functools
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from sparqlqa.errors import QueryError, QueryTimeout, QueryTooLarge, StoreUnavailable
from sparqlqa.query.limits import QueryLimits, Scope, current
from sparqlqa.query.query_errors import syntax_error

#: concurrent queries (worker processes) per store, unless the store says otherwise
DEFAULT_WORKERS = 4
#: the worker's exit codes read as "it ran out of memory" (Rust aborts on a failed allocation)
_MEMORY_DEATHS = (-6, 134)
log = logging.getLogger(__name__)
#: set once the missing network filter was reported (one warning per process)
_UNSANDBOXED_WARNED = threading.Event()


@dataclass
class Outcome:
    """What a bounded query returned (before it becomes a :class:`~sparqlqa.kb.store.QueryResult`)."""

    variables: list[str] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    boolean: bool | None = None
    triples: list[Any] = field(default_factory=list)
    truncated: bool = False


def _worker_env() -> dict[str, str]:
    """The parent's environment, with this copy of sparqlqa first on the path, then the parent's own path:
    a worker starts without the ``site`` module (``python -S``: its ``.pth`` files are 0.016 of a worker's
    0.06 s CPU start), so the folders ``site`` gave the parent (pyoxigraph's) are named here."""
    here = str(Path(__file__).resolve().parents[2])  # the folder holding the sparqlqa package
    given = [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    folders = [here, *given, *(entry for entry in sys.path if os.path.isabs(entry) and os.path.isdir(entry))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(dict.fromkeys(folders)), "MALLOC_ARENA_MAX": "2"}


class _Worker:
    """One worker process and our end of its socket."""

    def __init__(self, path: Path | None, deadline: float, *, network: bool = False) -> None:
        ours, theirs = socket.socketpair()
        stderr = None if os.environ.get("SPARQLQA_WORKER_STDERR") == "1" else subprocess.DEVNULL
        where = str(path) if path is not None else "an empty store"
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-S", "-c", "from sparqlqa.query.query_worker import main; main()",
                 str(theirs.fileno()), str(path or ""), *(["network"] if network else [])], pass_fds=(theirs.fileno(),),
                env=_worker_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr, close_fds=True)
        except OSError as exc:
            ours.close()
            raise StoreUnavailable(where, f"cannot start a query worker: {exc}") from exc
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())
        try:
            message = _receive(self, deadline)
        except _Died as died:
            self.kill()
            raise StoreUnavailable(where, f"a query worker ended while opening it (exit code {died.exitcode})"
                                   ) from None
        except BaseException:
            self.kill()
            raise
        if message[0] != "ready":
            self.kill()
            raise StoreUnavailable(where, f"a query worker could not open it: {message[-1]}")
        #: "on" (no network), "off" (allowed SERVICE hosts), or why the network filter could not be set
        self.sandbox: str = message[2]
        if self.sandbox not in ("on", "off"):
            _warn_unsandboxed(self.sandbox)

    def kill(self) -> None:
        """SIGKILL (nothing to clean up: the store is open read-only) and reap it."""
        if self.process.poll() is None:
            self.process.kill()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.conn.close()

    def exitcode(self) -> int | None:
        try:
            return self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None


def _warn_unsandboxed(reason: str) -> None:
    if not _UNSANDBOXED_WARNED.is_set():
        _UNSANDBOXED_WARNED.set()
        log.warning("query workers keep the network: %s; only the SERVICE guard stands between a query and "
                    "the network", reason)


class _Stopped(Exception):
    """The deadline passed while waiting for a worker's message."""


class _Died(Exception):
    """The worker ended while a query ran (its exit code)."""

    def __init__(self, exitcode: int | None) -> None:
        super().__init__(exitcode)
        self.exitcode = exitcode


@contextmanager
def _worker_failures(limits: QueryLimits) -> Iterator[None]:
    """A worker stopped at the deadline → :class:`~sparqlqa.errors.QueryTimeout`; one that died → the error its
    death means (the memory limit, a parser crash, or an unexpected end)."""
    try:
        yield
    except _Stopped:
        raise QueryTimeout(limits.timeout_s) from None
    except _Died as died:
        if died.exitcode in _MEMORY_DEATHS:
            raise QueryTooLarge("memory", limits.max_memory_mb) from None
        if died.exitcode == -signal.SIGSEGV:
            raise QueryError("the query worker crashed reading the query (signal 11; a query nested "
                             "thousands of levels deep does this)", hint="nest fewer groups") from None
        raise QueryError(f"the query worker ended unexpectedly (exit code {died.exitcode})",
                         hint="run the query again; if it keeps happening, narrow it") from None


def _receive(worker: _Worker, deadline: float) -> tuple[Any, ...]:
    left = deadline - time.monotonic()
    if left <= 0 or not worker.conn.poll(left):
        raise _Stopped
    try:
        message: tuple[Any, ...] = worker.conn.recv()
    except (EOFError, OSError):
        raise _Died(worker.exitcode()) from None
    return message


class QueryPool:
    """Worker processes answering queries on the on-disk store at ``path`` (at most ``size`` at once;
    ``path`` ``None``: an empty store, to check queries); ``network``: the workers may open sockets (a
    store whose SERVICE hosts are allowed), else they cannot (:mod:`sparqlqa.query.sandbox`)."""

    def __init__(self, path: Path | None, size: int = DEFAULT_WORKERS, *, network: bool = False) -> None:
        self.path = path
        self.size = max(1, size)
        self.network = network
        self._idle: list[_Worker] = []
        self._live = 0
        self._closed = False
        self._cond = threading.Condition()

    def run(self, sparql: str, scope: Scope) -> Outcome:
        """Run ``sparql`` in a worker under ``scope``'s limits and deadline."""
        limits = scope.limits
        worker = self._acquire(scope)
        healthy = False
        try:
            with _worker_failures(limits):
                worker.conn.send(("query", sparql, limits.max_rows, limits.max_memory_mb))
                outcome, grown = self._collect(worker, sparql, scope)
            healthy = not grown  # a worker that answered (even with an error) is reused, unless it grew
            if isinstance(outcome, QueryError):
                raise outcome
            return outcome
        finally:
            self._release(worker, healthy)

    def read(self, text: str, scope: Scope) -> Any:
        """The SPARQL guard's reading of ``text`` (a :class:`~sparqlqa.query.sparql_reading.QueryReading`), read in
        a worker under ``scope``'s deadline and memory limit; the guard's refusal is raised as it was raised there."""
        worker = self._acquire(scope)
        healthy = False
        try:
            with _worker_failures(scope.limits):
                worker.conn.send(("read", text, scope.limits.max_memory_mb))
                kind, value, grown = _receive(worker, scope.deadline)
            healthy = not grown and kind != "error"  # one that ran out of memory is replaced
            if kind == "refused":
                raise value
            if kind != "reading":
                raise QueryTooLarge("memory", scope.limits.max_memory_mb)
            return value
        finally:
            self._release(worker, healthy)

    def _collect(self, worker: _Worker, sparql: str, scope: Scope) -> tuple[Outcome | QueryError, bool]:
        """The worker's answer (or the error it reported) and whether it grew too much."""
        outcome = Outcome()
        while True:
            kind, *rest = _receive(worker, scope.deadline)
            if kind == "head":
                outcome.variables = rest[0]
            elif kind == "rows":
                outcome.rows.extend(rest[0])
            elif kind == "triples":
                outcome.triples.extend(rest[0])
            elif kind == "boolean":
                outcome.boolean = rest[0]
            elif kind == "done":
                overflow, grown = rest
                if overflow and not scope.limits.truncate:
                    return QueryTooLarge("rows", scope.limits.max_rows), grown
                outcome.truncated = overflow
                return outcome, grown
            else:  # an error the worker caught: it stays usable, unless memory ran out
                return _error(rest[0], rest[1], sparql, scope), rest[0] == "memory"

    def _acquire(self, scope: Scope) -> _Worker:
        with self._cond:
            while True:
                if self._closed:
                    raise QueryError("the store was closed while a query waited for it", hint="run it again")
                if self._idle:
                    return self._idle.pop()
                if self._live < self.size:
                    self._live += 1
                    break
                left = scope.remaining()
                if left <= 0:
                    raise QueryTimeout(scope.limits.timeout_s, waited=True)
                self._cond.wait(left)
        try:
            return _Worker(self.path, scope.deadline, network=self.network)
        except _Stopped:
            self._forget()
            raise QueryTimeout(scope.limits.timeout_s) from None
        except BaseException:
            self._forget()
            raise

    def _forget(self) -> None:
        with self._cond:
            self._live -= 1
            self._cond.notify()

    def _release(self, worker: _Worker, healthy: bool) -> None:
        """Back to the idle workers, or killed (stopped, failed, or the pool closed): a fresh one comes next."""
        with self._cond:
            keep = healthy and not self._closed
            if keep:
                self._idle.append(worker)
                self._cond.notify()
        if not keep:
            worker.kill()
            self._forget()

    def close(self) -> None:
        """End every idle worker; busy ones end when their query does."""
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._live -= len(idle)
            self._cond.notify_all()
        for worker in idle:
            worker.kill()

    @property
    def workers(self) -> int:
        """Worker processes alive now."""
        return self._live


_CHECKER_LOCK = threading.Lock()


def check_query(sparql: str, scope: Scope | None = None) -> None:
    """Read ``sparql`` (untrusted: a user's, an LLM's) with Oxigraph in a worker without network whose store is
    empty, under ``scope`` (or the current one; else the default limits): :class:`~sparqlqa.errors.SparqlSyntaxError`,
    :class:`~sparqlqa.errors.QueryTimeout`, :class:`~sparqlqa.errors.QueryTooLarge` or
    :class:`~sparqlqa.errors.QueryError` (it failed, even on no data: a SERVICE meeting the filter)."""
    scope = scope or current() or Scope(QueryLimits(), time.monotonic() + QueryLimits().timeout_s)
    _checker().run(sparql, Scope(replace(scope.limits, max_rows=1, truncate=True), scope.deadline))


def read_untrusted(text: str, scope: Scope) -> Any:
    """The SPARQL guard's reading of an untrusted ``text`` (:func:`sparqlqa.query.sparql_reading.read_query` in a
    bounded scope), read by a worker of the reading pool: rdflib's parser is pure Python and recursive, so a
    query nested thousands of groups deep costs the reader a fraction of a second of CPU and its memory; there it
    counts against the scope's deadline and memory limit, not the server's, and a runaway parse is killed.  A
    pool of its own, not the checking pool: runaway checks held until their deadline cannot hold up readings."""
    return _checker("read").read(text, scope)


def _checker(purpose: str = "check") -> QueryPool:
    """The process's pool of workers on an empty store for ``purpose`` (``check``: :func:`check_query`, ``read``:
    :func:`read_untrusted`), started on first use; its workers end with the process."""
    with _CHECKER_LOCK:
        return _checker_of(purpose, os.getpid())  # a fork has its own pid, so starts its own pools


@functools.cache
def _checker_of(purpose: str, pid: int) -> QueryPool:
    """The pool for ``purpose`` of process ``pid``, started on its first call."""
    return QueryPool(None, DEFAULT_WORKERS)


def _error(kind: str, message: str, sparql: str, scope: Scope) -> QueryError:
    if kind == "syntax":
        return syntax_error(sparql, SyntaxError(message))
    if kind == "memory":
        return QueryTooLarge("memory", scope.limits.max_memory_mb)
    return QueryError(f"the query failed in Oxigraph: {message}")


def run_in_process(oxstore: Any, sparql: str, scope: Scope) -> Outcome:
    """Run ``sparql`` on ``oxstore`` here, streaming: at most ``max_rows`` rows are read, and the
    deadline is checked between rows (a query that computes everything first is not stopped)."""
    from pyoxigraph import QueryBoolean, QuerySolutions

    limits = scope.limits
    try:
        raw = oxstore.query(sparql, use_default_graph_as_union=True)
    except SyntaxError as exc:
        raise syntax_error(sparql, exc) from exc
    except OSError as exc:
        raise QueryError(f"the query failed in Oxigraph: {exc}") from exc
    if isinstance(raw, QueryBoolean):
        return Outcome(boolean=bool(raw))
    outcome = Outcome()
    items: Any = raw
    kept: list[Any] = outcome.triples
    if isinstance(raw, QuerySolutions):
        outcome.variables = [v.value for v in raw.variables]
        width = range(len(outcome.variables))
        items, kept = (tuple(s[i] for i in width) for s in raw), outcome.rows
    for item in items:
        if time.monotonic() > scope.deadline:
            raise QueryTimeout(limits.timeout_s)
        if len(kept) == limits.max_rows:
            if not limits.truncate:
                raise QueryTooLarge("rows", limits.max_rows)
            outcome.truncated = True
            break
        kept.append(item)
    return outcome
