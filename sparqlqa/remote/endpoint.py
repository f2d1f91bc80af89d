"""A remote SPARQL endpoint as a :class:`~sparqlqa.kb.store.Store` (Wikidata, Virtuoso, QLever, Fuseki, ...).

:class:`EndpointStore` speaks the SPARQL 1.1 protocol through SPARQLWrapper and
returns the same :class:`~sparqlqa.kb.store.QueryResult` (pyoxigraph terms) as the
local Oxigraph store, so every stage downstream runs unchanged.  It is polite and
read-only:

* only SELECT, ASK, CONSTRUCT and DESCRIBE are ever sent: :meth:`Store.query`
  refuses updates before ``_execute``, which checks the form again and sets
  SPARQLWrapper's query type explicitly, so an update can never leave;
* every SELECT without a top-level ``LIMIT`` gets one (``max_rows``);
* timeouts, bounded retries with exponential backoff (capped) on 429/502/503/504,
  connection failures and truncated answers, honouring ``Retry-After``;
* a descriptive User-Agent (Wikimedia requires one), GET or POST as needed.

A KB manifest opens one with its ``store`` entry::

    {"kind": "endpoint", "url": "https://query.wikidata.org/sparql", "method": "GET",
     "timeout": 60, "max_retries": 3, "user_agent": "..."}

>>> store = EndpointStore("http://127.0.0.1:9/sparql", max_retries=0, timeout=0.5)
>>> store.describe()
'endpoint:http://127.0.0.1:9/sparql'
>>> ensure_limit("SELECT ?s WHERE { ?s ?p ?o }", 100)
'SELECT ?s WHERE { ?s ?p ?o }\\nLIMIT 100'
"""

from __future__ import annotations

import http.client
import json
import os
import platform
import socket
import time
import urllib.error
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any, ClassVar

from pyoxigraph import BlankNode, Literal, NamedNode, RdfFormat, Triple, parse

from sparqlqa.errors import ConfigError, EndpointError, UpdateRefused
from sparqlqa.kb.sparql_guard import READ_FORMS, projected_variables, query_form, sparql_tokens
from sparqlqa.kb.store import QueryResult, Store, Term, stores
from sparqlqa.version import __version__

__all__ = ["EndpointConfig", "EndpointStore", "default_user_agent", "ensure_limit", "json_term",
           "parse_json_results", "parse_retry_after", "read_bounded"]

XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
#: HTTP statuses worth another try (after waiting)
RETRY_STATUSES = frozenset({429, 502, 503, 504})
#: GET is used while the encoded query stays below this many characters ("auto" method)
AUTO_POST_THRESHOLD = 2000
GRAPH_ACCEPT = "application/n-triples, text/turtle;q=0.9, application/rdf+xml;q=0.5"
#: default cap on one answer's size; reading stops there, so memory stays bounded
MAX_RESPONSE_BYTES = 64 * 1024 * 1024


def default_user_agent() -> str:
    """``sparqlqa/VERSION (+URL; contact) SPARQLWrapper/V Python/V`` ($SPARQLQA_CONTACT adds a contact)."""
    import SPARQLWrapper

    contact = os.environ.get("SPARQLQA_CONTACT", "").strip()
    about = "+https://sparqlqa.dev" + (f"; {contact}" if contact else "")
    return (f"sparqlqa/{__version__} ({about}) SPARQLWrapper/{SPARQLWrapper.__version__} "
            f"Python/{platform.python_version()}")


@dataclass
class EndpointConfig:
    """How to talk to one endpoint (the manifest's ``store`` entry, minus ``kind``)."""

    url: str
    method: str = "auto"  # "GET" | "POST" | "auto" (GET, POST for long queries)
    timeout: float = 60.0  # seconds per request (connect and each read)
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


class _Failure(Exception):
    """One failed attempt: why, whether another try may help, and how long the server asked to wait."""

    def __init__(self, message: str, *, retryable: bool, hint: str | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.hint = hint
        self.retry_after = retry_after


@stores.register("endpoint")
class EndpointStore(Store):
    """A SPARQL 1.1 endpoint reached over HTTP with SPARQLWrapper (read-only)."""

    kind: ClassVar[str] = "endpoint"

    def __init__(self, url: str | EndpointConfig, **options: Any) -> None:
        self.config = url if isinstance(url, EndpointConfig) else EndpointConfig(url=url, **options)
        self.sleep: Callable[[float], None] = time.sleep
        self.requests_sent = 0
        self.truncated = 0  # SELECTs whose rows reached max_rows (possibly incomplete)
        self._last_start = 0.0

    @property
    def url(self) -> str:
        return self.config.url

    @classmethod
    def from_config(cls, config: dict[str, Any], directory: Path | None) -> EndpointStore:
        return cls(EndpointConfig.from_dict(config))

    def describe(self) -> str:
        return f"endpoint:{self.url}"

    # -- running a query ------------------------------------------------------------------

    def _execute(self, sparql: str, form: str) -> QueryResult:
        if form not in READ_FORMS or query_form(sparql) != form:
            raise UpdateRefused(form)
        text = ensure_limit(sparql, self.config.max_rows) if form == "SELECT" else sparql
        failures: list[str] = []
        for attempt in range(self.config.max_retries + 1):
            try:
                result = self._attempt(text, form)
            except _Failure as failure:
                failures.append(failure.message)
                self._give_up_or_wait(failure, attempt, failures)
                continue
            return result
        raise AssertionError("unreachable")  # pragma: no cover

    def _give_up_or_wait(self, failure: _Failure, attempt: int, failures: list[str]) -> None:
        """Raise :class:`EndpointError` when no retry is due; otherwise sleep before the next one."""
        cfg = self.config
        if not failure.retryable:
            raise EndpointError(self.url, failure.message, hint=failure.hint)
        if attempt >= cfg.max_retries:
            tried = f"after {attempt + 1} attempt{'s' if attempt else ''}"
            history = "; ".join(dict.fromkeys(failures))
            raise EndpointError(self.url, f"{failure.message} ({tried}: {history})", hint=failure.hint or (
                "the endpoint may be down or overloaded: try again later, or raise max_retries/timeout"))
        wait = min(cfg.backoff_cap, cfg.backoff * (2 ** attempt))
        if failure.retry_after is not None:
            if failure.retry_after > cfg.max_retry_after:
                raise EndpointError(self.url, f"{failure.message}; it asks to wait {failure.retry_after:.0f} s",
                                    hint=f"more than max_retry_after ({cfg.max_retry_after:.0f} s): try later")
            wait = max(failure.retry_after, 0.0)
        self.sleep(wait)

    def _attempt(self, sparql: str, form: str) -> QueryResult:
        """Send the query once; a :class:`_Failure` says what went wrong."""
        wrapper = self._wrapper(sparql, form)
        self._pace()
        self.requests_sent += 1
        try:
            response = wrapper.query().response
            body = read_bounded(response, self.config.max_response_bytes)
            content_type = response.headers.get("Content-Type", "") or ""
        except _Failure:
            raise
        except Exception as exc:  # SPARQLWrapper and urllib raise many kinds
            raise _classify(exc) from exc
        if form in ("SELECT", "ASK"):
            result = parse_json_results(body, sparql, form)
            if form == "SELECT" and len(result.rows) >= self.config.max_rows:
                self.truncated += 1
                del result.rows[self.config.max_rows:]
            return result
        return QueryResult(query=sparql, form=form, triples=parse_graph(body, content_type))

    def _pace(self) -> None:
        gap = self.config.min_interval - (time.monotonic() - self._last_start)
        if gap > 0:
            self.sleep(gap)
        self._last_start = time.monotonic()

    def _wrapper(self, sparql: str, form: str) -> Any:
        """A SPARQLWrapper set up for one read query (never an update)."""
        from SPARQLWrapper import GET, JSON, POST, TURTLE, URLENCODED, SPARQLWrapper

        cfg = self.config
        wrapper = SPARQLWrapper(cfg.url, agent=cfg.user_agent)
        wrapper.setQuery(sparql)
        wrapper.queryType = form  # explicit: SPARQLWrapper's own guess is never trusted
        if wrapper.isSparqlUpdateRequest():  # pragma: no cover - defence in depth
            raise UpdateRefused(form)
        wrapper.setOnlyConneg(True)
        wrapper.timeout = cfg.timeout  # type: ignore[assignment]  # setTimeout would truncate 0.5 s to none
        wrapper.setRequestMethod(URLENCODED)
        long_query = len(sparql.encode("utf-8")) * 3 > AUTO_POST_THRESHOLD
        wrapper.setMethod(POST if cfg.method == "POST" or (cfg.method == "AUTO" and long_query) else GET)
        for graph in cfg.default_graphs:
            wrapper.addDefaultGraph(graph)
        if form in ("SELECT", "ASK"):
            wrapper.setReturnFormat(JSON)
        else:
            wrapper.setReturnFormat(TURTLE)
            wrapper.addCustomHttpHeader("Accept", GRAPH_ACCEPT)
        return wrapper


def read_bounded(response: Any, limit: int) -> bytes:
    """The body of ``response``, or a :class:`_Failure` as soon as it passes ``limit`` bytes."""
    declared = response.headers.get("Content-Length") if response.headers else None
    if declared and declared.strip().isdigit() and int(declared) > limit:
        raise _too_big(limit, f"it announces {int(declared):,} bytes")
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = response.read(min(1 << 20, limit + 1 - size))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            response.close()
            raise _too_big(limit, "more came")


def _too_big(limit: int, why: str) -> _Failure:
    return _Failure(f"the answer is larger than max_response_bytes ({limit:,} bytes; {why}): refused",
                    retryable=False, hint="ask for fewer rows (LIMIT), or raise max_response_bytes in the "
                    "endpoint's settings")


# -- errors -----------------------------------------------------------------------------------


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date); ``None`` if absent/bad.

    >>> parse_retry_after("7")
    7.0
    >>> parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT",
    ...                   now=datetime(2015, 10, 21, 7, 28, 0, tzinfo=timezone.utc))
    10.0
    """
    if not value or not value.strip():
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - (now or datetime.now(timezone.utc))).total_seconds())


def _excerpt(data: Any, size: int = 300) -> str:
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    text = " ".join(str(data or "").split())
    return text[:size] + ("..." if len(text) > size else "")


def _http_failure(exc: urllib.error.HTTPError) -> _Failure:
    status = exc.code
    retry_after = parse_retry_after(exc.headers.get("Retry-After") if exc.headers else None)
    try:
        body = _excerpt(exc.read())
    except Exception:
        body = ""
    detail = f": {body}" if body else ""
    if status == 429:
        return _Failure(f"HTTP 429 Too Many Requests{detail}", retryable=True, retry_after=retry_after,
                        hint="the endpoint rate-limits clients: wait, or lower min_interval / question rate")
    if status in RETRY_STATUSES:
        return _Failure(f"HTTP {status} {exc.reason}{detail}", retryable=True, retry_after=retry_after)
    hint = "the endpoint refused the request; check its URL and access rules"
    if status == 405:
        hint = "the endpoint does not accept this HTTP method: set method to GET or POST"
    return _Failure(f"HTTP {status} {exc.reason}{detail}", retryable=False, hint=hint)


def _wrapper_response(exc: Exception) -> bytes | str:
    """The server's answer that SPARQLWrapper kept only inside its exception message."""
    import ast

    _, found, response = str(exc).partition("Response:\n")
    if not found:
        return ""
    try:
        value = ast.literal_eval(response.strip())
    except (ValueError, SyntaxError):
        return response
    return value if isinstance(value, (bytes, str)) else response


def _wrapper_failure(exc: Exception) -> _Failure | None:
    """Map SPARQLWrapper's own HTTP exceptions (400/401/404/414/500)."""
    from SPARQLWrapper.SPARQLExceptions import (
        EndPointInternalError,
        EndPointNotFound,
        QueryBadFormed,
        Unauthorized,
        URITooLong,
    )

    body = _excerpt(_wrapper_response(exc))
    detail = f": {body}" if body else ""
    table: list[tuple[type[Exception], str, str]] = [
        (QueryBadFormed, "HTTP 400: the endpoint rejected the query",
         "check the SPARQL syntax; this engine may not support an extension the query uses"),
        (EndPointNotFound, "HTTP 404: no SPARQL service at this URL",
         "check the endpoint URL (it often ends in /sparql)"),
        (Unauthorized, "HTTP 401: the endpoint requires authentication", "this endpoint is not public"),
        (URITooLong, "HTTP 414: the query is too long for a GET request", "set method to POST"),
        (EndPointInternalError, "HTTP 500: the endpoint failed to run the query",
         "the query may be too expensive for this endpoint (timeouts often look like this)"),
    ]
    for kind, message, hint in table:
        if isinstance(exc, kind):
            return _Failure(message + detail, retryable=False, hint=hint)
    return None


def _classify(exc: Exception) -> _Failure:
    """Turn anything a request can raise into a :class:`_Failure`."""
    if isinstance(exc, urllib.error.HTTPError):
        return _http_failure(exc)
    mapped = _wrapper_failure(exc)
    if mapped is not None:
        return mapped
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(reason, (TimeoutError, socket.timeout)):
        return _Failure("timed out waiting for the endpoint", retryable=True,
                        hint="the endpoint is slow or unreachable: raise timeout, or try again later")
    if isinstance(reason, ConnectionRefusedError):
        return _Failure("connection refused", retryable=True,
                        hint="is the endpoint running, and is the URL's host and port right?")
    if isinstance(exc, (urllib.error.URLError, http.client.HTTPException, OSError)):
        return _Failure(f"request failed: {reason}", retryable=True,
                        hint="check the network and the endpoint URL")
    return _Failure(f"unexpected error from the SPARQL client: {exc!r}", retryable=False)


# -- results ----------------------------------------------------------------------------------


def ensure_limit(sparql: str, max_rows: int) -> str:
    """``sparql`` with ``LIMIT max_rows`` added when it has no top-level LIMIT.

    The check is lexical (comments, strings and IRIs are skipped); a LIMIT inside a
    sub-query does not count.  A trailing ``VALUES`` block stays last.

    >>> ensure_limit("SELECT * { { SELECT ?s { ?s ?p ?o } LIMIT 5 } }", 10).endswith("LIMIT 10")
    True
    >>> ensure_limit("SELECT * { ?s ?p ?o } LIMIT 3", 10).endswith("LIMIT 3")
    True
    """
    depth = 0
    values_at: int | None = None
    for match in sparql_tokens(sparql):
        token = match.group()
        if match.lastgroup == "other":
            depth += {"{": 1, "}": -1}.get(token, 0)
        elif match.lastgroup == "word" and depth == 0:
            upper = token.upper()
            if upper == "LIMIT":
                return sparql
            if upper == "VALUES" and values_at is None:
                values_at = match.start()
    if values_at is not None:
        return f"{sparql[:values_at]}LIMIT {int(max_rows)}\n{sparql[values_at:]}"
    return f"{sparql.rstrip()}\nLIMIT {int(max_rows)}"


def _named(value: str) -> NamedNode:
    try:
        return NamedNode(value)
    except ValueError:
        from urllib.parse import quote

        return NamedNode(quote(value, safe=":/?#[]@!$&'()*+,;=%~"))


def _blank(value: str) -> BlankNode:
    try:
        return BlankNode(value)
    except ValueError:  # Virtuoso sends "nodeID://b1234"
        import hashlib

        return BlankNode("b" + hashlib.sha1(value.encode("utf-8")).hexdigest()[:24])


def _literal(value: dict[str, Any]) -> Literal:
    text = str(value.get("value", ""))
    language = value.get("xml:lang") or value.get("lang")
    if language:
        try:
            return Literal(text, language=str(language))
        except ValueError:
            return Literal(text)
    datatype = value.get("datatype")
    if datatype and datatype not in (XSD_STRING, RDF_LANG_STRING):
        return Literal(text, datatype=_named(str(datatype)))
    return Literal(text)


def json_term(value: dict[str, Any]) -> Term:
    """One SPARQL JSON results term → the pyoxigraph term the local store would return.

    >>> json_term({"type": "literal", "value": "Alien", "xml:lang": "en"}) == Literal("Alien", language="en")
    True
    """
    kind = value.get("type")
    if kind == "uri":
        return _named(str(value.get("value", "")))
    if kind == "bnode":
        return _blank(str(value.get("value", "")))
    if kind in ("literal", "typed-literal"):
        return _literal(value)
    if kind == "triple":
        inner = value.get("value", {})
        return Triple(json_term(inner["subject"]), json_term(inner["predicate"]),  # type: ignore[arg-type]
                      json_term(inner["object"]))
    raise ValueError(f"unknown term type {kind!r}")


def _ask_boolean(data: dict[str, Any]) -> bool:
    """ASK's answer; Virtuoso sometimes answers as one ``__ASK_RETVAL`` row instead of ``boolean``."""
    if isinstance(data.get("boolean"), bool):
        return bool(data["boolean"])
    bindings = (data.get("results") or {}).get("bindings")
    if isinstance(bindings, list):
        for row in bindings:
            for term in row.values():
                return str(term.get("value", "")).lower() in ("1", "true")
        return False
    raise ValueError("an ASK answer without 'boolean'")


def parse_json_results(body: bytes, sparql: str, form: str) -> QueryResult:
    """SPARQL 1.1 JSON results → :class:`QueryResult` (a :class:`_Failure` when malformed or cut short)."""
    if not body.lstrip()[:1] == b"{":
        raise _Failure(f"the answer is not SPARQL JSON results: {_excerpt(body, 120) or '(empty)'}",
                       retryable=not body.strip(), hint="check that the URL is a SPARQL endpoint")
    try:
        data = json.loads(body.decode("utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        if form == "ASK":
            return QueryResult(query=sparql, form=form, boolean=_ask_boolean(data))
        variables = _result_variables(data, sparql)
        bindings = data["results"]["bindings"]
        rows = [tuple(json_term(row[v]) if v in row else None for v in variables) for row in bindings]
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _Failure(f"truncated or invalid JSON in the answer ({exc}): {_excerpt(body, 120)}",
                       retryable=True, hint="the connection may have been cut; try again later") from exc
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _Failure(f"the answer is not SPARQL JSON results ({exc}): {_excerpt(body, 120)}",
                       retryable=False, hint="check that the URL is a SPARQL endpoint") from exc
    return QueryResult(query=sparql, form=form, variables=variables, rows=rows)


def _result_variables(data: dict[str, Any], sparql: str) -> list[str]:
    """The answer's variables in the SELECT's order; a :class:`_Failure` when the answer lacks one.

    An answer whose rows have fewer variables than the query asked for (a broken proxy or
    cache can send one) would break every caller that unpacks rows.
    """
    given = [str(v) for v in (data.get("head") or {}).get("vars", [])]
    asked = projected_variables(sparql)
    if asked is None:
        return given
    missing = [v for v in asked if v not in given]
    if missing:
        raise _Failure("the answer lacks variable(s) " + ", ".join("?" + v for v in missing)
                       + " asked for by the SELECT (it has: " + (", ".join("?" + v for v in given) or "none") + ")",
                       retryable=False, hint="a proxy or cache in front of the endpoint may be altering answers; "
                       "check the endpoint URL")
    return asked


def parse_graph(body: bytes, content_type: str) -> list[Triple]:
    """A CONSTRUCT/DESCRIBE answer (N-Triples, Turtle, RDF/XML, JSON-LD) → triples."""
    media = content_type.split(";")[0].strip().lower()
    fmt = RdfFormat.from_media_type(media) if media else None
    if fmt is None or fmt in (RdfFormat.N_QUADS, RdfFormat.TRIG):
        fmt = RdfFormat.TURTLE  # N-Triples is Turtle too
    try:
        return [Triple(q.subject, q.predicate, q.object) for q in parse(body, format=fmt)]
    except SyntaxError as exc:
        raise _Failure(f"truncated or invalid {fmt.name} in the answer ({exc})", retryable=True) from exc
