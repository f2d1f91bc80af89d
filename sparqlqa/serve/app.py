"""The HTTP front end of ``sparqlqa serve``: a Starlette app over a :class:`~sparqlqa.serve.service.Service`.

Routes: ``GET /`` (the page), ``GET /healthz``, ``GET /api/kbs``, ``GET /api/schema/{kb}``,
``POST /api/ask``, ``POST /api/sparql``.  Every error is JSON ``{"error", "hint"}`` (our
:class:`~sparqlqa.errors.SparqlqaError`: 400/403/404/502, a query stopped at its row or memory limit
413; body too large: 413; wrong content type: 415; over the time limit: 504, and the request's queries
are stopped then (:meth:`~sparqlqa.serve.service.Service.bounded_work`); anything else: 500, the
traceback only in the server log).  ``/healthz`` answers 503 while a request is at work long past its
time limit.
A body is checked once, here, by :func:`~sparqlqa.text_input.clean_json`: not UTF-8, not JSON, or
a string in it with a lone surrogate, NUL, a control character or too many characters is a 400
naming the field.  A client gone before its answer gets nothing and nothing is logged but its
access line (499, :mod:`sparqlqa.serve.connections`).
Blocking work runs in a bounded thread pool, so requests are answered concurrently.  With a
token, ``/api/*`` needs ``Authorization: Bearer TOKEN``; on loopback, a request whose ``Host``
is not a loopback name is refused (DNS rebinding), and POSTs must be ``application/json`` (a
cross-site form cannot send that without a CORS preflight, which this server never grants).
"""

from __future__ import annotations

__all__ = ["AnswerJSON", "Guard", "blocking", "create_app", "read_json"]

import asyncio
import base64
import contextvars
import hashlib
import hmac
import json
import logging
import math
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from functools import lru_cache
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from sparqlqa.errors import SparqlqaError, SparqlSyntaxError
from sparqlqa.serve.service import OVERDUE_GRACE_S, Service, status_of
from sparqlqa.text_input import CODE, NAME, PROSE, TextKind, clean_json, clean_text, decode_utf8

log = logging.getLogger("sparqlqa.serve")
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


class HTTPProblem(Exception):
    """A non-2xx answer with our error JSON."""

    def __init__(self, status: int, error: str, hint: str | None = None) -> None:
        super().__init__(error)
        self.status, self.error, self.hint = status, error, hint


class AnswerJSON(JSONResponse):
    """JSON whose non-finite floats (never valid JSON) become ``null``."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except ValueError:
            return super().render(_finite(content))


def _finite(value: Any) -> Any:
    """``value`` with NaN and ±inf replaced by ``None``.

    >>> _finite({"a": [1.0, float("nan")], "b": float("inf")})
    {'a': [1.0, None], 'b': None}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def problem(status: int, error: str, hint: str | None = None, **details: Any) -> JSONResponse:
    """Our JSON error body; ``details`` add fields (a SPARQL syntax error's ``line``, ``column``, ``problem``)."""
    return JSONResponse({"error": error, "hint": hint, **details}, status_code=status)


# --- the page ----------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def page() -> tuple[str, str]:
    """The page's HTML and its Content-Security-Policy (the inline script allowed by its hash only)."""
    html = resources.files("sparqlqa").joinpath("data/serve/index.html").read_text("utf-8")
    scripts = re.findall(r"<script>(.*?)</script>", html, flags=re.S)
    hashes = " ".join("'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
                      for s in scripts)
    csp = (f"default-src 'none'; script-src {hashes}; style-src 'unsafe-inline'; connect-src 'self'; "
           "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
    return html, csp


async def index(request: Request) -> Response:
    html, csp = page()
    return HTMLResponse(html, headers={"Content-Security-Policy": csp, "X-Content-Type-Options": "nosniff",
                                       "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"})


# --- request helpers ---------------------------------------------------------------------------------


class Disconnected(Exception):
    """The client went away before its request was read: nobody to answer (the access log says 499)."""


async def read_json(request: Request, limit: int, kinds: Mapping[str, TextKind]) -> Any:
    """The JSON body, read at most ``limit`` bytes far (413 past it, 415 if not JSON), every string in it
    checked by :func:`~sparqlqa.text_input.clean_json` (``kinds``: the kind of each top-level field): bad
    bytes, lone surrogates, NUL, control characters and oversized fields are a 400 naming the field."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise HTTPProblem(415, f"the body must be application/json, got {kind or 'no content type'}",
                          "send Content-Type: application/json")
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HTTPProblem(413, f"the request body is {int(declared):,} bytes; at most {limit:,}")
    body = bytearray()
    try:
        async for chunk in request.stream():
            body.extend(chunk)
            if len(body) > limit:
                raise HTTPProblem(413, f"the request body is over {limit:,} bytes")
    except ClientDisconnect:
        raise Disconnected from None
    text = decode_utf8(bytes(body), "the request body").removeprefix("\ufeff")
    try:
        payload = json.loads(text)
    except ValueError as exc:
        raise HTTPProblem(400, f"the request body is not valid JSON: {exc}", "send one JSON object") from None
    except RecursionError:
        raise HTTPProblem(400, "the request body nests too deeply", "send one flat JSON object") from None
    return clean_json(payload, kinds)


async def blocking(request: Request, work: Callable[[], Any]) -> Any:
    """Run ``work`` in the app's thread pool, bounded by the time limit (504 past it)."""
    state = request.app.state
    service: Service = state.service
    loop = asyncio.get_running_loop()
    deadline = time.monotonic() + service.settings.timeout_s  # the queries stop then, the client gets 504
    context = contextvars.copy_context()  # the thread sees this task's ContextVars (e.g. the endpoint timeout cap)
    future = loop.run_in_executor(state.executor, context.run, service.bounded_work(work, deadline))
    try:
        return await asyncio.wait_for(future, timeout=service.settings.timeout_s)
    except asyncio.TimeoutError:
        raise HTTPProblem(504, f"the request took longer than {state.service.settings.timeout_s:g} s",
                          "ask a narrower question, or start the server with a larger --timeout") from None


def endpoint(handler: Callable[[Request, Service], Awaitable[Any]]) -> Callable[[Request], Awaitable[Response]]:
    """A route from ``handler`` (returns JSON-ready data), with every error turned into our JSON."""

    async def route(request: Request) -> Response:
        try:
            return AnswerJSON(await handler(request, request.app.state.service))
        except Disconnected:  # nobody is listening; the access log records 499, nothing else is logged
            return Response(status_code=499)
        except HTTPProblem as exc:
            return problem(exc.status, exc.error, exc.hint)
        except SparqlqaError as exc:
            details = exc.location() if isinstance(exc, SparqlSyntaxError) else {}
            return problem(status_of(exc), exc.message, exc.hint, **details)
        except Exception as exc:
            log.exception("internal error answering %s %s", request.method, request.url.path)
            return problem(500, f"internal error ({type(exc).__name__})", "see the server log")

    return route


# --- routes ------------------------------------------------------------------------------------------

#: the kind of text of each field of a POST body (any other string: prose)
ASK_KINDS = {"kb": NAME, "question": PROSE, "strategy": NAME, "llm": NAME, "rerank": NAME}
SPARQL_KINDS = {"kb": NAME, "query": CODE}


async def healthz(request: Request, service: Service) -> Any:
    """200 ``{"status": "ok"}``; 503 when a request is still at work well past its time limit (its work
    could not be stopped: e.g. an LLM call that does not return), so a supervisor can restart us."""
    overdue = service.overdue()
    if overdue:
        raise HTTPProblem(503, f"{overdue} request(s) still at work more than {OVERDUE_GRACE_S:g} s past the "
                          f"{service.settings.timeout_s:g} s time limit", "restart the server if this persists")
    return {"status": "ok"}


async def list_kbs(request: Request, service: Service) -> Any:
    return {"kbs": await blocking(request, service.kbs), "auth": bool(request.app.state.token)}


async def schema(request: Request, service: Service) -> Any:
    name = clean_text(request.path_params["kb"], kind=NAME, field="the knowledge base name in the path")
    return await blocking(request, lambda: service.schema(name))


async def ask(request: Request, service: Service) -> Any:
    payload = await read_json(request, service.settings.max_body, ASK_KINDS)
    return await blocking(request, lambda: service.ask(payload).to_dict())


async def sparql(request: Request, service: Service) -> Any:
    payload = await read_json(request, service.settings.max_body, SPARQL_KINDS)
    return await blocking(request, lambda: service.sparql(payload))


# --- middleware --------------------------------------------------------------------------------------


class Guard:
    """Pure ASGI middleware: bearer token on ``/api/*``, loopback ``Host`` names when bound to loopback."""

    def __init__(self, app: ASGIApp, *, token: str | None, loopback: bool) -> None:
        self.app, self.token, self.loopback = app, token, loopback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        refusal = self.refusal(scope["path"], headers)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def refusal(self, path: str, headers: dict[str, str]) -> Response | None:
        if self.loopback and _host_name(headers.get("host", "")) not in LOOPBACK_HOSTS:
            return problem(421, "this server answers only requests addressed to a loopback name",
                           "use http://127.0.0.1:PORT/ or http://localhost:PORT/")
        if self.token and path.startswith("/api/"):
            scheme, _, given = headers.get("authorization", "").strip().partition(" ")
            # the scheme is case-insensitive (RFC 9110, 11.1): "bearer", "BEARER" and "Bearer" are one
            if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), self.token.encode()):
                return problem(401, "missing or wrong token",
                               "send 'Authorization: Bearer TOKEN' (the server's --token / $SPARQLQA_SERVE_TOKEN)")
        return None


def _host_name(host: str) -> str:
    """``Host`` header without its port: ``127.0.0.1:8080`` → ``127.0.0.1``, ``[::1]:80`` → ``[::1]``."""
    if host.startswith("["):
        return host.split("]")[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


async def _not_found(request: Request, exc: Exception) -> Response:
    return problem(404, f"no such page: {request.url.path}", "the API: /api/kbs, /api/schema/KB, /api/ask, /api/sparql")


async def _not_allowed(request: Request, exc: Exception) -> Response:
    return problem(405, f"{request.method} is not allowed on {request.url.path}", "POST /api/ask and /api/sparql")


def create_app(service: Service, *, token: str | None = None, loopback: bool = True) -> Starlette:
    """The ASGI app answering for ``service`` (wrap-free: pass it to uvicorn as is)."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        yield
        app.state.executor.shutdown(wait=False, cancel_futures=True)
        service.close()  # the open KBs' query workers stop with the server (a busy one: after its request)

    routes = [Route("/", index), Route("/healthz", endpoint(healthz)),
              Route("/api/kbs", endpoint(list_kbs)),
              Route("/api/schema/{kb}", endpoint(schema)),
              Route("/api/ask", endpoint(ask), methods=["POST"]),
              Route("/api/sparql", endpoint(sparql), methods=["POST"])]
    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={404: _not_found, 405: _not_allowed})
    app.state.service = service
    app.state.token = token
    app.state.executor = ThreadPoolExecutor(max_workers=service.settings.workers,
                                            thread_name_prefix="sparqlqa-serve")
    app.add_middleware(Guard, token=token, loopback=loopback)
    return app
