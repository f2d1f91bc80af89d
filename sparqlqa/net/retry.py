"""One retry policy and one retry loop, for endpoints and LLM backends alike.

An attempt raises :class:`~sparqlqa.net.call.CallFailure` when it fails (``retryable`` says whether
another try may help, ``retry_after`` what the server asked); any other exception is final and
passes through.  :func:`call_with_retries` tries again with exponential backoff (capped), honours
``Retry-After`` (seconds, an HTTP date, or ``retry-after-ms``), refuses a wait longer than
``max_retry_after``, and never waits past the call's deadline.  When it stops, the caller's
``give_up`` hook turns the :class:`GiveUp` into the error to raise (each caller words its own).

>>> RetryPolicy(backoff_base=1, backoff_max=3, jitter=False).delay(5, None)
3
>>> parse_retry_after({"Retry-After": "7"}), parse_retry_after({"retry-after-ms": "250"})
(7.0, 0.25)
"""

from __future__ import annotations

__all__ = ["GiveUp", "RetryPolicy", "call_with_retries", "parse_retry_after"]

import email.utils
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timezone
from typing import Literal, TypeVar

from sparqlqa.net.call import CallFailure, Deadline

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How long to wait between attempts.

    The n-th retry waits ``backoff_base * 2**n`` seconds (at most ``backoff_max``; with ``jitter``, a
    random 50-100% of it) unless the server sent ``Retry-After``: a wait longer than
    ``max_retry_after`` gives up at once, else it is honoured (shortened to ``retry_after_cap`` if set).
    """

    backoff_base: float = 0.5
    backoff_max: float = 20.0
    retry_after_cap: float | None = 60.0
    max_retry_after: float | None = None
    jitter: bool = True

    def delay(self, retry_number: int, retry_after: float | None) -> float:
        """Seconds to sleep before retry ``retry_number`` (0-based)."""
        if retry_after is not None and retry_after >= 0:
            return retry_after if self.retry_after_cap is None else min(retry_after, self.retry_after_cap)
        delay = min(self.backoff_max, self.backoff_base * (2**retry_number))
        if self.jitter:
            delay *= 0.5 + random.random() / 2
        return delay


@dataclass
class GiveUp:
    """Why the loop stopped: ``final`` (not retryable), ``exhausted`` (no retry left), ``too_long`` (the
    server asks a wait above ``max_retry_after``) or ``deadline`` (the next ``wait`` would pass it)."""

    failure: CallFailure
    reason: Literal["final", "exhausted", "too_long", "deadline"]
    attempts: int
    failures: list[str] = field(default_factory=list)
    wait: float = 0.0
    deadline: Deadline | None = None

    def history(self) -> str:
        """``after N attempts: first; second`` (distinct messages, in order)."""
        plural = "s" if self.attempts > 1 else ""
        return f"after {self.attempts} attempt{plural}: {'; '.join(dict.fromkeys(self.failures))}"


def _reraise(stop: GiveUp) -> Exception:
    return stop.failure


def call_with_retries(attempt: Callable[[], T], *, max_retries: int, policy: RetryPolicy,
                      deadline: Deadline | None = None, sleep: Callable[[float], None] = time.sleep,
                      give_up: Callable[[GiveUp], Exception] = _reraise) -> T:
    """Run ``attempt`` until it succeeds, fails for good, or retries (or the deadline) run out."""
    retries = max(0, max_retries)
    failures: list[str] = []
    for retry_number in range(retries + 1):
        try:
            return attempt()
        except CallFailure as failure:
            failures.append(failure.message)
            stop = _stop(failure, retry_number, retries, policy, deadline)
            if stop.reason != "wait":
                raise give_up(GiveUp(failure, stop.reason, retry_number + 1, failures, stop.wait,
                                     deadline)) from None
            sleep(stop.wait)
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass
class _Step:
    reason: Literal["final", "exhausted", "too_long", "deadline", "wait"]
    wait: float = 0.0


def _stop(failure: CallFailure, retry_number: int, retries: int, policy: RetryPolicy,
          deadline: Deadline | None) -> _Step:
    """What to do after ``failure``: stop (and why), or wait how long."""
    if not failure.retryable:
        return _Step("final")
    if retry_number >= retries:
        return _Step("exhausted")
    asked = failure.retry_after
    if asked is not None and policy.max_retry_after is not None and asked > policy.max_retry_after:
        return _Step("too_long", asked)
    wait = max(policy.delay(retry_number, asked), 0.0)
    if deadline is not None and wait >= deadline.remaining():
        return _Step("deadline", wait)
    return _Step("wait", wait)


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), or ``None``.

    >>> parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0)
    10.0
    >>> parse_retry_after({"Retry-After": "soon"}) is None
    True
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = (lowered.get("retry-after-ms") or "").strip()
    try:
        if millis:
            return max(0.0, float(millis) / 1000.0)
    except ValueError:
        pass
    value = (lowered.get("retry-after") or "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
