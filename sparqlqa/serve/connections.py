"""Connections of ``sparqlqa serve``: a read timeout, a connection cap and one access-log line per request.

:func:`guarded_protocol` makes a subclass of uvicorn's h11 protocol (``uvicorn.run(..., http=cls)``):

* **Read timeout.**  A request must arrive whole (head and body) within ``read_timeout`` seconds of its
  first byte (or of the connection opening).  The deadline is not moved by each new byte, so a client
  dripping one header byte a second is cut off as surely as one that stalls.  Past it the client gets
  ``408`` and the connection is closed.  Idle keep-alive connections are uvicorn's business (closed
  after ``timeout_keep_alive``).
* **Connection caps.**  Past ``max_connections`` open connections, a new one is answered ``503`` (with
  ``Connection: close``) to its first request and closed, so surplus clients hold no worker.  Past
  ``max_per_client`` open connections from one client address, its new one is answered ``429`` the same
  way.  Only admitted connections count toward either cap: one address holding hundreds of idle sockets
  holds ``max_per_client`` slots, and everyone else still gets in (its refused sockets wait for their
  ``429``, or the read timeout's ``408``, without taking a slot).
* **Access log.**  One line per request on the ``sparqlqa.serve.access`` logger: client address, method,
  path, status, milliseconds.  Only the path: never the query string or a header, so no token reaches
  the log; control characters in the path are escaped.  A client that went away before its answer is
  status ``499``: that one line is all the log says about it (no traceback).
"""

from __future__ import annotations

__all__ = ["access_log", "guarded_protocol"]

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import h11
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

access_log = logging.getLogger("sparqlqa.serve.access")

#: the status logged for a client that went away before its answer (nginx's convention)
CLIENT_CLOSED = 499
#: the longest path written to the access log (characters; longer ones end in "...")
MAX_LOGGED_PATH = 200


def _raw_response(status: int, reason: str, error: str, hint: str) -> bytes:
    body = json.dumps({"error": error, "hint": hint}).encode()
    head = (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            "connection: close\r\n\r\n")
    return head.encode("ascii") + body


def refusing(status: int, error: str, hint: str) -> Callable[[Any, Any, Any], Awaitable[None]]:
    """The ASGI app answering every request of a connection over a cap: ``status``, our error JSON, close."""
    body = json.dumps({"error": error, "hint": hint}).encode()

    async def refuse(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close"), (b"retry-after", b"1")]})
        await send({"type": "http.response.body", "body": body})

    return refuse


#: the answer to a connection over ``max_connections``
_unavailable = refusing(503, "the server has too many open connections", "try again shortly, or close idle connections")
#: the answer to a connection over ``max_per_client`` from its address
_too_many_from_client = refusing(429, "too many open connections from your address",
                                "close idle connections (or reuse one: keep-alive) and try again")


def loggable(path: str) -> str:
    r"""``path`` fit for one log line: control characters, quotes and backslashes escaped, length capped.

    >>> loggable('/api/ask\n"x"')
    '/api/ask\\x0a\\x22x\\x22'
    """
    out = "".join(c if c.isprintable() and c not in '"\\' else f"\\x{ord(c):02x}" if ord(c) < 256
                  else f"\\u{ord(c):04x}" for c in path[:MAX_LOGGED_PATH])
    return out + ("..." if len(path) > MAX_LOGGED_PATH else "")


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a read deadline per request, connection caps and our access log."""

    read_timeout: float = 20.0
    max_connections: int = 64
    max_per_client: int = 16
    #: whether this connection counts toward the caps (a refused one does not)
    admitted: bool = False

    def __init__(self, config: Config, server_state: ServerState, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.inner = self.app
        self.app = self.logged  # every request of this connection runs through the access log
        self.read_timer: asyncio.TimerHandle | None = None
        self.read_started = 0.0
        self.timed_out = False

    # -- the cap and the read deadline -----------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        refusal = self._over_cap()
        if refusal is None:
            self.admitted = True
        else:
            self.inner = refusal
        self._arm()

    def _over_cap(self) -> Callable[[Any, Any, Any], Awaitable[None]] | None:
        """The refusal this new connection gets: its address holds ``max_per_client`` admitted connections
        (429), or the server ``max_connections`` (503); ``None`` when it is admitted."""
        admitted = [other for other in self.connections
                    if isinstance(other, GuardedH11Protocol) and other is not self and other.admitted]
        address = self.client[0] if self.client else None
        from_here = sum(1 for other in admitted if other.client and other.client[0] == address)
        if address is not None and from_here >= self.max_per_client:
            return _too_many_from_client
        if len(admitted) >= self.max_connections:
            return _unavailable
        return None

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._reading():
            self._arm()
        else:
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        self._disarm()
        super().on_response_complete()

    def _reading(self) -> bool:
        """Whether a request is partly read: its head incomplete, or its body still coming."""
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            return True
        return state is h11.IDLE and bool(self.conn.trailing_data[0])

    def _arm(self) -> None:
        if self.read_timer is None and not self.transport.is_closing():
            self.read_started = time.perf_counter()
            self.read_timer = self.loop.call_later(self.read_timeout, self._read_timed_out)

    def _disarm(self) -> None:
        if self.read_timer is not None:
            self.read_timer.cancel()
            self.read_timer = None

    def _read_timed_out(self) -> None:
        """The request did not arrive in time: 408 and close (the app, if it was waiting for the body,
        sees a disconnect; its access line says 408)."""
        self.read_timer = None
        if self.transport.is_closing() or not (self._reading() or self.conn.their_state is h11.IDLE):
            return
        answering = self.cycle is not None and not self.cycle.response_complete
        if answering and self.cycle.response_started:
            return  # the app already answers: not ours to cut
        self.timed_out = True
        self.transport.write(_raw_response(408, "Request Timeout",
                                           f"the request did not arrive within {self.read_timeout:g} s",
                                           "send the whole request at once"))
        if not answering:  # nobody else will log this request
            self._log(None, 408, self.read_started)
        self.transport.close()

    # -- the access log ----------------------------------------------------------------------------

    async def logged(self, scope: Any, receive: Any, send: Any) -> None:
        """Run the app for one request and write its access line."""
        cycle = getattr(receive, "__self__", None)  # uvicorn's RequestResponseCycle of this request
        started = time.perf_counter()
        status = 500  # what uvicorn answers when the app fails before answering

        async def sending(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.inner(scope, receive, sending)
        finally:
            if self.timed_out:
                status = 408
            elif cycle is not None and cycle.disconnected and not cycle.response_complete:
                status = CLIENT_CLOSED
            self._log(scope, status, started)

    def _log(self, scope: Any, status: int, started: float) -> None:
        client = f"{self.client[0]}:{self.client[1]}" if self.client else "-"
        request = f"{scope['method']} {loggable(scope['path'])}" if scope else "- -"
        access_log.info('%s "%s" %d %.1fms', client, request, status, (time.perf_counter() - started) * 1000)


def guarded_protocol(*, read_timeout: float, max_connections: int,
                     max_per_client: int | None = None) -> type[GuardedH11Protocol]:
    """A :class:`GuardedH11Protocol` class with these limits, for ``uvicorn.run(..., http=...)``
    (``max_per_client``: none but ``max_connections`` when not given)."""
    return type("GuardedH11Protocol", (GuardedH11Protocol,),
                {"read_timeout": read_timeout, "max_connections": max_connections,
                 "max_per_client": max_connections if max_per_client is None else max_per_client})
