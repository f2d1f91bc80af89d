"""One HTTP call to a SPARQL endpoint: one deadline, a redirect policy, failures that say what happened.

Every request an :class:`~sparqlqa.remote.endpoint.EndpointStore` sends goes through :func:`send`
(the standard library's :mod:`http.client`: no third-party HTTP client, so nothing follows a
redirect or retries behind our back):

* **one deadline** (:class:`Deadline`) bounds the whole call — connecting, sending, waiting for
  the headers, reading the body, every redirect hop and, in the store, every retry and backoff.
  Each socket operation gets the time left as its timeout, and a watchdog shuts the socket down
  when the deadline passes, so a server that answers one byte at a time cannot stretch it either.
  (Only the DNS lookup is outside it: the resolver takes no timeout.)
* **redirects**: one to the same host (same port, or ``http`` → ``https`` on the default ports) is
  followed, with the same method and body, at most :data:`MAX_REDIRECTS` times; one to another host
  is refused with an error naming both hosts, so a query (a POST body included) never goes
  anywhere the user did not name.
* **proxies** from the environment (``http_proxy``, ``https_proxy``, ``no_proxy``) are used as urllib
  would (no proxy credentials);
* **bounded answers**: a body longer than ``max_bytes`` is refused as soon as it is announced or
  read, so memory stays bounded whatever the server sends.

Any failure is a :class:`CallFailure`: the message, whether a retry may help, a hint, and the
wait a server asked for (``Retry-After``).

>>> same_host("http://a.org/sparql", "https://A.org/x"), same_host("http://a.org/", "http://b.org/")
(True, False)
>>> Deadline(5).remaining() <= 5
True
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

__all__ = ["MAX_REDIRECTS", "REDIRECT_STATUSES", "CallFailure", "Deadline", "Request", "Response", "excerpt",
           "same_host", "send"]

#: redirect hops followed within one host
MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_CHUNK = 1 << 20


class CallFailure(Exception):
    """One failed attempt: why, whether another try may help, and how long the server asked to wait."""

    def __init__(self, message: str, *, retryable: bool, hint: str | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.hint = hint
        self.retry_after = retry_after


class Deadline:
    """A point in time (monotonic clock) ``seconds`` from now; one per query, retries included."""

    def __init__(self, seconds: float) -> None:
        self.seconds = float(seconds)
        self.end = time.monotonic() + self.seconds

    def remaining(self) -> float:
        return self.end - time.monotonic()

    def expired(self) -> bool:
        return self.remaining() <= 0


@dataclass(frozen=True)
class Request:
    """What to send: method, URL, headers and (for POST) the body."""

    method: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None


@dataclass
class Response:
    """A final (non-redirect) answer: status, headers (lower-case names), body, and the URL that gave it."""

    status: int
    reason: str
    headers: dict[str, str]
    body: bytes
    url: str

    def header(self, name: str) -> str:
        return self.headers.get(name.lower(), "")

    @property
    def content_type(self) -> str:
        return self.header("content-type")


def excerpt(data: bytes | str | None, size: int = 300) -> str:
    """The first ``size`` characters of ``data`` on one line (bytes decoded leniently).

    >>> excerpt(b"<html>\\n  Login\\n</html>")
    '<html> Login </html>'
    """
    if isinstance(data, bytes):
        data = data[: size * 4].decode("utf-8", "replace")
    text = " ".join(str(data or "").split())
    return text[:size] + ("..." if len(text) > size else "")


def _origin(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or _DEFAULT_PORTS.get(scheme, 0)


def same_host(origin: str, target: str) -> bool:
    """Whether a redirect from ``origin`` to ``target`` stays on the same server (``http`` → ``https``
    on the default ports counts as the same; the way back does not)."""
    scheme_a, host_a, port_a = _origin(origin)
    scheme_b, host_b, port_b = _origin(target)
    if not host_a or host_a != host_b:
        return False
    if (scheme_a, port_a) == (scheme_b, port_b):
        return True
    return (scheme_a, port_a, scheme_b, port_b) == ("http", 80, "https", 443)


def send(request: Request, deadline: Deadline, *, max_bytes: int) -> Response:
    """Send ``request``, follow same-host redirects, return the final answer (any status but a redirect).

    :class:`CallFailure` when the deadline passes, the connection fails, the body is cut short or
    longer than ``max_bytes``, or a redirect leads to another host (refused before anything is sent there).
    """
    url = request.url
    for _hop in range(MAX_REDIRECTS + 1):
        response = _exchange(request.method, url, request.headers, request.body, deadline, max_bytes)
        location = response.header("location")
        if response.status not in REDIRECT_STATUSES or not location:
            return response
        target = urljoin(url, location)
        if not same_host(url, target):
            raise CallFailure(
                f"redirected (HTTP {response.status}) from {urlsplit(url).netloc} to another host, "
                f"{urlsplit(target).netloc} ({target}): refused, the query was not sent there",
                retryable=False, hint=f"if {target} is the endpoint you mean, use that URL instead")
        url = target
    raise CallFailure(f"more than {MAX_REDIRECTS} redirects, the last to {url}", retryable=False,
                      hint="use the endpoint's final URL")


def _exchange(method: str, url: str, headers: Mapping[str, str], body: bytes | None, deadline: Deadline,
              max_bytes: int) -> Response:
    """One request and its answer, within ``deadline``."""
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    remaining = deadline.remaining()
    if remaining <= 0:
        raise _timed_out(deadline)
    connection, target = _connection(url, target, remaining)
    watchdog = _Watchdog(connection, deadline)
    try:
        connection.connect()
        watchdog.start()
        connection.request(method, target, body=body, headers=dict(headers))
        _set_timeout(connection, deadline)
        answer = connection.getresponse()
        data = _read_body(answer, connection, deadline, max_bytes)
        return Response(answer.status, answer.reason, {k.lower(): v for k, v in answer.getheaders()}, data, url)
    except CallFailure:
        raise
    except Exception as exc:  # the socket and http.client raise many kinds
        raise _timed_out(deadline) if watchdog.fired or deadline.expired() else _connection_failure(exc) from exc
    finally:
        watchdog.cancel()
        connection.close()


def _connection(url: str, target: str, timeout: float) -> tuple[http.client.HTTPConnection, str]:
    """A connection to the endpoint, or through the proxy the environment names (``http_proxy``,
    ``https_proxy``, ``no_proxy``, as urllib reads them), and the request target to send it."""
    parts = urlsplit(url)
    https = parts.scheme.lower() == "https"
    connection_class = http.client.HTTPSConnection if https else http.client.HTTPConnection
    proxy = urllib.request.getproxies().get(parts.scheme.lower())
    if not proxy or urllib.request.proxy_bypass(parts.hostname or ""):
        return connection_class(parts.hostname or "", parts.port, timeout=timeout), target
    via = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    if https:  # a CONNECT tunnel: the proxy sees the host, never the query
        connection = http.client.HTTPSConnection(via.hostname or "", via.port or 80, timeout=timeout)
        connection.set_tunnel(parts.hostname or "", parts.port or 443)
        return connection, target
    return http.client.HTTPConnection(via.hostname or "", via.port or 80, timeout=timeout), url


def _set_timeout(connection: http.client.HTTPConnection, deadline: Deadline) -> None:
    remaining = deadline.remaining()
    if remaining <= 0:
        raise _timed_out(deadline)
    if connection.sock is not None:
        connection.sock.settimeout(remaining)


def _read_body(answer: http.client.HTTPResponse, connection: http.client.HTTPConnection, deadline: Deadline,
               max_bytes: int) -> bytes:
    """The body, read in chunks under the deadline; :class:`CallFailure` past ``max_bytes`` or cut short."""
    declared = answer.getheader("Content-Length")
    if declared and declared.strip().isdigit() and int(declared) > max_bytes:
        raise _too_big(max_bytes, f"it announces {int(declared):,} bytes")
    chunks: list[bytes] = []
    size = 0
    while True:
        _set_timeout(connection, deadline)
        try:
            chunk = answer.read(min(_CHUNK, max_bytes + 1 - size))
        except http.client.IncompleteRead as exc:  # chunked transfer cut short
            raise _cut_short(size + len(exc.partial), size + len(exc.partial) + (exc.expected or 0)) from exc
        if not chunk:
            if declared and declared.strip().isdigit() and size < int(declared):
                raise _cut_short(size, int(declared))
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            raise _too_big(max_bytes, "more came")


class _Watchdog:
    """Shuts the connection's socket down when the deadline passes (a blocked read returns at once)."""

    def __init__(self, connection: http.client.HTTPConnection, deadline: Deadline) -> None:
        self.connection = connection
        self.fired = False
        self._timer = threading.Timer(max(deadline.remaining(), 0.0), self._fire)
        self._timer.daemon = True

    def start(self) -> None:
        self._timer.start()

    def cancel(self) -> None:
        self._timer.cancel()

    def _fire(self) -> None:
        self.fired = True
        sock = self.connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _timed_out(deadline: Deadline) -> CallFailure:
    return CallFailure(f"timed out: no complete answer within the {deadline.seconds:g} s timeout",
                       retryable=False, hint="the endpoint is slow or unreachable: try again later, or raise the "
                       "timeout (--timeout SECONDS, or timeout under [endpoint] in the KB's profile)")


def _connection_failure(exc: Exception) -> CallFailure:
    if isinstance(exc, ConnectionRefusedError):
        return CallFailure("connection refused", retryable=True,
                           hint="is the endpoint running, and is the URL's host and port right?")
    if isinstance(exc, ssl.SSLError):
        return CallFailure(f"TLS failed: {exc}", retryable=False,
                           hint="check the endpoint's certificate, or the URL's scheme (http/https)")
    if isinstance(exc, socket.gaierror):
        return CallFailure(f"cannot resolve the endpoint's host name ({exc})", retryable=True,
                           hint="check the URL's host name and the network")
    if isinstance(exc, (TimeoutError, socket.timeout)):
        return CallFailure("timed out waiting for the endpoint", retryable=False,
                           hint="the endpoint is slow or unreachable: raise the timeout, or try again later")
    if isinstance(exc, (http.client.HTTPException, OSError)):
        return CallFailure(f"request failed: {type(exc).__name__}: {exc}".rstrip(": "), retryable=True,
                           hint="check the network and the endpoint URL")
    return CallFailure(f"unexpected error from the HTTP client: {exc!r}", retryable=False)


def _cut_short(got: int, announced: int) -> CallFailure:
    return CallFailure(f"the answer was cut short: {got:,} of {announced:,} announced bytes arrived before the "
                       "connection closed", retryable=True,
                       hint="the connection or the endpoint failed mid-answer; try again later")


def _too_big(limit: int, why: str) -> CallFailure:
    return CallFailure(f"the answer is larger than max_response_bytes ({limit:,} bytes; {why}): refused",
                       retryable=False, hint="ask for fewer rows (LIMIT), or raise max_response_bytes in the "
                       "endpoint's settings")
