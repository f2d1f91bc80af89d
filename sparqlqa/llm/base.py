"""The one LLM interface: requests, responses, accounting records, backends by spec.

Every LLM step of sparqlqa calls :meth:`LLM.complete`.  It builds an
:class:`LLMRequest`, looks the request up in the response cache
(``use`` / ``only`` / ``off``), calls the backend's single abstract method
:meth:`LLM._complete` on a miss, validates structured answers against their
JSON schema and returns an :class:`LLMResponse` whose :class:`LLMCall` is the
accounting record the calling stage attaches to its result.

>>> from sparqlqa.llm import FakeLLM
>>> llm = FakeLLM(["Paris"])
>>> reply = llm.complete("Capital of France?")
>>> reply.text, reply.call.cache_hit, reply.call.backend
('Paris', False, 'fake')
"""

from __future__ import annotations

__all__ = ["CACHE_MODES", "DEFAULT_ANTHROPIC_MODEL", "LLM", "LLMOptions", "LLMRequest", "LLMResponse", "Message",
           "cache_key", "get_llm", "llm_choices", "llms", "resolve_cache_mode", "resolve_llm_spec"]

import dataclasses
import hashlib
import json
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from sparqlqa.errors import ConfigError, LLMError, NotInCache, UnknownNameError
from sparqlqa.llm.call import LLMCall, redact_url
from sparqlqa.llm.pricing import estimate_cost
from sparqlqa.llm.structured import parse_structured, validate_structured
from sparqlqa.registry import Registry

if TYPE_CHECKING:
    from sparqlqa.llm.cache import CachedAnswer, LLMCache

Role = Literal["user", "assistant"]
CacheMode = Literal["use", "only", "off"]
CACHE_MODES: tuple[str, ...] = ("use", "only", "off")
#: the model used for ``anthropic`` without ``:MODEL`` and by :func:`resolve_llm_spec`
DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-5-5"


@dataclass(frozen=True)
class Message:
    """One conversation turn."""

    role: Role
    content: str

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class LLMOptions:
    """Per-call settings.  Only model, temperature and max_tokens change the answer (and the cache key).

    The Anthropic backend ignores ``temperature``: API version 2026-10-21, which
    anthropic SDK 2.x speaks, has no sampling parameters.
    """

    model: str | None = None
    temperature: float = 0.0
    max_tokens: int = 1024
    timeout: float = 60.0  # seconds for the whole call: every attempt and every wait between attempts
    base_url: str | None = None
    max_retries: int = 4

    def answer_affecting(self) -> dict[str, Any]:
        """The options that are part of the cache key."""
        return {"model": self.model, "temperature": self.temperature, "max_tokens": self.max_tokens}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready options; credentials in a base URL are masked."""
        data = dataclasses.asdict(self)
        data["base_url"] = redact_url(self.base_url)
        return data


@dataclass(frozen=True)
class LLMRequest:
    """What a backend receives: everything needed for one completion."""

    system: str | None
    messages: list[Message]
    schema: dict[str, Any] | None
    schema_name: str
    options: LLMOptions

    @property
    def model(self) -> str:
        return self.options.model or ""

    def prompt_preview(self, limit: int = 120) -> str:
        """The start of the last user message, for error messages."""
        text = self.messages[-1].content if self.messages else ""
        text = " ".join(text.split())
        return text if len(text) <= limit else text[: limit - 1] + "…"

    def to_record(self) -> dict[str, Any]:
        """JSON-ready description (used for pending prompts)."""
        return {
            "system": self.system,
            "messages": [m.to_dict() for m in self.messages],
            "options": self.options.to_dict(),
            "schema": self.schema,
            "schema_name": self.schema_name,
        }


@dataclass
class LLMResponse:
    """Text of the answer, the parsed object for structured calls, and the accounting record."""

    text: str
    data: Any | None
    call: LLMCall


class LLM(ABC):
    """Base of every backend.  Subclasses implement :meth:`_complete` only.

    ``cache`` is the response cache (None: no caching at all); ``cache_mode``
    is ``use`` (default), ``only`` or ``off``, else ``$SPARQLQA_LLM_CACHE``.
    """

    #: the name the backend is registered under in :data:`llms` (the registry sets it)
    backend_name: ClassVar[str] = "llm"
    default_model: ClassVar[str | None] = None

    def __init__(
        self,
        model: str | None = None,
        *,
        options: LLMOptions | None = None,
        cache: LLMCache | None = None,
        cache_mode: str | None = None,
    ) -> None:
        self.model: str = model or (options.model if options else None) or self.default_model or ""
        self.options = options or LLMOptions()
        self.cache = cache
        self.cache_mode: CacheMode = resolve_cache_mode(cache_mode)

    @classmethod
    def from_spec(cls, rest: str | None, **kwargs: Any) -> LLM:
        """Build the backend from the part of a spec after ``name:``."""
        return cls(rest or None, **kwargs)

    @property
    def spec(self) -> str:
        """A spec string that rebuilds this backend with :func:`get_llm`."""
        return f"{self.backend_name}:{self.model}" if self.model else self.backend_name

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec} cache={self.cache_mode}>"

    @abstractmethod
    def _complete(self, request: LLMRequest) -> LLMResponse:
        """Answer ``request`` (one network round trip, retries included)."""

    def complete(
        self,
        prompt: str | Sequence[Message],
        *,
        system: str | None = None,
        schema: dict[str, Any] | None = None,
        schema_name: str = "answer",
        options: LLMOptions | None = None,
    ) -> LLMResponse:
        """Answer ``prompt`` through the cache; with ``schema``, ``.data`` is the validated object."""
        opts = options or self.options
        if not opts.model:  # the backend's model fills in what the options leave out
            opts = dataclasses.replace(opts, model=self.model)
        request = LLMRequest(system=system, messages=_as_messages(prompt), schema=schema,
                             schema_name=schema_name or "answer", options=opts)
        key = cache_key(self.backend_name, request)
        if self.cache is not None and self.cache_mode != "off":
            hit = self.cache.get(key)
            if hit is not None:
                return self._cached_response(request, key, hit)
            if self.cache_mode == "only":
                from sparqlqa.llm.context import current_context

                self.cache.add_pending(key, backend=self.backend_name, model=request.model,
                                       request=request.to_record(), context=current_context())
                raise NotInCache(key)
        return self._call_backend(request, key)

    def _call_backend(self, request: LLMRequest, key: str) -> LLMResponse:
        started = time.perf_counter()
        try:
            response = self._complete(request)
            data = response.data
            if request.schema is not None:
                data = _structured_data(response, request.schema)
        except LLMError as exc:
            self._record_failure(request, key, exc, started)
            raise
        call = dataclasses.replace(
            response.call,
            **_request_fields(self.backend_name, request),
            response_text=response.text,
            response_data=data,
            latency_ms=round((time.perf_counter() - started) * 1000.0, 3),
            cache_hit=False,
            key=key,
        )
        if call.cost_usd is None:
            call.cost_usd = estimate_cost(call.backend, call.model, call.input_tokens, call.output_tokens)
        if self.cache is not None:
            if self.cache_mode == "use":
                self.cache.put(key, backend=call.backend, model=call.model, text=response.text, data=data,
                               input_tokens=call.input_tokens, output_tokens=call.output_tokens)
            self.cache.record_usage(call)
        return LLMResponse(text=response.text, data=data, call=call)

    def _cached_response(self, request: LLMRequest, key: str, hit: CachedAnswer) -> LLMResponse:
        """A hit costs nothing, except an imported answer: its estimated cost (it was paid elsewhere)."""
        cost = (estimate_cost(self.backend_name, request.model, hit.input_tokens, hit.output_tokens)
                if hit.tokens_estimated else 0.0)
        call = LLMCall(**_request_fields(self.backend_name, request), response_text=hit.text,
                       response_data=hit.data, input_tokens=hit.input_tokens, output_tokens=hit.output_tokens,
                       cost_usd=cost, latency_ms=0.0, cache_hit=True, key=key,
                       tokens_estimated=hit.tokens_estimated)
        if self.cache is not None:
            self.cache.record_usage(call)
        return LLMResponse(text=hit.text, data=hit.data, call=call)

    def _record_failure(self, request: LLMRequest, key: str, exc: LLMError, started: float) -> None:
        if self.cache is None:
            return
        raw = getattr(exc, "raw", "")
        call = LLMCall(**_request_fields(self.backend_name, request), response_text=raw or "",
                       latency_ms=round((time.perf_counter() - started) * 1000.0, 3), key=key,
                       error=f"{type(exc).__name__}: {exc}")
        self.cache.record_usage(call)

    def make_response(self, request: LLMRequest, text: str, data: Any | None = None, *,
                      input_tokens: int = 0, output_tokens: int = 0,
                      cost_usd: float | None = None) -> LLMResponse:
        """Helper for backends: an :class:`LLMResponse` with usage filled in."""
        call = LLMCall(**_request_fields(self.backend_name, request), response_text=text,
                       response_data=data, input_tokens=input_tokens, output_tokens=output_tokens,
                       cost_usd=cost_usd)
        return LLMResponse(text=text, data=data, call=call)


def _structured_data(response: LLMResponse, schema: dict[str, Any]) -> Any:
    """The validated object of a structured answer (parsed from text when the backend gave none)."""
    if response.data is not None:
        return validate_structured(response.data, schema, raw=response.text)
    return parse_structured(response.text, schema)


def _request_fields(backend: str, request: LLMRequest) -> dict[str, Any]:
    return {
        "backend": backend,
        "model": request.model,
        "system": request.system,
        "messages": [m.to_dict() for m in request.messages],
        "options": request.options.to_dict(),
        "schema": request.schema,
    }


def _as_messages(prompt: str | Sequence[Message] | Sequence[dict[str, str]]) -> list[Message]:
    if isinstance(prompt, str):
        return [Message("user", prompt)]
    messages: list[Message] = []
    for item in prompt:
        if isinstance(item, Message):
            messages.append(item)
        elif isinstance(item, dict) and item.get("role") in ("user", "assistant"):
            role: Role = "user" if item["role"] == "user" else "assistant"
            messages.append(Message(role, str(item.get("content", ""))))
        else:
            raise ConfigError(f"not a chat message: {item!r}",
                              hint="pass a string or Message(role='user'|'assistant', content=...)")
    if not messages:
        raise ConfigError("an LLM prompt needs at least one message")
    return messages


def cache_key(backend: str, request: LLMRequest) -> str:
    """SHA-256 of everything that determines the answer: backend, model, options, prompt, schema."""
    payload = {
        "backend": backend,
        "model": request.model,
        "options": request.options.answer_affecting(),
        "system": request.system,
        "messages": [m.to_dict() for m in request.messages],
        "schema": request.schema,
        "schema_name": request.schema_name if request.schema is not None else None,
    }
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def resolve_cache_mode(mode: str | None) -> CacheMode:
    """``mode`` argument > ``$SPARQLQA_LLM_CACHE`` > ``use``."""
    chosen = (mode or os.environ.get("SPARQLQA_LLM_CACHE") or "use").strip().lower()
    if chosen not in CACHE_MODES:
        raise ConfigError(f"unknown LLM cache mode {chosen!r}", hint="use one of: use, only, off")
    return chosen  # type: ignore[return-value]


# --- backends by spec -----------------------------------------------------------------

llms: Registry[type[LLM]] = Registry("llm", lazy={"anthropic": "sparqlqa.llm.anthropic_backend",
                                                  "openai": "sparqlqa.llm.openai_backend", "fake": "sparqlqa.llm.fake"},
                                  name_attribute="backend_name")


def get_llm(spec: str, *, cache_mode: str | None = None, cache: LLMCache | None = None) -> LLM:
    """The backend for ``spec`` (``name[:rest]``), with the default cache unless mode is ``off``.

    >>> get_llm("fake", cache_mode="off").backend_name
    'fake'
    """
    spec = spec.strip()
    if spec.lower() in ("offline", "none", ""):
        raise ConfigError(f"LLM spec {spec!r} means 'no LLM'",
                          hint="the caller should use the offline strategy; see resolve_llm_spec()")
    name, _, rest = spec.partition(":")
    if name.strip().lower() not in llms:
        raise UnknownNameError("llm", name.strip(), llm_choices())
    backend = llms.get(name.strip().lower())
    mode = resolve_cache_mode(cache_mode)
    if cache is None and mode != "off":
        from sparqlqa.llm.cache import LLMCache

        cache = LLMCache()
    return backend.from_spec(rest or None, cache=cache, cache_mode=mode)


def llm_choices() -> list[str]:
    """The ``--llm`` names to offer a user: registered backends not marked ``test_only``, and ``offline``.

    >>> llm_choices()
    ['anthropic', 'offline', 'openai']
    """
    shown = [name for name in llms.names() if not getattr(llms.get(name), "test_only", False)]
    return sorted([*shown, "offline"])


def resolve_llm_spec(spec: str | None) -> str | None:
    """The LLM to use: ``spec`` > ``$SPARQLQA_LLM`` > Anthropic if a key is known > None (offline)."""
    from sparqlqa.llm.keys import get_key

    chosen = (spec or "").strip() or os.environ.get("SPARQLQA_LLM", "").strip()
    if chosen:
        return None if chosen.lower() == "offline" else chosen
    if get_key("anthropic"):
        return f"anthropic:{DEFAULT_ANTHROPIC_MODEL}"
    return None
