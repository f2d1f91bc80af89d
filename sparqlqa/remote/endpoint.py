"""A remote SPARQL endpoint as a :class:`~sparqlqa.kb.store.Store` (Wikidata, Virtuoso, QLever, Fuseki, ...).

:class:`EndpointStore` speaks the SPARQL 1.1 protocol over HTTP (:mod:`sparqlqa.net`: the one transport and retry loop)
and returns the same :class:`~sparqlqa.kb.store.QueryResult` (pyoxigraph terms, read by
:mod:`sparqlqa.remote.results`) as the local Oxigraph store, so every stage downstream runs
unchanged.  It is polite, bounded and read-only:

* only SELECT, ASK, CONSTRUCT and DESCRIBE are ever sent: :meth:`Store.query` refuses updates
  before ``_execute``, which checks the form again, so an update can never leave;
* every SELECT without a top-level ``LIMIT`` gets one (``max_rows``): on a built query's structure, else
  where the one reading agrees it is the query's own (:func:`~sparqlqa.query.sparql_rewrite.with_limit`);
* **one deadline per query**: ``timeout`` seconds bound the whole call — every attempt, redirect
  and backoff wait included (a wait that would pass the deadline fails at once, saying so).
  ``--timeout`` on the commands that talk to an endpoint replaces every store's own value, and
  ``serve``/``mcp`` cap it by their request timeout, both for a block (:func:`timeout_override`: two
  fields of the time limits in force, :mod:`sparqlqa.deadlines`);
* bounded retries with exponential backoff (capped) on 429/502/503/504, refused connections and
  answers cut short, honouring ``Retry-After``; redirects only within the endpoint's host;
* a descriptive User-Agent (Wikimedia requires one), GET or POST as needed.

A KB manifest opens one with its ``store`` entry::

    {"kind": "endpoint", "url": "https://query.wikidata.org/sparql", "method": "GET",
     "timeout": 60, "max_retries": 3, "user_agent": "..."}

>>> store = EndpointStore("http://127.0.0.1:9/sparql", max_retries=0, timeout=0.5)
>>> store.describe()
'endpoint:http://127.0.0.1:9/sparql'
"""

from __future__ import annotations

__all__ = ["MAX_RESPONSE_BYTES", "EndpointConfig", "EndpointStore", "default_user_agent", "effective_timeout",
           "json_term", "timeout_override"]

import os
import platform
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from sparqlqa.deadlines import applying, in_force, within_scope
from sparqlqa.errors import ConfigError, EndpointError, UpdateRefused
from sparqlqa.kb.store import QueryResult, Store, stores
from sparqlqa.net import (
    CallFailure,
    Deadline,
    GiveUp,
    Request,
    Response,
    RetryPolicy,
    Transport,
    call_with_retries,
    excerpt,
    parse_retry_after,
)
from sparqlqa.query.built_query import BuiltQuery
from sparqlqa.query.sparql_guard import READ_FORMS, query_form
from sparqlqa.query.sparql_rewrite import with_limit
from sparqlqa.remote.results import json_term, parse_graph, parse_json_results
from sparqlqa.version import __version__

#: HTTP statuses worth another try (after waiting)
RETRY_STATUSES = frozenset({429, 502, 503, 504})
#: GET is used while the encoded query stays below this many characters ("auto" method)
AUTO_POST_THRESHOLD = 2000
RESULTS_ACCEPT = "application/sparql-results+json, application/json;q=0.8"
GRAPH_ACCEPT = "application/n-triples, text/turtle;q=0.9, application/rdf+xml;q=0.5"
#: default cap on one answer's size; reading stops there, so memory stays bounded
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
TIMEOUT_HINT = "raise the timeout (--timeout SECONDS, or timeout under [endpoint] in the KB's profile)"


def _positive(seconds: float | None) -> float | None:
    if seconds is not None and not seconds > 0:
        raise ConfigError(f"an endpoint timeout must be a positive number of seconds, not {seconds!r}")
    return None if seconds is None else float(seconds)


@contextmanager
def timeout_override(seconds: float | None, *, cap: bool = False) -> Iterator[None]:
    """Within the block, every endpoint query gets ``seconds`` as its deadline (with ``cap``: at most
    ``seconds``); the previous setting comes back after.  ``None`` changes nothing.

    What ``--timeout`` sets on ``ask``, ``eval``, ``sparql`` and ``kbs add``, and ``serve``/``mcp``'s cap.
    The setting is the ``endpoint_timeout`` or ``endpoint_cap`` of the time limits in force
    (:mod:`sparqlqa.deadlines`, a :class:`~contextvars.ContextVar`): threads started inside the block see it
    when they run in a copy of the context (``contextvars.copy_context().run``; Starlette and anyio's
    thread pools do that).
    """
    now = in_force()
    chosen = _positive(seconds)
    if chosen is not None:
        now = replace(now, endpoint_cap=chosen) if cap else replace(now, endpoint_timeout=chosen)
    with applying(now):
        yield


def effective_timeout(configured: float) -> float:
    """The deadline a query gets: the override if set, else ``configured``; never above the cap, nor past the
    deadline of the :func:`~sparqlqa.query.limits.bounded` scope it runs in (one deadline for all its queries;
    the time it has left, to a tenth of a second up).

    >>> effective_timeout(60.0)
    60.0
    >>> with timeout_override(5), timeout_override(2, cap=True):
    ...     effective_timeout(60.0)
    2.0
    """
    limits = in_force()
    chosen = limits.endpoint_timeout or configured
    chosen = min(chosen, limits.endpoint_cap) if limits.endpoint_cap else chosen
    return within_scope(chosen)


def default_user_agent() -> str:
    """``sparqlqa/VERSION (+URL; contact) Python/V`` ($SPARQLQA_CONTACT adds a contact)."""
    contact = os.environ.get("SPARQLQA_CONTACT", "").strip()
    about = "+https://sparqlqa.dev" + (f"; {contact}" if contact else "")
    return f"sparqlqa/{__version__} ({about}) Python/{platform.python_version()}"


@dataclass
class EndpointConfig:
    """How to talk to one endpoint (the manifest's ``store`` entry, minus ``kind``)."""

    url: str
    method: str = "auto"  # "GET" | "POST" | "auto" (GET, POST for long queries)
    timeout: float = 60.0  # seconds for one query, retries and redirects included (one deadline)
    max_retries: int = 3  # further attempts after the first
    backoff: float = 1.0  # first wait; doubled per retry
    backoff_cap: float = 30.0  # longest wait between attempts
    max_retry_after: float = 120.0  # a longer Retry-After fails at once instead of waiting
    min_interval: float = 0.0  # seconds between the starts of two requests (politeness)
    user_agent: str = field(default_factory=default_user_agent)
    max_rows: int = 10_000  # LIMIT added to SELECTs that have none
    default_graphs: list[str] = field(default_factory=list)  # sent as default-graph-uri
    max_response_bytes: int = MAX_RESPONSE_BYTES  # a longer answer is refused, read no further

    def __post_init__(self) -> None:
        self.method = self.method.upper()
        if self.method not in ("GET", "POST", "AUTO"):
            raise ConfigError(f"endpoint method must be GET, POST or auto, not {self.method!r}")
        if not self.url.startswith(("http://", "https://")):
            raise ConfigError(f"endpoint URL must start with http:// or https://: {self.url!r}",
                              hint="for example https://query.wikidata.org/sparql")
        if self.max_retries < 0 or self.timeout <= 0 or self.max_rows < 1 or self.max_response_bytes < 1:
            raise ConfigError("endpoint timeout, max_rows and max_response_bytes must be positive, "
                              "max_retries >= 0")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EndpointConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known - {"kind"})
        if unknown:
            raise ConfigError(f"unknown endpoint options: {', '.join(unknown)}",
                              hint="known options: " + ", ".join(sorted(known)))
        if "url" not in data:
            raise ConfigError("an endpoint store needs a url")
        return cls(**{k: v for k, v in data.items() if k in known})

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "endpoint", **asdict(self)}


@stores.register("endpoint")
class EndpointStore(Store):
    """A SPARQL 1.1 endpoint reached over HTTP (read-only; one deadline per query)."""

    def __init__(self, url: str | EndpointConfig, **options: Any) -> None:
        self.config = url if isinstance(url, EndpointConfig) else EndpointConfig(url=url, **options)
        self.sleep: Callable[[float], None] = time.sleep
        self.requests_sent = 0
        self.truncated = 0  # SELECTs whose rows reached max_rows (possibly incomplete)
        self._last_start = 0.0
        self._transport = Transport(user_agent=self.config.user_agent)

    @property
    def url(self) -> str:
        return self.config.url

    @property
    def timeout(self) -> float:
        """Seconds one query may take, retries included (see :func:`effective_timeout`)."""
        return effective_timeout(self.config.timeout)

    @classmethod
    def from_config(cls, config: dict[str, Any], directory: Path | None) -> EndpointStore:
        return cls(EndpointConfig.from_dict(config))

    def describe(self) -> str:
        return f"endpoint:{self.url}"

    def close(self) -> None:
        """Close the pooled connections (a later query opens new ones)."""
        self._transport.close()

    # -- running a query ------------------------------------------------------------------

    def _prepared(self, sparql: str | BuiltQuery, form: str) -> str:
        """A SELECT gets ``LIMIT max_rows`` when it has no top-level LIMIT: set on a built query's structure,
        else placed where the parser reads it as
        the query's own (:func:`~sparqlqa.query.sparql_rewrite.with_limit`)."""
        if form != "SELECT":
            return str(sparql)
        if not isinstance(sparql, BuiltQuery) or sparql.structure is None:
            return with_limit(str(sparql), self.config.max_rows)
        return sparql.text if sparql.structure.limit is not None else sparql.with_limit(self.config.max_rows).text

    def _execute(self, sparql: str, form: str) -> QueryResult:
        if form not in READ_FORMS or query_form(sparql) != form:
            raise UpdateRefused(form)
        cfg = self.config
        deadline = Deadline(self.timeout)
        policy = RetryPolicy(backoff_base=cfg.backoff, backoff_max=cfg.backoff_cap, retry_after_cap=None,
                             max_retry_after=cfg.max_retry_after, jitter=False)
        return call_with_retries(lambda: self._attempt(sparql, form, deadline), max_retries=cfg.max_retries,
                                 policy=policy, deadline=deadline, sleep=self.sleep, give_up=self._give_up)

    def _give_up(self, stop: GiveUp) -> EndpointError:
        """The :class:`EndpointError` for a query the retry loop stops trying."""
        failure = stop.failure
        history = f" ({stop.history()})" if stop.attempts > 1 else ""
        if stop.reason == "final":
            return EndpointError(self.url, failure.message + history, hint=failure.hint)
        if stop.reason == "exhausted":
            return EndpointError(self.url, f"{failure.message} ({stop.history()})",
                                 hint=failure.hint or "the endpoint may be down or overloaded: try again later, "
                                 "or raise max_retries / the timeout")
        if stop.reason == "too_long":
            return EndpointError(self.url, f"{failure.message}; it asks to wait {stop.wait:.0f} s",
                                 hint=f"more than max_retry_after ({self.config.max_retry_after:.0f} s): try later")
        seconds = stop.deadline.seconds if stop.deadline is not None else self.timeout
        return EndpointError(self.url, f"{failure.message}{history}; another try in {stop.wait:g} s would pass "
                             f"the {seconds:g} s timeout",
                             hint=TIMEOUT_HINT + (f"; {failure.hint}" if failure.hint else ""))

    def _attempt(self, sparql: str, form: str, deadline: Deadline) -> QueryResult:
        """Send the query once; a :class:`CallFailure` says what went wrong."""
        request = self._request(sparql, form)
        self._pace(deadline)
        self.requests_sent += 1
        response = self._transport.send(request, deadline, max_bytes=self.config.max_response_bytes)
        failure = _status_failure(response)
        if failure is not None:
            raise failure
        if form in ("SELECT", "ASK"):
            result = parse_json_results(response.body, sparql, form, response.content_type)
            if form == "SELECT" and len(result.rows) >= self.config.max_rows:
                self.truncated += 1
                del result.rows[self.config.max_rows:]
            return result
        return QueryResult(query=sparql, form=form, triples=parse_graph(response.body, response.content_type, form))

    def _pace(self, deadline: Deadline) -> None:
        gap = min(self.config.min_interval - (time.monotonic() - self._last_start), deadline.remaining())
        if gap > 0:
            self.sleep(gap)
        self._last_start = time.monotonic()

    def _request(self, sparql: str, form: str) -> Request:
        """The HTTP request for one read query (form-encoded; GET, or POST when asked or long)."""
        cfg = self.config
        encoded = urlencode([("query", sparql), *(("default-graph-uri", g) for g in cfg.default_graphs)])
        headers = {"User-Agent": cfg.user_agent,
                   "Accept": RESULTS_ACCEPT if form in ("SELECT", "ASK") else GRAPH_ACCEPT}
        if cfg.method == "POST" or (cfg.method == "AUTO" and len(encoded) > AUTO_POST_THRESHOLD):
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            return Request("POST", cfg.url, headers, encoded.encode("ascii"))
        return Request("GET", f"{cfg.url}{'&' if '?' in cfg.url else '?'}{encoded}", headers)


# -- errors -----------------------------------------------------------------------------------

#: non-retryable statuses with a message and a hint of their own
_STATUS_TEXTS: dict[int, tuple[str, str]] = {
    400: ("the endpoint rejected the query",
          "check the SPARQL syntax; this engine may not support an extension the query uses"),
    401: ("the endpoint requires authentication", "this endpoint is not public"),
    403: ("Forbidden", "the endpoint refused the request; check its URL and access rules"),
    404: ("no SPARQL service at this URL", "check the endpoint URL (it often ends in /sparql)"),
    405: ("method not allowed", "the endpoint does not accept this HTTP method: set method to GET or POST"),
    414: ("the query is too long for a GET request", "set method to POST"),
    500: ("the endpoint failed to run the query",
          "the query may be too expensive for this endpoint (timeouts often look like this)"),
}


def _status_failure(response: Response) -> CallFailure | None:
    """The :class:`CallFailure` an HTTP status means (``None`` for 2xx); the server's own words are kept."""
    status = response.status
    if 200 <= status < 300:
        return None
    body = excerpt(response.body)
    detail = f": {body}" if body else ""
    retry_after = parse_retry_after(response.headers)
    if status == 429:
        return CallFailure(f"HTTP 429 Too Many Requests{detail}", retryable=True, retry_after=retry_after,
                           hint="the endpoint rate-limits clients: wait, or lower min_interval / question rate")
    if status in RETRY_STATUSES:
        return CallFailure(f"HTTP {status} {response.reason}{detail}", retryable=True, retry_after=retry_after)
    if 300 <= status < 400:
        return CallFailure(f"HTTP {status} {response.reason}: a redirect without a Location", retryable=False,
                           hint="use the endpoint's final URL")
    text, hint = _STATUS_TEXTS.get(status, (response.reason, "the endpoint refused the request; check its URL "
                                            "and access rules"))
    return CallFailure(f"HTTP {status}: {text}{detail}", retryable=False, hint=hint)
