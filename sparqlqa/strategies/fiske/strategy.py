"""The ``fiske`` strategy: explore (:mod:`~sparqlqa.strategies.fiske.explorer`), then answer.

* a route covers every clue → its answer nodes (end nodes; see :meth:`Route.answer_nodes`) are the
  candidates (``source="filtered"``, tier 0, the route's triples as evidence), ranked by vectors and
  reranked when ``rerank`` is not ``none``;
* no route covers every clue (exhausted, budget, no clue names a node) → one chain-of-thought call
  answers from the model's own knowledge: items with ``source="model-knowledge"``, no evidence, a
  note saying they are not backed by the KB; names that equal a KB label get that node's IRI, others
  an ``urn:sparqlqa:model-knowledge:`` placeholder;
* ``--llm-cache only`` met an uncached prompt → no items, the key in ``pending_llm``.

The run's record (clues, start links, routes with their coverage, stop reason, calls) is
``answer.meta.records["fiske"]`` (JSON ``meta.fiske_result``); its queries are in ``answer.queries`` (stages ``fiske``,
``fiske-names``), its LLM calls in ``answer.llm_calls``.
"""

from __future__ import annotations

__all__ = ["MODEL_KNOWLEDGE", "Fiske", "fallback"]

from typing import TYPE_CHECKING
from urllib.parse import quote

from sparqlqa.stages.answer import AnswerItem, Ranking
from sparqlqa.stages.modes import ItemSource
from sparqlqa.strategies.base import Strategy, strategies
from sparqlqa.strategies.fiske import prompts
from sparqlqa.strategies.fiske.explorer import Explorer, FiskeSettings
from sparqlqa.strategies.fiske.state import FiskeRun, ModelFallback
from sparqlqa.strategies.pipeline import AskContext, Reranked, build_answer, rank, rerank_top

if TYPE_CHECKING:
    from sparqlqa.stages.answer import Answer
    from sparqlqa.stages.execute import Candidates

#: the items' source and the run's ``answer_source`` when the answers come from the model's own knowledge
MODEL_KNOWLEDGE = ItemSource.MODEL_KNOWLEDGE
PLACEHOLDER = "urn:sparqlqa:model-knowledge:"
FALLBACK_NOTE = ("FiSKE: no route covered every clue ({why}); the answers below come from the model's own "
                 "knowledge (chain of thought), NOT from the knowledge base")
STOP_TEXT = {"exhausted": "nothing new was found", "budget": "the call budget of {budget} was spent",
             "no-clues": "no clues were extracted", "no-start": "no clue names a KB node"}


@strategies.register("fiske")
class Fiske(Strategy):
    """FiSKE: stateful clue exploration with an LLM (budget: ``$SPARQLQA_FISKE_BUDGET``, default 30)."""

    needs_llm = True

    def __init__(self, settings: FiskeSettings | None = None) -> None:
        self.settings = settings

    def run(self, ctx: AskContext) -> Answer:
        settings = self.settings or FiskeSettings.resolve(ctx.settings.get("call_budget"))
        explorer = Explorer(ctx, settings)
        with ctx.stage("fiske"):
            record = explorer.explore()
        if record.stop == "pending":
            ctx.note("FiSKE stopped: an LLM answer is not cached yet (--llm-cache only); import the pending "
                     "answers and run again")
            return _finish(ctx, record)
        if record.covering():
            record.answer_source = "kb-routes"
            candidates = _route_candidates(record)
            ranking = rank(ctx, None, candidates)
            reranked = rerank_top(ctx, ranking)
            return _finish(ctx, record, ranking, reranked, candidates=candidates)
        return _finish(ctx, record, items=fallback(ctx, explorer, record))


def _route_candidates(record: FiskeRun) -> Candidates:
    """The answer nodes of the covering routes as SPARQL-stage candidates (tier 0, route evidence)."""
    from sparqlqa.stages.execute import Candidate, Candidates, Evidence

    found: dict[str, Candidate] = {}
    for route in record.covering():
        for node, triples in route.answer_nodes():
            if node not in found:
                found[node] = Candidate(node, 0, len(route.hops), Evidence(triples))
    notes = [] if found else ["the covering routes end at nodes the question names; no other node answers"]
    return Candidates(target=None, items=list(found.values()), notes=notes)


def fallback(ctx: AskContext, explorer: Explorer, record: FiskeRun) -> list[AnswerItem]:
    """The chain-of-thought answers from the model's own knowledge, marked as such (none when it cannot ask)."""
    from sparqlqa.strategies.fiske.explorer import Stop

    why = STOP_TEXT.get(record.stop, record.stop).format(budget=record.budget)
    try:
        data = explorer.call(prompts.answer_prompt(ctx.question), prompts.ANSWER_SCHEMA, "fiske_answer",
                             reserve=False)
    except Stop as stop:
        record.stop = stop.reason if stop.reason == "pending" else record.stop
        ctx.note(f"FiSKE: no route covered every clue ({why}) and the fallback answer could not be asked "
                 f"({stop.reason})")
        return []
    names = [a.strip() for a in (data or {}).get("answers", []) if isinstance(a, str) and a.strip()]
    record.answer_source = MODEL_KNOWLEDGE
    record.fallback = ModelFallback(reasoning=(data or {}).get("reasoning", ""), answers=names)
    ctx.note(FALLBACK_NOTE.format(why=why))
    return _model_items(explorer, names)


def _model_items(explorer: Explorer, names: list[str]) -> list[AnswerItem]:
    """One item per name, best first; never filtered, never with evidence."""
    lookup = explorer.lookup()
    items = []
    for position, name in enumerate(dict.fromkeys(names)):
        matches = lookup.exact(name)
        iri = matches[0].iri if matches else PLACEHOLDER + quote(name, safe="")
        score = 1.0 - position / (len(names) + 1)
        items.append(AnswerItem(iri=iri, label=matches[0].label if matches else name, type=None, score=score,
                                tier=None, source=MODEL_KNOWLEDGE, evidence=None,
                                snippet="from the model's own knowledge, not from the knowledge base",
                                scores={"llm": score}))
    return items


def _finish(ctx: AskContext, record: FiskeRun, ranking: Ranking | None = None,
            reranked: Reranked | None = None, *, items: list[AnswerItem] | None = None,
            candidates: Candidates | None = None) -> Answer:
    """The answer, made by the one builder, with the run's record in ``meta`` (``fiske_result``,
    ``answer_source``)."""
    ctx.records["fiske"] = record
    ctx.meta["answer_source"] = record.answer_source or "none"
    return build_answer(ctx, ranking, reranked, items=items, candidates=candidates)
