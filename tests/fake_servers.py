"""Scriptable fake LLM HTTP servers on 127.0.0.1 for tests (no network, real clients).

Each server runs in a daemon thread, answers requests from a queue of
:class:`Reply` objects (in order) and records every :class:`Recorded` request.
When the queue is empty it answers 500 with a clear "nothing queued" error, so
a test that makes more calls than it scripted fails visibly.

    with FakeAnthropicServer() as server:
        server.reply_text("Paris")
        client = anthropic.Anthropic(base_url=server.url, api_key="test-key")
        ...
        assert server.requests[0].json()["model"] == "claude-test"

:class:`FakeAnthropicServer` speaks the Messages API (``POST /v1/messages``);
:class:`FakeOpenAIServer` the chat-completions API (``POST /v1/chat/completions``;
use ``server.base_url`` = ``.../v1`` as the OpenAI base URL).
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from sparqlqa.llm.retry import RetryPolicy

#: retries without waiting, for backends under test: the retry logic runs, the suite stays fast
FAST_RETRY = RetryPolicy(backoff_base=0.001, backoff_max=0.01, retry_after_cap=0.01, jitter=False)


@dataclass
class Reply:
    """One scripted HTTP response.  ``body`` may be bytes, text or a JSON-ready object."""

    status: int = 200
    body: Any = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    def encoded(self) -> tuple[bytes, str]:
        """The body bytes and their content type."""
        if isinstance(self.body, bytes):
            return self.body, "application/json"
        if isinstance(self.body, str):
            return self.body.encode("utf-8"), "application/json"
        return json.dumps(self.body).encode("utf-8"), "application/json"


@dataclass
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8"))

    def api_key(self) -> str | None:
        """The key sent as ``x-api-key`` or ``Authorization: Bearer`` (anthropic SDK 2.x uses Bearer)."""
        if "x-api-key" in self.headers:
            return self.headers["x-api-key"]
        auth = self.headers.get("authorization", "")
        return auth[len("Bearer ") :] if auth.startswith("Bearer ") else None


class FakeHTTPServer:
    """A threaded HTTP server answering from a queue of :class:`Reply` objects."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._replies: list[Reply] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # --- lifecycle ----------------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash)."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeHTTPServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                name="fake-llm-server",
                kwargs={"poll_interval": 0.01},
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> FakeHTTPServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # --- scripting ----------------------------------------------------------------------

    def push(self, *replies: Reply) -> FakeHTTPServer:
        """Queue replies, answered in order."""
        with self._lock:
            self._replies.extend(replies)
        return self

    def reply(
        self, status: int = 200, body: Any = b"", headers: dict[str, str] | None = None, delay: float = 0.0
    ) -> FakeHTTPServer:
        """Queue one raw reply."""
        return self.push(Reply(status, body, dict(headers or {}), delay))

    @property
    def remaining(self) -> int:
        """Replies still queued."""
        return len(self._replies)

    def _next_reply(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.requests.append(recorded)
            if self._replies:
                return self._replies.pop(0)
        return Reply(
            500,
            {
                "type": "error",
                "error": {
                    "type": "api_error",
                    "message": f"fake server: no reply queued for {recorded.path}",
                },
            },
        )


def _handler_for(server: FakeHTTPServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self._answer()

        def do_GET(self) -> None:
            self._answer()

        def _answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            recorded = Recorded(self.command, self.path, headers, body)
            reply = server._next_reply(recorded)
            if reply.delay:
                time.sleep(reply.delay)
            payload, content_type = reply.encoded()
            try:
                self.send_response(reply.status)
                headers = {"content-type": content_type, **reply.headers}
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
                pass

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


class FakeAnthropicServer(FakeHTTPServer):
    """Speaks the Anthropic Messages API.  Point the SDK at :attr:`url`."""

    def reply_text(
        self, text: str, *, input_tokens: int = 10, output_tokens: int = 5, model: str = "claude-test"
    ) -> FakeAnthropicServer:
        """Queue a 200 reply with one text block."""
        self.reply(
            200,
            message_body(
                [{"type": "text", "text": text}],
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                model=model,
            ),
        )
        return self

    def reply_tool(
        self, tool_input: Any, *, name: str = "answer", input_tokens: int = 20, output_tokens: int = 8
    ) -> FakeAnthropicServer:
        """Queue a 200 reply that calls tool ``name`` with ``tool_input`` (structured output)."""
        block = {"type": "tool_use", "id": "toolu_test", "name": name, "input": tool_input}
        self.reply(
            200,
            message_body(
                [block], input_tokens=input_tokens, output_tokens=output_tokens, stop_reason="tool_use"
            ),
        )
        return self

    def reply_error(
        self, status: int, error_type: str, message: str = "", headers: dict[str, str] | None = None
    ) -> FakeAnthropicServer:
        """Queue an API error, e.g. ``(529, "overloaded_error")`` or ``(401, "authentication_error")``."""
        body = {"type": "error", "error": {"type": error_type, "message": message or error_type}}
        self.reply(status, body, {"request-id": "req_test", **(headers or {})})
        return self

    def rate_limited(self, retry_after: float = 0.0) -> FakeAnthropicServer:
        """Queue a 429 with a ``retry-after`` header."""
        return self.reply_error(
            429,
            "rate_limit_error",
            "Number of requests has exceeded your rate limit",
            {"retry-after": f"{retry_after:g}"},
        )

    def overloaded(self, times: int = 1) -> FakeAnthropicServer:
        """Queue ``times`` 529 overloaded replies."""
        for _ in range(times):
            self.reply_error(529, "overloaded_error", "Overloaded")
        return self


def message_body(
    content: list[dict[str, Any]],
    *,
    input_tokens: int = 10,
    output_tokens: int = 5,
    model: str = "claude-test",
    stop_reason: str = "end_turn",
) -> dict[str, Any]:
    """A Messages API response body."""
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


class FakeOpenAIServer(FakeHTTPServer):
    """Speaks OpenAI chat completions.  Use :attr:`base_url` (``.../v1``) as the base URL."""

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def reply_text(
        self,
        text: str | None,
        *,
        prompt_tokens: int = 12,
        completion_tokens: int = 4,
        model: str = "local-model",
    ) -> FakeOpenAIServer:
        """Queue a 200 reply whose first choice says ``text``."""
        self.reply(
            200,
            completion_body(
                text, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, model=model
            ),
        )
        return self

    def reply_error(
        self,
        status: int,
        message: str,
        *,
        error_type: str = "invalid_request_error",
        headers: dict[str, str] | None = None,
    ) -> FakeOpenAIServer:
        """Queue an OpenAI-style error."""
        self.reply(status, {"error": {"message": message, "type": error_type, "code": None}}, headers)
        return self


def completion_body(
    text: str | None, *, prompt_tokens: int = 12, completion_tokens: int = 4, model: str = "local-model"
) -> dict[str, Any]:
    """A chat-completions response body."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


# --- SPARQL endpoints ------------------------------------------------------------------


@dataclass
class Scripted:
    """One scripted answer: status, body, headers, a delay, or a body cut short."""

    status: int = 200
    body: bytes | str | dict[str, Any] = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    truncate: bool = False  # announce the full length, send half, close
    content_type: str = "application/sparql-results+json"
    stream: int = 0  # send this many filler bytes after ``body``, in chunks (never all in memory)
    no_length: bool = False  # no Content-Length: the body ends when the connection closes


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def params(self) -> dict[str, list[str]]:
        query = urllib.parse.urlsplit(self.path).query
        if self.method == "POST":
            query = self.body.decode()
        return urllib.parse.parse_qs(query)


class LoopbackHTTP:
    """A threaded HTTP server on 127.0.0.1 (a free port) handing every GET and POST to ``answer(handler)``.

    The one way the test servers below (and ``tests/virtuoso.py``'s Oxigraph endpoint) listen; a context manager.
    """

    def __init__(self, answer: Callable[[BaseHTTPRequestHandler], None]) -> None:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body leave at once on a kept-alive connection

            def do_GET(self) -> None:
                answer(self)

            def do_POST(self) -> None:
                answer(self)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01},
                                       daemon=True)

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    def __enter__(self) -> LoopbackHTTP:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class FakeSparqlServer:
    """A threaded SPARQL server on 127.0.0.1 answering from a queue of :class:`Scripted` replies.

    Every request is recorded in ``seen`` (so a test can assert that none was sent); ``otherwise`` answers once
    the queue is empty (a canary that must see no request answers every one it gets with rows).
    """

    def __init__(self, otherwise: Scripted | None = None) -> None:
        self.otherwise = otherwise or Scripted(500, b"nothing scripted")
        self.replies: list[Scripted] = []
        self.seen: list[Seen] = []
        self.http = LoopbackHTTP(self._answer)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http.port}/sparql"

    @property
    def host(self) -> str:
        """``127.0.0.1:PORT``: what ``--allow-service`` names."""
        return f"127.0.0.1:{self.http.port}"

    def script(self, *replies: Scripted) -> None:
        self.replies.extend(replies)

    def __enter__(self) -> FakeSparqlServer:
        self.http.__enter__()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.http.__exit__(*exc_info)

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length) if length else b""
        self.seen.append(Seen(handler.command, handler.path, {k.lower(): v for k, v in handler.headers.items()},
                              body))
        reply = self.replies.pop(0) if self.replies else self.otherwise
        time.sleep(reply.delay)
        payload = reply.body if isinstance(reply.body, bytes) else (
            reply.body.encode() if isinstance(reply.body, str) else json.dumps(reply.body).encode())
        try:
            handler.send_response(reply.status)
            for name, value in {"Content-Type": reply.content_type, **reply.headers}.items():
                handler.send_header(name, value)
            if reply.no_length:
                handler.close_connection = True
                handler.send_header("Connection", "close")
            else:
                handler.send_header("Content-Length", str(len(payload) + reply.stream))
            if reply.truncate:
                handler.send_header("Connection", "close")
            handler.end_headers()
            handler.wfile.write(payload[: len(payload) // 2] if reply.truncate else payload)
            self._stream(handler, reply.stream)
            if reply.truncate:
                handler.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            handler.close_connection = True

    @staticmethod
    def _stream(handler: BaseHTTPRequestHandler, size: int) -> None:
        chunk = b" " * (1 << 20)
        while size > 0:  # bounded: stops at ``size`` or when the client hangs up
            handler.wfile.write(chunk[:size])
            size -= len(chunk)
