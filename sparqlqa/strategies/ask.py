"""Answer a question: :func:`ask` chooses a strategy by name and runs it.

>>> from sparqlqa.ingest import ingest                      # doctest: +SKIP
>>> answer = ask("movies", "Which films did Ridley Scott direct?")   # doctest: +SKIP
>>> answer.top.label, answer.strategy                              # doctest: +SKIP
('Alien', '4step')

Strategy choice: an explicit ``strategy`` > ``4step`` when an LLM resolves
(``llm`` argument, ``$SPARQLQA_LLM``, an Anthropic key) > ``offline``; when no
offline strategy is installed, ``vss``.  Running without an LLM adds one note
saying so.
"""

from __future__ import annotations

__all__ = ["NO_LLM_NOTE", "NO_OFFLINE_NOTE", "ask", "choose_strategy", "resolve_llm"]

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sparqlqa.embed.embedders import get_embedder
from sparqlqa.errors import ConfigError
from sparqlqa.kb.knowledge_base import KnowledgeBase, open_kb
from sparqlqa.kb.naming import names_language
from sparqlqa.language import asked_in, resolve_language
from sparqlqa.llm.context import llm_context
from sparqlqa.query.limits import ASK_TIMEOUT_S, QueryLimits, bounded
from sparqlqa.stages.modes import RerankMode, TopicMode, values
from sparqlqa.strategies.base import strategies
from sparqlqa.strategies.pipeline import AskContext
from sparqlqa.text_input import NAME, PROSE, clean_text

if TYPE_CHECKING:
    from sparqlqa.llm import LLM
    from sparqlqa.stages.answer import Answer
    from sparqlqa.stages.execute import ExecuteOptions

NO_LLM_NOTE = "ran offline: no LLM configured (set ANTHROPIC_API_KEY or --llm)"
NO_OFFLINE_NOTE = ("ran vector search only: no LLM configured (set ANTHROPIC_API_KEY or --llm) and no offline "
                   "strategy is installed")


def resolve_llm(llm: str | LLM | None, llm_cache: str | None = None) -> LLM | None:
    """An LLM object for ``llm`` (a spec, an object, or ``None`` = from the environment), or ``None``."""
    from sparqlqa.llm import LLM, get_llm, resolve_llm_spec

    if isinstance(llm, LLM):
        return llm
    spec = resolve_llm_spec(llm)
    return get_llm(spec, cache_mode=llm_cache) if spec else None


def choose_strategy(strategy: str | None, llm: LLM | None) -> tuple[str, str | None]:
    """The strategy name to run and the note explaining an implicit choice (if any)."""
    if strategy:
        return strategy, None
    if llm is not None:
        return "4step", None
    if "offline" in strategies:
        return "offline", NO_LLM_NOTE
    return "vss", NO_OFFLINE_NOTE


def ask(kb: KnowledgeBase | str, question: str, *, strategy: str | None = None, llm: str | LLM | None = None,
        k: int = 20, rerank: str = RerankMode.LISTWISE, embedder: str | None = None,
        options: ExecuteOptions | None = None, llm_cache: str | None = None,
        settings: dict[str, Any] | None = None, exact: bool = False, topic: str = TopicMode.AUTO,
        limits: QueryLimits | None = None, lang: str | None = None) -> Answer:
    """Answer ``question`` over ``kb`` (a KB or its name).  See the module docstring for the choices.

    ``settings``: strategy-specific knobs, e.g. ``{"call_budget": 15}`` for ``fiske``.  Answers that
    satisfied the query always come before vector fill-in; ``exact=True`` returns only those.
    ``topic``: ``auto`` (the nodes the question names are left out unless the query returns only them,
    and not added as fill-in when the query found answers), ``exclude`` (always left out) or ``keep``.
    ``limits``: bound every SPARQL query of the run (one deadline for all, see :mod:`sparqlqa.query.limits`);
    without it they get :data:`~sparqlqa.query.limits.ASK_TIMEOUT_S` seconds in all and the default row and
    memory caps; an enclosing :func:`~sparqlqa.query.limits.bounded` scope's tighter limits win.
    ``lang``: the question's language (``"de"``); without it, detected (:mod:`sparqlqa.language`).  Nodes
    are named in it where the KB has a label in it; ``Answer.lang`` says which it was and how it was known.
    """
    if not question or not question.strip():
        raise ConfigError("the question is empty", hint="ask something, e.g. 'Which films did X direct?'")
    if k < 1:
        raise ConfigError(f"k must be at least 1, got {k}")
    if rerank not in values(RerankMode):
        raise ConfigError(f"unknown rerank mode {rerank!r}", hint=f"use one of: {', '.join(values(RerankMode))}")
    if topic not in values(TopicMode):
        raise ConfigError(f"unknown topic mode {topic!r}", hint=f"use one of: {', '.join(values(TopicMode))}")
    started = time.perf_counter()
    llm_obj = resolve_llm(llm, llm_cache)
    name, note = choose_strategy(strategy, llm_obj)
    chosen = strategies.get(name)()
    if chosen.needs_llm and llm_obj is None:
        raise ConfigError(f"strategy {name!r} needs an LLM and none is configured",
                          hint="pass --llm SPEC (e.g. anthropic) or set ANTHROPIC_API_KEY, "
                          "or use --strategy offline / vss")
    question = clean_text(question, kind=PROSE, field="question")  # the library is an edge too
    language = resolve_language(question, lang)
    base = open_kb(clean_text(kb, kind=NAME, field="kb")) if isinstance(kb, str) else kb
    ranker = get_embedder(embedder)
    ctx = AskContext(kb=base, question=question.strip(), llm=llm_obj, embedder=ranker, k=k,
                     rerank=RerankMode(rerank), options=options, strategy=name, settings=dict(settings or {}),
                     exact=exact, topic=TopicMode(topic),
                     reader=get_embedder(ranker.reader_spec) if ranker.reader_spec else None, language=language)
    if note:
        ctx.note(note)
    try:
        with llm_context(kb=base.name, strategy=name, question=ctx.question), \
                bounded(limits or QueryLimits(timeout_s=ASK_TIMEOUT_S, truncate=True)), \
                asked_in(language.code, names_language(base, sample=not language.english)):
            answer = chosen.run(ctx)
        _settle_pending(llm_obj, base.name, name, ctx.question, answer.pending_llm)
    finally:
        if isinstance(kb, str):
            base.close()
    answer.timings_ms["total"] = (time.perf_counter() - started) * 1000
    return answer


def _settle_pending(llm: LLM | None, kb: str, strategy: str, question: str, asked: Sequence[str]) -> None:
    """Mark this question's pending prompts that this run did not ask as stale (see ``LLMCache``)."""
    if llm is None or llm.cache is None or llm.cache_mode == "off":
        return
    llm.cache.settle_pending(kb=kb, strategy=strategy, question=question, asked=asked)
