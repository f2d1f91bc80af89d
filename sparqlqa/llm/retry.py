"""Bounded retries with exponential backoff that honour ``retry-after``.

A backend wraps one HTTP attempt in a function that raises
:class:`RetryableFailure` for transient failures (429, 5xx, 529, dropped
connections) and a plain :class:`~sparqlqa.errors.LLMError` for the rest.
:func:`call_with_retries` retries the former at most ``max_retries`` times.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from sparqlqa.errors import LLMAuthError, LLMBadRequest, LLMError, LLMOverloaded, LLMRateLimited

T = TypeVar("T")

#: HTTP statuses worth retrying: rate limits, server errors, Anthropic's "overloaded"
RETRYABLE_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


@dataclass(frozen=True)
class RetryPolicy:
    """How long to wait between attempts.

    The n-th retry waits ``backoff_base * 2**n`` seconds (at most
    ``backoff_max``, with jitter), unless the server sent ``retry-after``, which
    is honoured up to ``retry_after_cap`` seconds.
    """

    backoff_base: float = 0.5
    backoff_max: float = 20.0
    retry_after_cap: float = 60.0
    jitter: bool = True

    def delay(self, retry_number: int, retry_after: float | None) -> float:
        """Seconds to sleep before retry ``retry_number`` (0-based)."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.retry_after_cap)
        delay = min(self.backoff_max, self.backoff_base * (2**retry_number))
        if self.jitter:
            delay *= 0.5 + random.random() / 2
        return delay


class RetryableFailure(Exception):
    """A transient failure: ``error`` is raised if no attempt is left."""

    def __init__(self, error: LLMError, *, retry_after: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after


def call_with_retries(
    attempt: Callable[[], T],
    *,
    max_retries: int,
    policy: RetryPolicy,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run ``attempt`` until it succeeds, fails for good, or retries run out."""
    retries = max(0, max_retries)
    for retry_number in range(retries + 1):
        try:
            return attempt()
        except RetryableFailure as failure:
            if retry_number >= retries:
                error = failure.error
                if retries:
                    error.message = f"{error.message} (gave up after {retries + 1} attempts)"
                    error.args = (error.message,)
                raise error from None
            sleep(policy.delay(retry_number, failure.retry_after))
    raise AssertionError("unreachable")  # pragma: no cover


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` headers, or None."""
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


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
        error = LLMError(f"{provider} server error ({status}: {detail}) for {request_desc}",
                         hint="this is usually temporary; try again later")
        return RetryableFailure(error, retry_after=retry_after)
    hint = {
        404: "check the model name and the base URL",
        413: "the prompt is too large: shorten it or lower the number of candidates",
    }.get(status, "the request was malformed or unsupported; check the model name and options")
    return LLMBadRequest(f"{provider} refused the request ({status}: {detail}); request: {request_desc}",
                         hint=hint)


def describe_request(url: str, model: str, n_messages: int, max_tokens: int, schema_name: str | None,
                     preview: str) -> str:
    """One line saying which request this was (for error messages; never includes keys)."""
    parts = [f"POST {url}", f"model={model!r}", f"{n_messages} message(s)", f"max_tokens={max_tokens}"]
    if schema_name:
        parts.append(f"schema={schema_name!r}")
    parts.append(f"prompt {preview!r}")
    return ", ".join(parts)
