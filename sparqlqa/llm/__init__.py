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

from typing import TYPE_CHECKING, Any

from sparqlqa.registry import lazy_attribute

if TYPE_CHECKING:
    from sparqlqa.llm.base import (
        CACHE_MODES,
        DEFAULT_ANTHROPIC_MODEL,
        LLM,
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
    from sparqlqa.llm.call import LLMCall
    from sparqlqa.llm.context import current_context, llm_context
    from sparqlqa.llm.fake import FakeLLM
    from sparqlqa.llm.retry import RetryPolicy
    from sparqlqa.llm.structured import parse_structured

#: where each name lives: imported on first use (PEP 562), so ``from sparqlqa.llm.context import llm_context``
#: on an offline ``ask`` does not import the LLM backends, the cache, the HTTP transport (``ssl``) or the
#: entry points (issue 36)
_HOME = {
    "CACHE_MODES": "sparqlqa.llm.base",
    "CachedAnswer": "sparqlqa.llm.cache",
    "DEFAULT_ANTHROPIC_MODEL": "sparqlqa.llm.base",
    "FakeLLM": "sparqlqa.llm.fake",
    "ImportReport": "sparqlqa.llm.cache",
    "LLM": "sparqlqa.llm.base",
    "LLMCache": "sparqlqa.llm.cache",
    "LLMCall": "sparqlqa.llm.base",
    "LLMOptions": "sparqlqa.llm.base",
    "LLMRequest": "sparqlqa.llm.base",
    "LLMResponse": "sparqlqa.llm.base",
    "Message": "sparqlqa.llm.base",
    "RetryPolicy": "sparqlqa.llm.retry",
    "cache_key": "sparqlqa.llm.base",
    "current_context": "sparqlqa.llm.context",
    "get_llm": "sparqlqa.llm.base",
    "llm_context": "sparqlqa.llm.context",
    "llms": "sparqlqa.llm.base",
    "parse_structured": "sparqlqa.llm.structured",
    "resolve_cache_mode": "sparqlqa.llm.base",
    "resolve_llm_spec": "sparqlqa.llm.base",
}


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _HOME, name)
