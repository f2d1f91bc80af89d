"""The one HTTP transport (httpx): one deadline per call, same-host redirects, bounded answers.

Every request an endpoint store or an LLM backend sends goes through a :class:`Transport`:

* **one deadline** (:class:`~sparqlqa.net.call.Deadline`) bounds the whole call — connecting, sending,
  waiting for the headers, reading the body, every redirect hop (and, in the retry loop, every retry
  and wait).  httpx's timeouts are per operation, so a server that drips one byte at a time could
  stretch them without end; here the deadline is the current one (:func:`~sparqlqa.net.call.within`)
  and a thin httpcore network backend clamps *every* socket operation — connect, TLS, each read and
  each write — to the time left, failing as soon as none is left.  That is a hard cut with no extra
  thread (a watchdog would need the socket before httpx hands out a response, i.e. not while the
  headers drip in).  Only the DNS lookup is outside it: the resolver takes no timeout.
* **redirects** are never followed by httpx: :meth:`Transport.send` follows one to the same host (same
  port, or ``http`` → ``https`` on the default ports) with the same method and body, at most
  :data:`MAX_REDIRECTS` times; one to another host is refused, naming both, so a request (a POST body
  included) never goes anywhere the user did not name;
* **proxies** from the environment (``http_proxy``, ``https_proxy``, ``no_proxy``) as urllib reads them,
  decided per request;
* **bounded answers**: a body longer than ``max_bytes`` is refused as soon as it is announced or read;
* a **User-Agent** of the caller's choosing on every request.

Any failure is a :class:`~sparqlqa.net.call.CallFailure`: the message, whether a retry may help, a hint.

>>> same_host("http://a.org/sparql", "https://A.org/x"), same_host("http://a.org/", "http://b.org/")
(True, False)
"""

from __future__ import annotations

__all__ = ["DEFAULT_PORTS", "MAX_REDIRECTS", "REDIRECT_STATUSES", "Request", "Response", "Transport", "excerpt",
           "same_host", "send"]

import socket
import ssl
import threading
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from sparqlqa.net.call import CallFailure, Deadline, current, within

if TYPE_CHECKING:
    import httpx

#: redirect hops followed within one host
MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
#: the port a URL without one means, by scheme
DEFAULT_PORTS: Mapping[str, int] = MappingProxyType({"http": 80, "https": 443})


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

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


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
    return scheme, (parts.hostname or "").lower(), parts.port or DEFAULT_PORTS.get(scheme, 0)


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


class Transport:
    """Pooled HTTP connections (one httpx client per proxy route), used from any thread; :meth:`close` ends them."""

    def __init__(self, *, user_agent: str | None = None) -> None:
        self.user_agent = user_agent
        self._clients: dict[str | None, httpx.Client] = {}  # by proxy URL (None: direct)
        self._lock = threading.Lock()

    def send(self, request: Request, deadline: Deadline, *, max_bytes: int) -> Response:
        """Send ``request``, follow same-host redirects, return the final answer (any status but a redirect).

        :class:`CallFailure` when the deadline passes, the connection fails, the body is cut short or
        longer than ``max_bytes``, or a redirect leads to another host (refused before anything is sent there).
        """
        url = request.url
        with within(deadline):
            for _hop in range(MAX_REDIRECTS + 1):
                response = self._exchange(Request(request.method, url, request.headers, request.body), deadline,
                                          max_bytes)
                location = response.header("location")
                if response.status not in REDIRECT_STATUSES or not location:
                    return response
                url = _redirect_target(url, location, response.status)
        raise CallFailure(f"more than {MAX_REDIRECTS} redirects, the last to {url}", retryable=False,
                          hint="use the endpoint's final URL")

    def client_for(self, url: str) -> httpx.Client:
        """The httpx client (deadline-clamped, no redirects followed) for requests to ``url``: direct, or
        through the proxy the environment names for it."""
        parts = urlsplit(url)
        proxy = urllib.request.getproxies().get(parts.scheme.lower())
        if proxy and urllib.request.proxy_bypass(parts.hostname or ""):
            proxy = None
        with self._lock:
            client = self._clients.get(proxy)
            if client is None:
                client = self._clients[proxy] = _client(proxy, self.user_agent)
            return client

    def close(self) -> None:
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()

    def _exchange(self, request: Request, deadline: Deadline, max_bytes: int) -> Response:
        """One request and its answer, within ``deadline``."""
        import httpx

        remaining = deadline.remaining()
        if remaining <= 0:
            raise _timed_out(deadline)
        headers = {"Accept-Encoding": "identity", **request.headers}
        client = self.client_for(request.url)
        try:
            with client.stream(request.method, request.url, headers=headers, content=request.body,
                               timeout=httpx.Timeout(remaining)) as answer:
                body = _read_body(answer, max_bytes)
                return Response(answer.status_code, answer.reason_phrase,
                                {k.lower(): v for k, v in answer.headers.items()}, body, request.url)
        except CallFailure:
            raise
        except httpx.TimeoutException as exc:
            raise _timed_out(deadline) if deadline.expired() or _clamped(exc) else _slow() from None
        except Exception as exc:  # httpx, httpcore, the socket and ssl raise many kinds
            raise _timed_out(deadline) if deadline.expired() else _connection_failure(exc) from exc


def send(request: Request, deadline: Deadline, *, max_bytes: int) -> Response:
    """:meth:`Transport.send` on a transport of its own (closed after): for a one-off call."""
    transport = Transport()
    try:
        return transport.send(request, deadline, max_bytes=max_bytes)
    finally:
        transport.close()


def _redirect_target(url: str, location: str, status: int) -> str:
    target = urljoin(url, location)
    if not same_host(url, target):
        raise CallFailure(
            f"redirected (HTTP {status}) from {urlsplit(url).netloc} to another host, "
            f"{urlsplit(target).netloc} ({target}): refused, the request was not sent there",
            retryable=False, hint=f"if {target} is the address you mean, use that URL instead")
    return target


def _client(proxy: str | None, user_agent: str | None) -> httpx.Client:
    import httpx

    transport = httpx.HTTPTransport(proxy=proxy)
    pool: Any = transport._pool  # httpx offers no public seam for httpcore's network backend
    pool._network_backend = _DeadlineBackend(pool._network_backend)
    headers = {"User-Agent": user_agent} if user_agent else None
    return httpx.Client(transport=transport, trust_env=False, follow_redirects=False, headers=headers)


def _read_body(answer: httpx.Response, max_bytes: int) -> bytes:
    """The body, read in chunks; :class:`CallFailure` past ``max_bytes`` or cut short."""
    import httpx

    declared = answer.headers.get("content-length", "").strip()
    announced = int(declared) if declared.isdigit() else None
    if announced is not None and announced > max_bytes:
        raise _too_big(max_bytes, f"it announces {announced:,} bytes")
    chunks: list[bytes] = []
    size = 0
    try:
        for chunk in answer.iter_raw():
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                raise _too_big(max_bytes, "more came")
    except httpx.RemoteProtocolError as exc:  # the connection closed before the whole body came
        raise _cut_short(size, announced) from exc
    return b"".join(chunks)


# -- the deadline on every socket operation -------------------------------------------------------


def _clamp(timeout: float | None, error: str) -> float | None:
    """``timeout`` shortened to the current deadline's time left; httpcore's ``error`` when none is left."""
    deadline = current()
    if deadline is None:
        return timeout
    left = deadline.remaining()
    if left <= 0:
        import httpcore

        raise getattr(httpcore, error)(f"the {deadline.seconds:g} s deadline passed")
    return left if timeout is None else min(timeout, left)


def _clamped(exc: BaseException) -> bool:
    return any("deadline passed" in str(link) for link in _chain(exc))


class _DeadlineStream:
    """An httpcore network stream whose every operation ends by the current deadline."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return bytes(self._stream.read(max_bytes, _clamp(timeout, "ReadTimeout")))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _clamp(timeout, "WriteTimeout"))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> _DeadlineStream:
        return _DeadlineStream(self._stream.start_tls(ssl_context, server_hostname,
                                                      _clamp(timeout, "ConnectTimeout")))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend:
    """httpcore's network backend with :class:`_DeadlineStream` streams and deadline-bounded connects."""

    def __init__(self, backend: Any) -> None:
        self._backend = backend

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> _DeadlineStream:
        return _DeadlineStream(self._backend.connect_tcp(host, port, _clamp(timeout, "ConnectTimeout"),
                                                         local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> Any:
        return _DeadlineStream(self._backend.connect_unix_socket(path, _clamp(timeout, "ConnectTimeout"),
                                                                 socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


# -- failures ---------------------------------------------------------------------------------------


def _chain(exc: BaseException | None) -> Iterator[BaseException]:
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def _timed_out(deadline: Deadline) -> CallFailure:
    return CallFailure(f"timed out: no complete answer within the {deadline.seconds:g} s timeout",
                       retryable=False, hint="the endpoint is slow or unreachable: try again later, or raise the "
                       "timeout (--timeout SECONDS, or timeout under [endpoint] in the KB's profile)")


def _slow() -> CallFailure:
    return CallFailure("timed out waiting for the endpoint", retryable=False,
                       hint="the endpoint is slow or unreachable: raise the timeout, or try again later")


def _connection_failure(exc: Exception) -> CallFailure:
    links = list(_chain(exc))
    if any(isinstance(link, ConnectionRefusedError) for link in links):
        return CallFailure("connection refused", retryable=True,
                           hint="is the endpoint running, and is the URL's host and port right?")
    tls = next((link for link in links if isinstance(link, ssl.SSLError)), None)
    if tls is not None:
        return CallFailure(f"TLS failed: {tls}", retryable=False,
                           hint="check the endpoint's certificate, or the URL's scheme (http/https)")
    unresolved = next((link for link in links if isinstance(link, socket.gaierror)), None)
    if unresolved is not None:
        return CallFailure(f"cannot resolve the endpoint's host name ({unresolved})", retryable=True,
                           hint="check the URL's host name and the network")
    if any(isinstance(link, OSError) for link in links) or type(exc).__module__.startswith(("httpx", "httpcore")):
        return CallFailure(f"request failed: {type(exc).__name__}: {exc}".rstrip(": "), retryable=True,
                           hint="check the network and the endpoint URL")
    return CallFailure(f"unexpected error from the HTTP client: {exc!r}", retryable=False)


def _cut_short(got: int, announced: int | None) -> CallFailure:
    said = f"{got:,} of {announced:,} announced bytes" if announced is not None else f"{got:,} bytes"
    return CallFailure(f"the answer was cut short: {said} arrived before the connection closed", retryable=True,
                       hint="the connection or the endpoint failed mid-answer; try again later")


def _too_big(limit: int, why: str) -> CallFailure:
    return CallFailure(f"the answer is larger than max_response_bytes ({limit:,} bytes; {why}): refused",
                       retryable=False, hint="ask for fewer rows (LIMIT), or raise max_response_bytes in the "
                       "endpoint's settings")
