"""The record of one LLM call: prompt, response, tokens, cost, latency (what every stage's history keeps).

A module of its own so the cache (:mod:`sparqlqa.llm.cache`) and the backends (:mod:`sparqlqa.llm.base`)
both use it without importing each other.
"""

from __future__ import annotations

__all__ = ["LLMCall", "redact_url"]

import dataclasses
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit


@dataclass
class LLMCall:
    """Accounting record of one :meth:`LLM.complete` call (a cache hit included)."""

    backend: str
    model: str
    system: str | None = None
    messages: list[dict[str, str]] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    schema: dict[str, Any] | None = None
    response_text: str = ""
    response_data: Any | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    latency_ms: float = 0.0
    cache_hit: bool = False
    key: str = ""
    error: str | None = None
    #: token counts (and so cost) estimated from the text: an imported answer, no API count
    tokens_estimated: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready copy.  API keys are never part of a call record."""
        data = dataclasses.asdict(self)
        data["options"] = dict(self.options)
        if "base_url" in data["options"]:
            data["options"]["base_url"] = redact_url(data["options"]["base_url"])
        return data


def redact_url(url: str | None) -> str | None:
    """``url`` without a ``user:password@`` part."""
    if not url:
        return url
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, f"***@{host}", parts.path, parts.query, parts.fragment))
