"""OpenAI-compatible chat completions over the one transport: Ollama, vLLM, llama.cpp server, LM Studio, OpenAI.

Spec: ``openai:BASE_URL#MODEL`` (e.g. ``openai:http://localhost:11434/v1#llama3.1``),
or ``openai:MODEL`` with the base URL from ``$OPENAI_BASE_URL`` (default
``https://api.openai.com/v1``).  The key (``$OPENAI_API_KEY`` or the keys file)
is optional: local servers need none.  Structured answers ask for
``response_format: json_schema`` *and* describe the schema in the system
prompt; servers that reject ``response_format`` are asked again without it.
Requests go through :class:`sparqlqa.net.Transport` (one deadline per call, ``LLMOptions.timeout``,
retries included; a redirect to another host is refused, never followed).
"""

from __future__ import annotations

__all__ = ["OpenAICompatibleLLM"]

import json
import os
from typing import TYPE_CHECKING, Any, ClassVar

from sparqlqa.deadlines import within_scope
from sparqlqa.errors import ConfigError, LLMBadRequest, LLMConnectionError, LLMParseError, LLMTimeout
from sparqlqa.llm.base import LLM, LLMRequest, LLMResponse, llms
from sparqlqa.llm.call import redact_url
from sparqlqa.llm.keys import get_key
from sparqlqa.llm.networked import NetworkedLLM, NetworkOptions
from sparqlqa.llm.retry import (
    RetryableFailure,
    call_with_retries,
)
from sparqlqa.net import CallFailure, Deadline, Request, Response, Transport
from sparqlqa.version import __version__

if TYPE_CHECKING:
    from typing_extensions import Unpack


DEFAULT_BASE_URL = "https://api.openai.com/v1"
KEY_HINT = (
    "set the environment variable OPENAI_API_KEY (export OPENAI_API_KEY=...) or store a key with "
    "'sparqlqa llm keys set openai'; local servers (Ollama, llama.cpp) usually need no key"
)
#: an answer longer than this is refused (a chat completion is a few kB)
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
SCHEMA_INSTRUCTION = "Reply with one JSON value that matches this JSON schema, and nothing else:\n"


@llms.register("openai")
class OpenAICompatibleLLM(NetworkedLLM):
    """A chat-completions server, reached through its own :class:`~sparqlqa.net.Transport` (a test may pass one)."""

    default_model: ClassVar[str | None] = None
    key_hint: ClassVar[str] = KEY_HINT

    base_url: str

    def __init__(self, model: str | None = None, *, transport: Transport | None = None,
                 **network: Unpack[NetworkOptions]) -> None:
        super().__init__(model, **network)
        self.base_url = (self.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self._http = transport or Transport(user_agent=f"sparqlqa/{__version__}")

    @classmethod
    def from_spec(cls, rest: str | None, **kwargs: Any) -> LLM:
        """``BASE_URL#MODEL``, ``MODEL`` or ``BASE_URL`` (then pass the model in the options)."""
        rest = (rest or "").strip()
        if "#" in rest:
            base_url, model = rest.rsplit("#", 1)
            return cls(model or None, base_url=base_url or None, **kwargs)
        if rest.startswith(("http://", "https://")):
            return cls(None, base_url=rest, **kwargs)
        return cls(rest or None, **kwargs)

    @property
    def spec(self) -> str:
        return f"openai:{redact_url(self.base_url)}#{self.model}"

    def __repr__(self) -> str:
        return f"<OpenAICompatibleLLM {self.spec} cache={self.cache_mode}>"

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._http.close()

    # --- the call -----------------------------------------------------------------------

    def _complete(self, request: LLMRequest) -> LLMResponse:
        if not request.model:
            raise ConfigError("the openai backend needs a model name",
                              hint="use a spec like openai:http://localhost:11434/v1#llama3.1")
        url = f"{(request.options.base_url or self.base_url).rstrip('/')}/chat/completions"
        try:
            body = self._post_with_retries(url, _request_body(request, response_format=True), request)
        except LLMBadRequest as exc:
            if request.schema is None or "response_format" not in str(exc).lower():
                raise
            body = self._post_with_retries(url, _request_body(request, response_format=False), request)
        return self._response_from_body(request, body, url)

    def _post_with_retries(self, url: str, payload: dict[str, Any], request: LLMRequest) -> str:
        deadline = Deadline(within_scope(request.options.timeout))
        return call_with_retries(lambda: self._attempt(url, payload, request, deadline),
                                 max_retries=request.options.max_retries, policy=self.retry, deadline=deadline)

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "application/json"}
        key = self._api_key or get_key("openai")
        if key:
            headers["authorization"] = f"Bearer {key}"
        return headers

    def _attempt(self, url: str, payload: dict[str, Any], request: LLMRequest, deadline: Deadline) -> str:
        """One HTTP round trip; returns the body of a 2xx response."""
        shown = redact_url(url) or url
        sent = Request("POST", url, self._headers(), json.dumps(payload).encode("utf-8"))
        try:
            response = self._http.send(sent, deadline, max_bytes=MAX_RESPONSE_BYTES)
        except CallFailure as failure:
            if deadline.expired() or failure.message.startswith("timed out"):
                raise LLMTimeout(f"{shown} did not answer within {deadline.seconds:g} s",
                                 hint="raise the timeout option (local models can be slow on first load)") from None
            error = LLMConnectionError(f"cannot reach the chat-completions server at {shown}: {failure.message}",
                                       hint="is the server running (e.g. 'ollama serve')? check the URL")
            if failure.retryable:
                raise RetryableFailure(error) from None
            raise error from None
        if response.status >= 400:
            raise self._http_error(response.status, request, url=shown, provider=f"chat-completions server {shown}",
                                  detail=_error_detail(response), headers=response.headers,
                                  overloaded=response.status == 503)
        return response.text

    def _response_from_body(self, request: LLMRequest, body: str, url: str) -> LLMResponse:
        try:
            payload = json.loads(body)
        except (ValueError, RecursionError):
            payload = None
        message = _first_message(payload)
        if message is None:
            raise LLMParseError(f"malformed response from {redact_url(url)}: no choices[0].message",
                                raw=body, hint="check the base URL points at an OpenAI-compatible /v1 API")
        text = _message_text(message)
        usage = payload.get("usage") if isinstance(payload, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        return self.make_response(request, text, None, input_tokens=_int(usage.get("prompt_tokens")),
                                  output_tokens=_int(usage.get("completion_tokens")))


def _request_body(request: LLMRequest, *, response_format: bool) -> dict[str, Any]:
    system = request.system or ""
    if request.schema is not None:
        instruction = SCHEMA_INSTRUCTION + json.dumps(request.schema, ensure_ascii=False)
        system = f"{system}\n\n{instruction}" if system else instruction
    messages = ([{"role": "system", "content": system}] if system else [])
    messages += [m.to_dict() for m in request.messages]
    body: dict[str, Any] = {
        "model": request.model,
        "messages": messages,
        "temperature": request.options.temperature,
        "max_tokens": request.options.max_tokens,
        "stream": False,
    }
    if request.schema is not None and response_format:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": request.schema_name, "schema": request.schema, "strict": False},
        }
    return body


def _first_message(payload: Any) -> dict[str, Any] | None:
    if not isinstance(payload, dict):
        return None
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message")
    return message if isinstance(message, dict) else None


def _message_text(message: dict[str, Any]) -> str:
    """The reply text: ``content`` (string or text parts), else the first tool call's arguments."""
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    if isinstance(content, str) and content:
        return content
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls and isinstance(calls[0], dict):
        function = calls[0].get("function")
        if isinstance(function, dict) and isinstance(function.get("arguments"), str):
            return str(function["arguments"])
    return content if isinstance(content, str) else ""


def _error_detail(response: Response) -> str:
    """The server's explanation: OpenAI's ``error.message``, Ollama's ``error`` string, or the body."""
    try:
        body = json.loads(response.body)
    except (ValueError, RecursionError):
        body = None
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])[:300]
        if isinstance(error, str):
            return error[:300]
        if isinstance(body.get("message"), str):
            return str(body["message"])[:300]
    text = " ".join(response.text.split())
    return text[:300] or response.reason or "no detail"


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
