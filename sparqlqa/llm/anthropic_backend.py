"""Claude through the Anthropic Messages API (the ``anthropic`` SDK).

Spec: ``anthropic`` (default model) or ``anthropic:MODEL``.  Structured answers
use a forced tool call whose input schema is the answer's JSON schema
(``structured_output="tool"``, the default: any JSON schema works) or the
API's native JSON output (``"json_schema"``, ``output_config.format``); a
forced-tool request refused with 400 is asked again in ``json_schema`` mode.  The
SDK's own retries are off: the one retry loop (:mod:`sparqlqa.llm.retry` over
:mod:`sparqlqa.net.retry`) retries 429 / 5xx / 529 with bounded backoff that honours
``retry-after``, within one deadline per call (``LLMOptions.timeout``): each attempt gets
the time left as its timeout.  The SDK keeps its own HTTP client: it is built on
``httpx2`` and refuses an httpx client, so :class:`sparqlqa.net.Transport` cannot be
handed in (its per-operation timeouts bound each read, not a dripping answer as a whole).  The key comes from the
constructor, ``$ANTHROPIC_API_KEY``, ``$ANTHROPIC_AUTH_TOKEN`` or the keys
file; the base URL from the options, the constructor or ``$ANTHROPIC_BASE_URL``.

Importing this module does not import ``anthropic``; constructing the backend does.
"""

from __future__ import annotations

__all__ = ["AnthropicLLM"]

import hashlib
import json
import os
import re
import threading
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from sparqlqa.deadlines import within_scope
from sparqlqa.errors import (
    LLMAuthError,
    LLMBadRequest,
    LLMConnectionError,
    LLMError,
    LLMParseError,
    LLMTimeout,
    MissingExtraError,
)
from sparqlqa.llm.base import DEFAULT_ANTHROPIC_MODEL, LLMRequest, LLMResponse, llms
from sparqlqa.llm.keys import get_key
from sparqlqa.llm.networked import NetworkedLLM, NetworkOptions
from sparqlqa.llm.retry import (
    RetryableFailure,
    call_with_retries,
)
from sparqlqa.llm.structured import parse_structured
from sparqlqa.net import Deadline

if TYPE_CHECKING:
    from typing_extensions import Unpack


DEFAULT_BASE_URL = "https://api.anthropic.com"
KEY_HINT = (
    "set the environment variable ANTHROPIC_API_KEY (export ANTHROPIC_API_KEY=sk-ant-...) "
    "or store a key with 'sparqlqa llm keys set anthropic'; create keys at "
    "https://console.anthropic.com/settings/keys"
)
_TOOL_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_WRAP_KEY = "value"


@llms.register("anthropic")
class AnthropicLLM(NetworkedLLM):
    """The Anthropic backend.  ``retry`` tunes backoff (tests use tiny delays)."""

    default_model: ClassVar[str | None] = DEFAULT_ANTHROPIC_MODEL
    key_hint: ClassVar[str] = KEY_HINT

    def __init__(self, model: str | None = None, *, structured_output: Literal["tool", "json_schema"] = "tool",
                 **network: Unpack[NetworkOptions]) -> None:
        try:
            import anthropic
        except ImportError:
            raise MissingExtraError("anthropic", "the Anthropic LLM backend",
                                    "pip install 'sparqlqa[anthropic]'") from None
        super().__init__(model, **network)
        self._sdk = anthropic
        self.structured_output = structured_output
        #: SDK clients by (base URL, credential kind, SHA-256 of the credential) — never the key itself
        self._clients: dict[tuple[str | None, str, str], Any] = {}
        self._clients_lock = threading.Lock()

    def __repr__(self) -> str:  # no key in here, ever
        return f"<AnthropicLLM {self.spec} base_url={self.base_url!r} cache={self.cache_mode}>"

    # --- the call -----------------------------------------------------------------------

    def _complete(self, request: LLMRequest) -> LLMResponse:
        base_url = request.options.base_url or self.base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        client = self._client(base_url)
        shown_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        mode = self.structured_output
        try:
            body = self._post(client, request, mode, shown_url)
        except LLMBadRequest as exc:
            if request.schema is None or mode != "tool" or "tool" not in str(exc).lower():
                raise
            mode = "json_schema"  # e.g. forced tool use refused together with thinking
            body = self._post(client, request, mode, shown_url)
        return self._response_from_body(request, body, shown_url)

    def _post(self, client: Any, request: LLMRequest, mode: str, url: str) -> str:
        kwargs = _request_kwargs(request, mode)
        deadline = Deadline(within_scope(request.options.timeout))
        return call_with_retries(lambda: self._attempt(client, kwargs, request, url, deadline),
                                 max_retries=request.options.max_retries, policy=self.retry, deadline=deadline)

    def close(self) -> None:
        """Close the pooled connections."""
        with self._clients_lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()

    def _client(self, base_url: str | None) -> Any:
        """An SDK client for ``base_url`` and the current key (the SDK's own retries off).

        Clients are kept per (base URL, key digest) for this backend's life: each one
        holds a connection pool and a TLS context that are slow to build.
        """
        key = self._api_key or get_key("anthropic")
        token = os.environ.get("ANTHROPIC_AUTH_TOKEN", "").strip()
        if not key and not token:
            raise LLMAuthError("no Anthropic API key: ANTHROPIC_API_KEY is not set and the keys "
                               "file has none", hint=KEY_HINT)
        kind, secret = ("api_key", key) if key else ("auth_token", token)
        client_id = (base_url, kind, hashlib.sha256(secret.encode()).hexdigest())
        with self._clients_lock:
            client = self._clients.get(client_id)
            if client is None:
                if kind == "api_key":
                    client = self._sdk.Anthropic(api_key=secret, base_url=base_url, max_retries=0)
                else:
                    client = self._sdk.Anthropic(auth_token=secret, base_url=base_url, max_retries=0)
                self._clients[client_id] = client
            return client

    def _attempt(self, client: Any, kwargs: dict[str, Any], request: LLMRequest, url: str,
                 deadline: Deadline) -> str:
        """One HTTP round trip within ``deadline``; returns the raw response body."""
        sdk = self._sdk
        try:
            raw = client.messages.with_raw_response.create(**kwargs, timeout=max(deadline.remaining(), 0.001))
            return str(raw.text())
        except sdk.APITimeoutError:
            raise LLMTimeout(
                f"Anthropic API did not answer within {deadline.seconds:g} s ({url})",
                hint="raise the timeout option, or try again when the API is less busy",
            ) from None
        except sdk.APIConnectionError as exc:
            error = LLMConnectionError(f"cannot reach the Anthropic API at {url}: {exc}",
                                       hint="check your network, proxy and ANTHROPIC_BASE_URL")
            raise RetryableFailure(error) from None
        except sdk.APIStatusError as exc:
            raise self._status_error(exc, request, url) from None
        except sdk.AnthropicError as exc:
            raise LLMError(f"Anthropic SDK error: {exc}") from None

    def _status_error(self, exc: Any, request: LLMRequest, url: str) -> Exception:
        detail_type = getattr(exc, "type", None) or "error"
        detail_msg = getattr(exc, "api_message", None) or _short(str(getattr(exc, "body", "") or exc))
        request_id = exc.response.headers.get("request-id")
        detail = f"{detail_type}: {detail_msg}" + (f", request-id {request_id}" if request_id else "")
        return self._http_error(exc.status_code, request, url=f"{url}/v1/messages", provider="Anthropic API",
                               detail=detail, headers=dict(exc.response.headers),
                               overloaded=detail_type == "overloaded_error")

    def _response_from_body(self, request: LLMRequest, body: str, url: str) -> LLMResponse:
        payload = _json_object(body, url)
        content = payload.get("content")
        if not isinstance(content, list):
            raise LLMParseError(f"malformed response from the Anthropic API at {url}: no 'content' list",
                                raw=body, hint="check ANTHROPIC_BASE_URL points at a Messages API")
        texts = [str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"]
        text, data = "".join(texts), None
        if request.schema is not None:
            tool_input = _tool_input(content, _tool_name(request.schema_name))
            if tool_input is None and _needs_wrapping(request.schema):  # json_schema mode, wrapped
                tool_input = parse_structured(text, _wrap(request.schema))
            if tool_input is not None:
                data = _unwrap(tool_input, request.schema)
                text = json.dumps(data, ensure_ascii=False)
        usage = payload.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        tokens_in = sum(_int(usage.get(k)) for k in
                        ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
        return self.make_response(request, text, data, input_tokens=tokens_in,
                                  output_tokens=_int(usage.get("output_tokens")))


def _request_kwargs(request: LLMRequest, structured_output: str = "tool") -> dict[str, Any]:
    """Keyword arguments for ``messages.create`` (tool use when a schema is given).

    No ``temperature``: API version 2026-10-21 (sent by anthropic SDK 2.x) has no
    sampling parameters and answers 400 to any of them, so the option is ignored.
    """
    kwargs: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.options.max_tokens,
        "messages": [m.to_dict() for m in request.messages],
    }
    if request.system:
        kwargs["system"] = request.system
    if request.schema is not None and structured_output == "json_schema":
        kwargs["output_config"] = {"format": {"type": "json_schema", "schema": _wrap(request.schema)}}
    elif request.schema is not None:
        name = _tool_name(request.schema_name)
        kwargs["tools"] = [{
            "name": name,
            "description": "Give your final answer by calling this tool with arguments matching its schema.",
            "input_schema": _wrap(request.schema),
        }]
        kwargs["tool_choice"] = {"type": "tool", "name": name}
    return kwargs


def _tool_name(schema_name: str) -> str:
    return _TOOL_NAME_CHARS.sub("_", schema_name)[:64] or "answer"


def _needs_wrapping(schema: dict[str, Any]) -> bool:
    """Tool inputs must be objects: other schemas are wrapped in ``{"value": ...}``."""
    return schema.get("type") != "object"


def _wrap(schema: dict[str, Any]) -> dict[str, Any]:
    if not _needs_wrapping(schema):
        return schema
    return {"type": "object", "properties": {_WRAP_KEY: schema}, "required": [_WRAP_KEY]}


def _unwrap(tool_input: Any, schema: dict[str, Any]) -> Any:
    if _needs_wrapping(schema) and isinstance(tool_input, dict) and _WRAP_KEY in tool_input:
        return tool_input[_WRAP_KEY]
    return tool_input


def _tool_input(content: list[Any], name: str) -> Any | None:
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == name:
            return block.get("input")
    return None


def _json_object(body: str, url: str) -> dict[str, Any]:
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):
        payload = None
    if not isinstance(payload, dict):
        raise LLMParseError(f"malformed response from the Anthropic API at {url}: not a JSON object "
                            f"({_short(body)!r})", raw=body,
                            hint="check ANTHROPIC_BASE_URL points at a Messages API (or a faithful gateway)")
    return payload


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
