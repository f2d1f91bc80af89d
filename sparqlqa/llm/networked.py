"""What the backends reached over the network share: a key, a base URL and a retry policy.

:class:`NetworkedLLM` is the base of :class:`~sparqlqa.llm.anthropic_backend.AnthropicLLM` and
:class:`~sparqlqa.llm.openai_backend.OpenAICompatibleLLM`; each adds its own keywords beside
:class:`NetworkOptions` (the keywords every networked backend takes).
"""

from __future__ import annotations

__all__ = ["NetworkOptions", "NetworkedLLM"]

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar, TypedDict

from sparqlqa.llm.base import LLM, LLMOptions, LLMRequest
from sparqlqa.llm.retry import RetryPolicy, describe_request, parse_retry_after, status_error

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from sparqlqa.llm.cache import LLMCache


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

    #: where to get a key, said when the server refuses the one sent (or none)
    key_hint: ClassVar[str] = ""

    def __init__(self, model: str | None = None, **network: Unpack[NetworkOptions]) -> None:
        super().__init__(model, options=network.get("options"), cache=network.get("cache"),
                         cache_mode=network.get("cache_mode"))
        self._api_key = network.get("api_key")
        self.base_url: str | None = network.get("base_url")
        self.retry = network.get("retry") or RetryPolicy()

    def _http_error(self, status: int, request: LLMRequest, *, url: str, provider: str, detail: str,
                   headers: Mapping[str, str], overloaded: bool) -> Exception:
        """Our error for the server's HTTP error ``status`` on ``request`` sent to ``url`` (its ``Retry-After``
        honoured; a transient one wrapped to be retried: :func:`~sparqlqa.llm.retry.status_error`)."""
        return status_error(status, provider=provider, detail=detail, request_desc=describe_request(url, request),
                            auth_hint=self.key_hint, retry_after=parse_retry_after(headers), overloaded=overloaded)
