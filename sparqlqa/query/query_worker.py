"""The process side of :mod:`sparqlqa.query.query_pool`: one worker answering queries on one on-disk store.

:func:`serve` runs in a child process.  It opens the store read-only, says ``("ready", pid)`` and
then answers one request at a time, ``("query", sparql, max_rows, max_memory_mb)``, with messages:

* ``("head", variables)`` then ``("rows", [row, ...])`` batches (SELECT), or ``("triples", [...])``
  batches (CONSTRUCT, DESCRIBE), or ``("boolean", value)`` (ASK);
* ``("done", overflow, grown)`` — ``overflow``: more than ``max_rows`` rows exist; none past the limit
  was read, so a runaway result never fills the worker or the parent; ``grown``: the worker's resident
  memory grew by more than half ``max_memory_mb`` since it started (the pool then replaces it);
* ``("error", kind, message)`` — ``kind``: ``syntax``, ``memory`` or ``failed``.

A request ``("read", text, max_memory_mb)`` asks instead for the SPARQL guard's reading of an
untrusted text (no store involved), under the same memory bound; the answer is one message,
``("reading", QueryReading, grown)``, ``("refused", QueryError, grown)`` (the guard's error, pickled
whole) or ``("error", "memory", grown)``.

While a query runs, the address space may grow by ``max_memory_mb`` at most (``RLIMIT_AS``): an
allocation past it fails, and the worker answers ``memory`` (or dies, when Oxigraph's Rust code
aborts on it; the parent reads that death as the memory limit).  The worker ends when its parent
does (an end-of-file on its socket, or a watchdog that sees it orphaned while a query runs).
"""

from __future__ import annotations

__all__ = ["main", "serve"]

import os
import pickle
import resource
import signal
import struct
import sys
import threading
import time

TYPE_CHECKING = False  # typing's, without importing typing (see sparqlqa/__init__)
if TYPE_CHECKING:
    from typing import Any

#: rows (or triples) per message, and the longest a batch waits before it is sent (seconds)
BATCH_ROWS = 2000
BATCH_SECONDS = 0.05
#: how often a worker checks that its parent is still there (seconds)
ORPHAN_CHECK_SECONDS = 0.5


def main() -> None:
    """Entry point of a worker process: ``python -S -c '...main()' FD PATH [network]`` (FD: its end of the
    socket pair; PATH empty: an empty in-memory store; ``network``: keep the network, for allowed SERVICEs)."""
    fd, path = int(sys.argv[1]), sys.argv[2]
    serve(Channel(fd), path, network=sys.argv[3:] == ["network"])


class Channel:
    """The worker's end of the socket pair, framed as ``multiprocessing.connection.Connection`` frames it (a
    4-byte big-endian length, or -1 and an 8-byte one, then a pickle) without importing ``multiprocessing``:
    that import is 0.03 of a worker's 0.05 s CPU start (benchmarks/RESULTS.md "Cold ask"), paid by every
    cold ``ask``.  The parent reads and writes it with a real ``Connection``."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def send(self, message: Any) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        size = len(data)
        header = struct.pack("!i", size) if size <= 0x7FFFFFFF else struct.pack("!iQ", -1, size)
        view = memoryview(header + data)
        while view:
            view = view[os.write(self.fd, view):]

    def recv(self) -> Any:
        size = struct.unpack("!i", self._read(4))[0]
        if size == -1:
            size = struct.unpack("!Q", self._read(8))[0]
        return pickle.loads(self._read(size))

    def _read(self, size: int) -> bytes:
        chunks: list[bytes] = []
        while size:
            chunk = os.read(self.fd, min(size, 1 << 20))
            if not chunk:
                raise EOFError
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)


def serve(conn: Channel, path: str, *, network: bool = False) -> None:
    """Answer queries on the store at ``path`` (``""``: an empty one) until the parent closes the pipe or
    sends ``None``; without ``network``, no socket can be opened from here on."""
    from sparqlqa.query.sandbox import deny_network

    sandbox = "off" if network else deny_network() or "on"  # first: before any thread or query
    from pyoxigraph import Store

    _detach()
    try:
        store = Store.read_only(path) if path else Store()
    except OSError as exc:
        conn.send(("error", "open", str(exc)))
        return
    conn.send(("ready", os.getpid(), sandbox))
    start = resident()
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        try:
            if request[0] == "read":
                _, text, max_memory_mb = request
                answer = _read(text, max_memory_mb)
                conn.send((*answer, resident() - start > max_memory_mb * 1024 * 1024 // 2))
                continue
            _, sparql, max_rows, max_memory_mb = request
            overflow = _answer(conn, store, sparql, max_rows, max_memory_mb)
            if overflow is not None:
                conn.send(("done", overflow, resident() - start > max_memory_mb * 1024 * 1024 // 2))
        except (BrokenPipeError, EOFError, ConnectionError):
            return


def _detach() -> None:
    """Leave Ctrl-C to the parent; one malloc arena (less address space reserved); die with the parent:
    a watchdog thread ends the process once it is orphaned (Oxigraph releases the GIL while it works)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None).mallopt(-8, 1)  # M_ARENA_MAX
        except (OSError, AttributeError):
            pass
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(ORPHAN_CHECK_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="sparqlqa-orphan-watch", daemon=True).start()


def resident() -> int:
    """Resident memory of this process in bytes (0 without ``/proc``)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _answer(conn: Channel, store: Any, sparql: str, max_rows: int, max_memory_mb: int) -> bool | None:
    """Send the result; whether rows were left over (``None``: an error was sent instead)."""
    from pyoxigraph import QueryBoolean, QuerySolutions

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    try:
        _limit_address_space(max_memory_mb, hard)
        try:
            raw = store.query(sparql, use_default_graph_as_union=True)
            if isinstance(raw, QueryBoolean):
                conn.send(("boolean", bool(raw)))
                return False
            if isinstance(raw, QuerySolutions):
                variables = [v.value for v in raw.variables]
                conn.send(("head", variables))
                width = range(len(variables))
                overflow = _stream(conn, "rows", (tuple(s[i] for i in width) for s in raw), max_rows)
            else:
                overflow = _stream(conn, "triples", iter(raw), max_rows)
            return overflow
        except SyntaxError as exc:
            conn.send(("error", "syntax", str(exc)))
        except MemoryError:
            conn.send(("error", "memory", ""))
        except (OSError, RuntimeError, ValueError, TypeError) as exc:
            conn.send(("error", "failed", f"{type(exc).__name__}: {exc}"))
        return None
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _read(text: str, max_memory_mb: int) -> tuple[str, Any]:
    """The reading of ``text``, or the guard's refusal, with the address space bounded meanwhile."""
    from sparqlqa.errors import QueryError
    from sparqlqa.query.sparql_reading import read_query

    read_query("ASK {}")  # rdflib imported and the parser thread (its large stack) started before the bound
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    try:
        _limit_address_space(max_memory_mb, hard)
        return "reading", read_query(text)
    except QueryError as exc:
        return "refused", exc
    except MemoryError:
        return "error", "memory"
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _limit_address_space(max_memory_mb: int, hard: int) -> None:
    """Let the address space grow by ``max_memory_mb`` from its present size (never above ``hard``)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            size = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return  # no /proc: time and rows still bound the query
    limit = size + max_memory_mb * 1024 * 1024
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _stream(conn: Channel, kind: str, items: Any, max_rows: int) -> bool:
    """Send ``items`` in batches, at most ``max_rows`` of them; whether there were more."""
    batch: list[Any] = []
    sent = 0
    last = time.monotonic()
    for item in items:
        if sent + len(batch) == max_rows:
            conn.send((kind, batch))
            return True
        batch.append(item)
        if len(batch) >= BATCH_ROWS or time.monotonic() - last > BATCH_SECONDS:
            conn.send((kind, batch))
            sent += len(batch)
            batch = []
            last = time.monotonic()
    conn.send((kind, batch))
    return False


if __name__ == "__main__":
    main()
