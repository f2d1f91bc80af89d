"""Who is asking: the question, KB, strategy and stage behind the LLM calls made in a block.

:func:`sparqlqa.ask` sets ``kb``, ``strategy`` and ``question``; each stage sets
``stage`` (``triplets``, ``rerank``); ``sparqlqa eval`` adds ``question_id``.
A prompt that misses the cache in ``--llm-cache only`` mode is recorded as
pending together with these fields, so ``sparqlqa llm pending`` can say which
question and stage it belongs to.  Context variables are per thread, so
parallel eval workers do not mix their questions.

>>> with llm_context(kb="movies", strategy="4step"):
...     with llm_context(stage="triplets"):
...         current_context()["stage"], current_context()["kb"]
('triplets', 'movies')
>>> current_context()
{}
"""

from __future__ import annotations

__all__ = ["current_context", "llm_context"]

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

#: the fields a pending prompt records (``question`` is the question text)
CONTEXT_FIELDS: tuple[str, ...] = ("question_id", "question", "kb", "strategy", "stage")

_CURRENT: ContextVar[dict[str, str]] = ContextVar("sparqlqa_llm_context", default={})  # noqa: B039


@contextmanager
def llm_context(**fields: str | None) -> Iterator[dict[str, str]]:
    """Add ``fields`` (see :data:`CONTEXT_FIELDS`; ``None`` values are ignored) for the block."""
    unknown = set(fields) - set(CONTEXT_FIELDS)
    if unknown:
        raise TypeError(f"unknown LLM context field(s): {', '.join(sorted(unknown))}")
    merged = {**_CURRENT.get(), **{k: str(v) for k, v in fields.items() if v is not None}}
    token = _CURRENT.set(merged)
    try:
        yield merged
    finally:
        _CURRENT.reset(token)


def current_context() -> dict[str, str]:
    """A copy of the fields set by the enclosing :func:`llm_context` blocks."""
    return dict(_CURRENT.get())
