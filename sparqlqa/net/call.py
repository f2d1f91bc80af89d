"""One outgoing call: its :class:`Deadline`, the block it is current in, and :class:`CallFailure`.

A call (one query to an endpoint, one LLM request) has one wall-clock deadline for everything it does:
connecting, sending, waiting, reading, every redirect hop, every retry and every wait between tries.
:func:`within` makes a deadline the current one for the block (the ``call`` field of the time limits in
force, :mod:`sparqlqa.deadlines`: one ContextVar, so threads and tasks each see their own); the transport's
network layer reads it on every socket operation (:mod:`sparqlqa.net.transport`).

>>> Deadline(5).remaining() <= 5
True
>>> with within(Deadline(2)) as deadline:
...     current() is deadline
True
>>> current() is None
True
"""

from __future__ import annotations

__all__ = ["CallFailure", "Deadline", "current", "within"]

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from sparqlqa.deadlines import Deadline, applying, in_force


class CallFailure(Exception):
    """One failed attempt: why, whether another try may help, and how long the server asked to wait."""

    def __init__(self, message: str, *, retryable: bool, hint: str | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.hint = hint
        self.retry_after = retry_after


def current() -> Deadline | None:
    """The deadline of the call running in this thread or task (``None`` outside any)."""
    return in_force().call


@contextmanager
def within(deadline: Deadline) -> Iterator[Deadline]:
    """Make ``deadline`` the current one for the block (the previous one comes back after)."""
    with applying(replace(in_force(), call=deadline)):
        yield deadline
