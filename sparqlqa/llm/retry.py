"""LLM calls on the one retry loop (:mod:`sparqlqa.net.retry`), and HTTP statuses as our errors.

A backend wraps one HTTP attempt in a function that raises :class:`RetryableFailure` for transient
failures (429, 5xx, 529, dropped connections) and a plain :class:`~sparqlqa.errors.LLMError` for the
rest.  :func:`call_with_retries` retries the former at most ``max_retries`` times within the call's
deadline (``LLMOptions.timeout`` seconds, every attempt and wait included); a wait that would pass it
fails at once.
"""

from __future__ import annotations

__all__ = ["RETRYABLE_STATUSES", "RetryPolicy", "RetryableFailure", "call_with_retries", "describe_request",
           "parse_retry_after", "status_error"]

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from sparqlqa.errors import LLMAuthError, LLMBadRequest, LLMError, LLMOverloaded, LLMRateLimited, LLMUnavailable
from sparqlqa.net import CallFailure, Deadline, GiveUp, RetryPolicy, parse_retry_after
from sparqlqa.net import call_with_retries as retry_loop

if TYPE_CHECKING:
    from sparqlqa.llm.base import LLMRequest

T = TypeVar("T")

#: HTTP statuses worth retrying: rate limits, server errors, Anthropic's "overloaded"
RETRYABLE_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


class RetryableFailure(CallFailure):
    """A transient failure: ``error`` is raised if no attempt is left."""

    def __init__(self, error: LLMError, *, retry_after: float | None = None) -> None:
        super().__init__(error.message, retryable=True, hint=error.hint, retry_after=retry_after)
        self.error = error


def _give_up(stop: GiveUp) -> Exception:
    """The LLM error to raise when the loop stops, saying why."""
    failure = stop.failure
    error = failure.error if isinstance(failure, RetryableFailure) else LLMError(failure.message, hint=failure.hint)
    if stop.reason == "exhausted" and stop.attempts > 1:
        error.message = f"{error.message} (gave up after {stop.attempts} attempts)"
    elif stop.reason == "too_long":
        error.message = f"{error.message}; it asks to wait {stop.wait:.0f} s"
    elif stop.reason == "deadline" and stop.deadline is not None:
        error.message = (f"{error.message}; another try in {stop.wait:g} s would pass the "
                         f"{stop.deadline.seconds:g} s timeout")
    error.args = (error.message,)
    return error


def call_with_retries(attempt: Callable[[], T], *, max_retries: int, policy: RetryPolicy,
                      deadline: Deadline | None = None, sleep: Callable[[float], None] = time.sleep) -> T:
    """Run ``attempt`` on the one retry loop until it succeeds, fails for good, or retries (or the deadline)
    run out; the error raised says which."""
    return retry_loop(attempt, max_retries=max_retries, policy=policy, deadline=deadline, sleep=sleep,
                      give_up=_give_up)


def status_error(
    status: int,
    *,
    provider: str,
    detail: str,
    request_desc: str,
    auth_hint: str,
    retry_after: float | None = None,
    overloaded: bool = False,
) -> Exception:
    """Our error for an HTTP error status; transient ones come wrapped in :class:`RetryableFailure`.

    ``detail`` is the server's own explanation, ``request_desc`` says which
    request failed (model, message count, prompt start) without any key.
    """
    if status in (401, 403):
        what = "rejected the API key" if status == 401 else "refused access (permission denied)"
        return LLMAuthError(f"{provider} {what} ({status}: {detail})", hint=auth_hint)
    if status == 529 or overloaded:
        error: LLMError = LLMOverloaded(
            f"{provider} is overloaded ({status}: {detail})",
            hint="try again in a few minutes, use fewer parallel workers, "
            "or answer from the cache with --llm-cache only",
        )
        return RetryableFailure(error, retry_after=retry_after)
    if status == 429:
        error = LLMRateLimited(
            f"{provider} rate limit hit (429: {detail})",
            hint="wait a minute, lower the number of parallel workers, or raise your rate limit",
        )
        return RetryableFailure(error, retry_after=retry_after)
    if status in RETRYABLE_STATUSES or status >= 500:
        error = LLMUnavailable(f"{provider} server error ({status}: {detail}) for {request_desc}",
                         hint="this is usually temporary; try again later")
        return RetryableFailure(error, retry_after=retry_after)
    hint = {
        404: "check the model name and the base URL",
        413: "the prompt is too large: shorten it or lower the number of candidates",
    }.get(status, "the request was malformed or unsupported; check the model name and options")
    return LLMBadRequest(f"{provider} refused the request ({status}: {detail}); request: {request_desc}",
                         hint=hint)


def describe_request(url: str, request: LLMRequest) -> str:
    """One line saying which request this was, sent to ``url`` (for error messages; never includes keys)."""
    parts = [f"POST {url}", f"model={request.model!r}", f"{len(request.messages)} message(s)",
             f"max_tokens={request.options.max_tokens}"]
    if request.schema is not None and request.schema_name:
        parts.append(f"schema={request.schema_name!r}")
    parts.append(f"prompt {request.prompt_preview()!r}")
    return ", ".join(parts)
