"""How far one SPARQL query may go: time, rows and memory (:class:`QueryLimits`), and the scope that carries them.

The read path (``sparqlqa sparql``, ``/api/sparql``, the MCP ``sparql`` tool, and every query the QA
pipeline runs for a served ``ask``) runs inside :func:`bounded`: :meth:`sparqlqa.kb.store.Store.query`
reads the innermost scope (:func:`current`) and hands it to the store, which stops the query at the
bound (see :mod:`sparqlqa.query.query_pool` for how an on-disk Oxigraph store really stops).  A scope
has one deadline for everything run inside it: a pipeline of twenty queries shares the request's
time, it does not get twenty timeouts.  Outside any scope queries are not bounded: that is how the
KB's own derived data (label index, node index, schema) is built, over every node.  The scope is the
``query`` field of the time limits in force (:mod:`sparqlqa.deadlines`, the one ContextVar of them).

>>> with bounded(QueryLimits(timeout_s=30, max_rows=10)) as scope:
...     current() is scope, scope.limits.max_rows, 0 < scope.remaining() <= 30
(True, 10, True)
>>> current() is None
True
>>> QueryLimits(max_rows=0)
Traceback (most recent call last):
...
sparqlqa.errors.ConfigError: the row limit must be at least 1 row, got 0
"""

from __future__ import annotations

__all__ = ["ASK_TIMEOUT_S", "DEFAULT_MAX_MEMORY_MB", "DEFAULT_MAX_ROWS", "DEFAULT_TIMEOUT_S", "QueryLimits", "Scope",
           "bounded", "current", "unbounded"]

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from sparqlqa.deadlines import applying, in_force
from sparqlqa.errors import ConfigError

#: the defaults of ``sparqlqa sparql`` and of a served process
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_ROWS = 100_000
DEFAULT_MAX_MEMORY_MB = 512
#: the safety net of one question's queries when the caller sets no limits (``ask`` on the CLI, in eval,
#: from Python): ten minutes for all of them (LLM calls in between count), rows cut at the default cap
#: rather than failing the question; a served request's tighter scope wins (see :func:`bounded`)
ASK_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class QueryLimits:
    """Bounds of one query (or of every query in a :func:`bounded` scope).

    ``timeout_s``: seconds until the work is stopped; ``max_rows``: result rows (or triples) kept,
    counted while they stream; ``max_memory_mb``: memory a query worker may add while it runs (on-disk
    Oxigraph stores; an in-memory store runs in-process and is bounded in time and rows only);
    ``truncate``: past ``max_rows``, keep the first rows and mark the result truncated instead of
    raising :class:`~sparqlqa.errors.QueryTooLarge`.
    """

    timeout_s: float = DEFAULT_TIMEOUT_S
    max_rows: int = DEFAULT_MAX_ROWS
    max_memory_mb: int = DEFAULT_MAX_MEMORY_MB
    truncate: bool = False

    def __post_init__(self) -> None:
        if not self.timeout_s > 0:
            raise ConfigError(f"the query time limit must be more than 0 seconds, got {self.timeout_s}",
                              hint="e.g. --timeout 60")
        if self.max_rows < 1:
            raise ConfigError(f"the row limit must be at least 1 row, got {self.max_rows}", hint="e.g. --max-rows 1000")
        if self.max_memory_mb < 16:
            raise ConfigError(f"the query memory limit must be at least 16 MB, got {self.max_memory_mb}",
                              hint="e.g. --max-memory 512")


@dataclass(frozen=True)
class Scope:
    """The limits in force and the one deadline (``time.monotonic()``) every query of the scope shares."""

    limits: QueryLimits
    deadline: float

    def remaining(self) -> float:
        """Seconds left until the deadline (0 when it has passed)."""
        return max(0.0, self.deadline - time.monotonic())


def current() -> Scope | None:
    """The innermost :func:`bounded` scope of this thread or task, ``None`` outside any."""
    scope = in_force().query
    assert scope is None or isinstance(scope, Scope)  # only bounded() sets it
    return scope


@contextmanager
def bounded(limits: QueryLimits, *, deadline: float | None = None) -> Iterator[Scope]:
    """Run the block's queries under ``limits``; the deadline is ``deadline`` (``time.monotonic()``,
    e.g. when a request arrived + its timeout) or now + ``limits.timeout_s``.  Nested in another scope,
    the earlier deadline and the smaller row and memory limits win (a callee cannot widen its caller's)."""
    deadline = time.monotonic() + limits.timeout_s if deadline is None else deadline
    outer = current()
    if outer is not None:
        deadline = min(deadline, outer.deadline)
        limits = QueryLimits(timeout_s=limits.timeout_s, max_rows=min(limits.max_rows, outer.limits.max_rows),
                             max_memory_mb=min(limits.max_memory_mb, outer.limits.max_memory_mb),
                             truncate=limits.truncate)
    scope = Scope(limits, deadline)
    with applying(replace(in_force(), query=scope)):
        yield scope


@contextmanager
def unbounded() -> Iterator[None]:
    """Leave any scope for the block: for building a KB's derived data (every node), never for a client's query."""
    with applying(replace(in_force(), query=None)):
        yield
