"""Outgoing HTTP, one way for everyone: the transport, the call's deadline, the retry policy.

* :mod:`sparqlqa.net.call`: :class:`Deadline` (one per call, retries included), the block it is current
  in (:func:`within`: the ``call`` field of :mod:`sparqlqa.deadlines`' one ContextVar), and
  :class:`CallFailure` (one failed attempt);
* :mod:`sparqlqa.net.transport`: :class:`Transport` on httpx (the deadline on every socket operation,
  same-host redirects only, proxies from the environment, bounded answers, a User-Agent);
* :mod:`sparqlqa.net.retry`: :class:`RetryPolicy` and :func:`call_with_retries` (backoff with a cap,
  ``Retry-After``, the deadline), and :func:`parse_retry_after`.

Endpoint stores (:mod:`sparqlqa.remote`) and LLM backends (:mod:`sparqlqa.llm`) use it; it imports
nothing of the package but itself and :mod:`sparqlqa.deadlines`, and httpx only when a request is sent.
"""

from __future__ import annotations

__all__ = ["CallFailure", "Deadline", "GiveUp", "Request", "Response", "RetryPolicy", "Transport",
           "call_with_retries", "excerpt", "parse_retry_after", "same_host", "send", "within"]

from sparqlqa.net.call import CallFailure, Deadline, within
from sparqlqa.net.retry import GiveUp, RetryPolicy, call_with_retries, parse_retry_after
from sparqlqa.net.transport import Request, Response, Transport, excerpt, same_host, send
