"""Strategies: how a question becomes an :class:`~sparqlqa.stages.answer.Answer`, by name.

Each strategy implements one method, :meth:`Strategy.run`.  Built-ins:

``4step``       LLM triplets → link constants → SPARQL → vector ranking → LLM rerank
``vss``         vector search over all nodes only (STaRK's baseline)
``vss+rerank``  vector search, then LLM rerank of the top k
``offline``     registered by :mod:`sparqlqa.strategies.offline`: 4step with its own triplet step, no rerank
``fiske``       registered by :mod:`sparqlqa.strategies.fiske.strategy`: LLM clues → stateful route exploration

A variant of 4step only swaps the triplet step, e.g.::

    @strategies.register("offline")
    class Offline(FourStep):
        needs_llm = False
        rerank_enabled = False

        def make_triplets(self, ctx: AskContext) -> Triplets:
            return my_triplets(ctx.question, ctx.kb)

>>> sorted({"4step", "vss", "vss+rerank"} & set(strategies.names()))
['4step', 'vss', 'vss+rerank']
"""

from __future__ import annotations

__all__ = ["FourStep", "Strategy", "StrategyRegistry", "VectorSearch", "VectorSearchRerank", "strategies"]

import importlib
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

from sparqlqa.registry import Registry
from sparqlqa.strategies.pipeline import (
    AskContext,
    build_answer,
    find_with_alternatives,
    rank,
    rerank_top,
    run_triplets,
    usable,
    vss_answer,
    waiting_answer,
)

if TYPE_CHECKING:
    from sparqlqa.stages.answer import Answer
    from sparqlqa.stages.execute import Candidates
    from sparqlqa.stages.linking import LinkedConstants
    from sparqlqa.stages.triplets import Triplets

#: modules that register strategies when present (imported on first lookup, missing ones skipped)
OPTIONAL_MODULES: tuple[str, ...] = (
    "sparqlqa.strategies.offline", "sparqlqa.strategies.offline.strategy", "sparqlqa.strategies.fiske.strategy",
    "sparqlqa.strategies.text2sparql.strategy")
#: the optional strategies by name: getting one imports its module alone, not every strategy's (issue 36:
#: a cold offline ``ask`` spent 0.05 s importing FiSKE and text2sparql)
OPTIONAL_STRATEGIES: dict[str, str] = {
    "offline": "sparqlqa.strategies.offline.strategy", "fiske": "sparqlqa.strategies.fiske.strategy",
    "text2sparql": "sparqlqa.strategies.text2sparql.strategy"}


class Strategy(ABC):
    """One way of answering.  ``needs_llm``: :func:`~sparqlqa.ask` refuses to run it without an LLM;
    ``needs_index``: its answers come from the node vector index alone (built first, with progress, by the
    CLI); the others rank SPARQL candidates and never wait for a whole-KB embedding."""

    #: the name the strategy is registered under in :data:`strategies` (the registry sets it)
    name: ClassVar[str] = ""
    needs_llm: ClassVar[bool] = False
    needs_index: ClassVar[bool] = False

    @abstractmethod
    def run(self, ctx: AskContext) -> Answer:
        """Answer ``ctx.question`` over ``ctx.kb``; record notes, queries and LLM calls in ``ctx``."""


class StrategyRegistry(Registry[type[Strategy]]):
    """The strategy registry; optional built-in modules that are not installed are skipped."""

    def get(self, name: str) -> type[Strategy]:
        self._import_optional(name)
        return super().get(name)

    def __contains__(self, name: object) -> bool:
        if isinstance(name, str):
            self._import_optional(name)
        return super().__contains__(name)

    def _import_optional(self, name: str) -> None:
        """Import the module of an optional strategy ``name`` (once); forget the name when it is not installed."""
        module = self._lazy.get(name)
        if module is None or name in self._entries:
            return
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name is None or not module.startswith(exc.name):
                raise
            del self._lazy[name]

    def _load_builtins(self) -> None:
        first = not self._loaded
        super()._load_builtins()
        if not first:
            return
        for module in OPTIONAL_MODULES:
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as exc:
                if exc.name is None or not module.startswith(exc.name):
                    raise
                self._lazy = {name: path for name, path in self._lazy.items() if path != module}


strategies = StrategyRegistry("strategy", ("sparqlqa.strategies.base",), lazy=OPTIONAL_STRATEGIES,
                              name_attribute="name")


@strategies.register("4step")
class FourStep(Strategy):
    """4StepFocus.  Subclasses swap the triplet step by overriding :meth:`make_triplets`."""

    needs_llm = True
    #: whether stage 4 (LLM rerank) runs; it also needs an LLM and ``rerank != "none"``
    rerank_enabled: ClassVar[bool] = True

    def make_triplets(self, ctx: AskContext) -> Triplets:
        """Stage 1: the question as triplet patterns (here: from the LLM)."""
        from sparqlqa.stages.triplets import generate_triplets

        if ctx.llm is None:  # guarded by ask(); kept for direct callers
            from sparqlqa.errors import ConfigError

            raise ConfigError("the 4step triplet step needs an LLM")
        return generate_triplets(ctx.question, ctx.kb, ctx.llm, embedder=ctx.word_embedder)

    def run(self, ctx: AskContext) -> Answer:
        triplets = run_triplets(ctx, self.make_triplets)
        if triplets is None and ctx.pending:  # the triplet prompt waits for an answer: ask nothing more
            return waiting_answer(ctx)
        if triplets is not None:  # columns, aggregates, groups, a negated pattern: one analytical query
            from sparqlqa.strategies.analytic import analytic_answer

            answer = analytic_answer(ctx, triplets, rerank=self.rerank_enabled)
            if answer is not None:
                return answer
        linked, candidates = self.narrow(ctx, triplets)
        ranking = rank(ctx, triplets, candidates)
        reranked = rerank_top(ctx, ranking, enabled=self.rerank_enabled)
        return build_answer(ctx, ranking, reranked, triplets=triplets, linked=linked, candidates=candidates)

    def narrow(self, ctx: AskContext, triplets: Triplets | None,
               ) -> tuple[LinkedConstants | None, Candidates | None]:
        """Stage 2: candidates from SPARQL, or ``(None, None)`` with a note when that is impossible."""
        if triplets is None:
            return None, None
        tiers = [triplets, *triplets.alternatives]
        if all(usable(t) is not None for t in tiers):
            ctx.note(f"{usable(triplets)}: ranked by vectors only")
            return None, None
        linked, candidates, _used = find_with_alternatives(ctx, triplets)
        if candidates is not None and not candidates.items:
            ctx.note("the SPARQL step found no candidates: ranked by vectors only")
        return linked, candidates


@strategies.register("vss")
class VectorSearch(Strategy):
    """Vector search only: the nodes whose text is closest to the question."""

    needs_index = True

    def run(self, ctx: AskContext) -> Answer:
        return vss_answer(ctx, rerank_enabled=False)


@strategies.register("vss+rerank")
class VectorSearchRerank(Strategy):
    """Vector search, then the LLM reranks the top ``k``."""

    needs_index = True
    needs_llm = True

    def run(self, ctx: AskContext) -> Answer:
        return vss_answer(ctx, rerank_enabled=True)
