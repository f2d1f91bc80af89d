"""What the backends reached over the network share: a key, a base URL and a retry policy.

:class:`NetworkedLLM` is the base of :class:`~sparqlqa.llm.anthropic_backend.AnthropicLLM` and
:class:`~sparqlqa.llm.openai_backend.OpenAICompatibleLLM`; each adds its own keywords beside
:class:`NetworkOptions` (the keywords every networked backend takes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from sparqlqa.llm.base import LLM, LLMOptions
from sparqlqa.llm.retry import RetryPolicy

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from sparqlqa.llm.cache import LLMCache

__all__ = ["NetworkOptions", "NetworkedLLM"]


class NetworkOptions(TypedDict, total=False):
    """The keywords of every networked backend: ``api_key`` (else the environment or the keys file),
    ``base_url`` (else the backend's own), ``retry`` (backoff; tests use tiny delays), and the cache's."""

    options: LLMOptions | None
    api_key: str | None
    base_url: str | None
    retry: RetryPolicy | None
    cache: LLMCache | None
    cache_mode: str | None


class NetworkedLLM(LLM):
    """An :class:`~sparqlqa.llm.base.LLM` reached over the network (the key is never shown)."""

    def __init__(self, model: str | None = None, **network: Unpack[NetworkOptions]) -> None:
        super().__init__(model, options=network.get("options"), cache=network.get("cache"),
                         cache_mode=network.get("cache_mode"))
        self._api_key = network.get("api_key")
        self.base_url: str | None = network.get("base_url")
        self.retry = network.get("retry") or RetryPolicy()
