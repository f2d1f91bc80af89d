"""Cost estimates for LLM calls, where the price is known.

Prices are US dollars per million tokens (input, output), list prices without
batch or prompt-caching discounts.  Unknown models get ``None``: no guess.

>>> estimate_cost("anthropic", "claude-sonnet-5-5", 1_000_000, 0)
2.0
>>> estimate_cost("openai", "llama3.1", 10, 10) is None
True
"""

from __future__ import annotations

__all__ = ["CHARS_PER_TOKEN", "estimate_cost", "estimate_request_tokens", "estimate_tokens"]

#: model-name prefix → (USD per 1M input tokens, USD per 1M output tokens); longest prefix wins
ANTHROPIC_PRICES: dict[str, tuple[float, float]] = {
    "claude-fable-5-1": (10.0, 50.0),
    "claude-opus-5-5": (4.0, 20.0),
    "claude-opus-5": (5.0, 25.0),
    "claude-sonnet-5": (2.0, 10.0),
    "claude-opus-4-8": (5.0, 25.0),
    "claude-opus-4-7": (5.0, 25.0),
    "claude-opus-4-6": (5.0, 25.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-3-5-sonnet": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "claude-3-haiku": (0.25, 1.25),
    "claude-3-opus": (15.0, 75.0),
}

OPENAI_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4o": (2.5, 10.0),
    "gpt-4.1-mini": (0.4, 1.6),
    "gpt-4.1-nano": (0.1, 0.4),
    "gpt-4.1": (2.0, 8.0),
}

_PRICES_BY_BACKEND: dict[str, dict[str, tuple[float, float]]] = {
    "anthropic": ANTHROPIC_PRICES,
    "openai": OPENAI_PRICES,
}


def _price_per_million(backend: str, model: str) -> tuple[float, float] | None:
    """(input, output) USD per million tokens for ``model``, or None if unknown."""
    if backend == "fake":
        return (0.0, 0.0)
    table = _PRICES_BY_BACKEND.get(backend, {})
    matches = [prefix for prefix in table if model.startswith(prefix)]
    if not matches:
        return None
    return table[max(matches, key=len)]


def estimate_cost(backend: str, model: str, input_tokens: int, output_tokens: int) -> float | None:
    """Estimated USD cost of one call, or None when the price is not known."""
    prices = _price_per_million(backend, model)
    if prices is None:
        return None
    cost = (input_tokens * prices[0] + output_tokens * prices[1]) / 1_000_000
    return round(cost, 8)


#: characters per token assumed where no tokenizer counted them (imported answers, prompt budgets)
CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """Tokens in ``text`` estimated from its length (``CHARS_PER_TOKEN`` characters a token).

    >>> estimate_tokens(""), estimate_tokens("abcd"), estimate_tokens("abcde")
    (0, 1, 2)
    """
    return -(-len(text) // CHARS_PER_TOKEN)


def estimate_request_tokens(request: dict[str, object]) -> int:
    """Estimated input tokens of a pending prompt record (system, messages and output schema)."""
    import json

    parts = [str(request.get("system") or "")]
    messages = request.get("messages")
    if isinstance(messages, list):
        parts += [str(m.get("content", "")) for m in messages if isinstance(m, dict)]
    if request.get("schema") is not None:
        parts.append(json.dumps(request["schema"], ensure_ascii=False))
    return sum(estimate_tokens(p) for p in parts)
