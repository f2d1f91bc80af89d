"""The LLM layer: one interface, backends by spec, a response cache and accounting.

>>> from sparqlqa.llm import FakeLLM, LLMOptions
>>> llm = FakeLLM(['{"answer": "yes"}'])
>>> reply = llm.complete("Is Paris in France?", schema={"type": "object"},
...                      options=LLMOptions(max_tokens=50))
>>> reply.data, reply.call.input_tokens
({'answer': 'yes'}, 4)

Backends: ``anthropic[:MODEL]``, ``openai:BASE_URL#MODEL``, ``fake``; ``offline``
means "no LLM" (see :func:`resolve_llm_spec`).  Importing this package does not
import the ``anthropic`` SDK.
"""

from __future__ import annotations

from sparqlqa.llm.base import (
    CACHE_MODES,
    DEFAULT_ANTHROPIC_MODEL,
    LLM,
    LLMCall,
    LLMOptions,
    LLMRequest,
    LLMResponse,
    Message,
    cache_key,
    get_llm,
    llms,
    resolve_cache_mode,
    resolve_llm_spec,
)
from sparqlqa.llm.cache import CachedAnswer, ImportReport, LLMCache
from sparqlqa.llm.context import current_context, llm_context
from sparqlqa.llm.fake import FakeLLM
from sparqlqa.llm.retry import RetryPolicy
from sparqlqa.llm.structured import parse_structured

__all__ = [
    "CACHE_MODES",
    "DEFAULT_ANTHROPIC_MODEL",
    "LLM",
    "CachedAnswer",
    "FakeLLM",
    "ImportReport",
    "LLMCache",
    "LLMCall",
    "LLMOptions",
    "LLMRequest",
    "LLMResponse",
    "Message",
    "RetryPolicy",
    "cache_key",
    "current_context",
    "get_llm",
    "llm_context",
    "llms",
    "parse_structured",
    "resolve_cache_mode",
    "resolve_llm_spec",
]
