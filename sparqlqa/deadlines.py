"""Every time limit in force for this thread or task, in one :class:`~contextvars.ContextVar`.

Three kinds of limit bound what sparqlqa does for a caller, each set for a ``with`` block by its own function:

* ``query``: the :func:`sparqlqa.query.limits.bounded` scope (limits and one deadline for all its queries;
  ``unbounded()`` clears it);
* ``call``: the :class:`Deadline` of the outgoing call in progress (:func:`sparqlqa.net.call.within`: one
  query to an endpoint, one LLM request, retries included);
* ``endpoint_timeout`` and ``endpoint_cap``: the seconds that replace, and the seconds that bound, every
  endpoint store's own timeout (:func:`sparqlqa.remote.endpoint.timeout_override`: ``--timeout``, the cap of
  ``serve``/``mcp``).

They live in one frozen :class:`TimeLimits` record held by one ContextVar: a function changes its own field
(``dataclasses.replace``) for its block with :func:`applying`, and the record before comes back after.  A
thread or task that runs in a copy of the context (``contextvars.copy_context().run``; Starlette's and
anyio's thread pools do that) sees every limit of the block that started it.  This module imports nothing of
the package, so the packages of every layer (``net``, ``query``, ``remote``) read the same record.

>>> from dataclasses import replace
>>> in_force().call is None
True
>>> with applying(replace(in_force(), endpoint_cap=5.0)), applying(replace(in_force(), call=Deadline(2))):
...     in_force().endpoint_cap, 0 < in_force().call.remaining() <= 2
(5.0, True)
>>> in_force() == TimeLimits()
True
"""

from __future__ import annotations

__all__ = ["Deadline", "QueryScope", "TimeLimits", "applying", "in_force", "within_scope"]

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol


class Deadline:
    """A point in time (monotonic clock) ``seconds`` from now; one per call, retries included."""

    def __init__(self, seconds: float) -> None:
        self.seconds = float(seconds)
        self.end = time.monotonic() + self.seconds

    def remaining(self) -> float:
        return self.end - time.monotonic()

    def expired(self) -> bool:
        return self.remaining() <= 0


class QueryScope(Protocol):
    """What this module knows of a query scope (:class:`sparqlqa.query.limits.Scope`): when it ends."""

    @property
    def deadline(self) -> float:
        """``time.monotonic()`` at which every query of the scope is stopped."""


@dataclass(frozen=True)
class TimeLimits:
    """The limits in force: the query scope, the call's deadline, the endpoint timeout override and cap."""

    query: QueryScope | None = None
    call: Deadline | None = None
    endpoint_timeout: float | None = None
    endpoint_cap: float | None = None


_NONE = TimeLimits()
#: the only ContextVar of time limits in the package (see the module docstring)
_IN_FORCE: ContextVar[TimeLimits] = ContextVar("sparqlqa_time_limits", default=_NONE)


def within_scope(seconds: float) -> float:
    """``seconds``, but never past the deadline of the query scope in force (the time it has left, to a tenth of a
    second up, so a message names a readable number): an endpoint query or an LLM call made for a served request
    ends with the request.

    >>> within_scope(30.0)
    30.0
    """
    scope = in_force().query
    if scope is None:
        return seconds
    return min(seconds, math.ceil(max(0.0, scope.deadline - time.monotonic()) * 10) / 10)


def in_force() -> TimeLimits:
    """The limits of this thread or task (all ``None`` outside every block that sets one)."""
    return _IN_FORCE.get()


@contextmanager
def applying(limits: TimeLimits) -> Iterator[TimeLimits]:
    """Make ``limits`` the ones in force for the block; the record before comes back after."""
    token = _IN_FORCE.set(limits)
    try:
        yield limits
    finally:
        _IN_FORCE.reset(token)
