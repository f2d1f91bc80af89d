"""The stage steps strategies are made of: :class:`AskContext` and one helper per stage.

A strategy (:mod:`sparqlqa.strategies.base`) runs these in order; :func:`sparqlqa.strategies.ask.ask`
chooses the strategy.  Every degradation (unusable triplets, no candidates, a failed
rerank) becomes a note in :attr:`Answer.notes`, never an exception.
"""

from __future__ import annotations

__all__ = ["WAITING_NOTE", "AskContext", "Reranked", "build_answer", "find_with_alternatives", "note_topic", "rank",
           "rerank_top", "run_table_query", "run_triplets", "settle", "table_rows_ranking", "usable", "vss_answer",
           "waiting_answer"]

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypedDict

from sparqlqa.embed.embedders import Embedder
from sparqlqa.errors import LLMParseError, NotInCache, QueryError, SparqlqaError
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.naming import display_name
from sparqlqa.kb.node_text import fetch_labels, node_texts
from sparqlqa.kb.records import QueryRecord
from sparqlqa.kb.terms import is_node_key, is_value_key, node_keys, value_datatype
from sparqlqa.language import Language, in_kb_language
from sparqlqa.llm.context import llm_context
from sparqlqa.stages.answer import Answer, AnswerItem, AnswerMeta, Ranking, StageRecord, answer_table
from sparqlqa.stages.modes import ItemSource, RerankMode, TopicMode
from sparqlqa.stages.ordering import FormShape, RerankOrder, order_answer
from sparqlqa.stages.ranking import rank_candidates, unbuilt_note, vector_search
from sparqlqa.stages.rerank import rerank
from sparqlqa.stages.table import Table

if TYPE_CHECKING:
    from sparqlqa.llm import LLM, LLMCall
    from sparqlqa.query.built_query import BuiltQuery
    from sparqlqa.stages.execute import Candidates, ExecuteOptions
    from sparqlqa.stages.linking import LinkedConstants
    from sparqlqa.stages.triplets import Triplets

#: the note of an answer stopped by a triplet prompt missing the cache in ``--llm-cache only`` mode
WAITING_NOTE = ("waiting for recorded LLM answers (--llm-cache only): the triplet prompt is pending; "
                "'sparqlqa llm export-pending FILE', answer it, 'sparqlqa llm import FILE', then ask again")
#: how many nodes the ``vss`` strategies return at least (deep enough for MRR/recall@100)
VSS_DEPTH = 100
SNIPPET_CHARS = 300
#: relation values listed per relation in the texts the reranker reads (cut by characters, not by count)
RERANK_MAX_VALUES = 40


@dataclass
class AskContext:
    """Everything a strategy needs for one question, and where stages record what they did."""

    kb: KnowledgeBase
    question: str
    llm: LLM | None
    embedder: Embedder
    k: int = 20
    rerank: RerankMode = RerankMode.LISTWISE
    options: ExecuteOptions | None = None
    strategy: str = ""
    notes: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    llm_calls: list[LLMCall] = field(default_factory=list)
    queries: list[QueryRecord] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    #: each stage's own record, the typed object (a ``RerankResult``, FiSKE's run): ``Answer.meta.records``
    records: dict[str, StageRecord] = field(default_factory=dict)
    #: the strategy's own entries for ``Answer.meta.extra`` (``offline``, FiSKE's ``answer_source``)
    meta: dict[str, object] = field(default_factory=dict)
    #: strategy-specific settings (``fiske``: ``call_budget``)
    settings: dict[str, Any] = field(default_factory=dict)
    #: only answers that satisfied the query (no vector or model fill-in)
    exact: bool = False
    #: what happens to the question's own nodes among the answers (:class:`~sparqlqa.stages.modes.TopicMode`)
    topic: TopicMode = TopicMode.AUTO
    #: the nodes the question names (its linked constants), once stage 2 linked them
    topic_iris: set[str] = field(default_factory=set)
    #: reads the question's words against relation names and labels (triplets, offline paths, linking);
    #: ``None``: :attr:`embedder`, which embeds node texts and ranks (``Embedder.reader_spec``)
    reader: Embedder | None = None
    #: the question's language (detected, or given by the asker: ``ask(lang=)``); ``None``: not resolved
    language: Language | None = None
    #: the language tag of each shown label that has one (``Answer.labels_lang``)
    label_languages: dict[str, str] = field(default_factory=dict)

    @property
    def word_embedder(self) -> Embedder:
        return self.reader or self.embedder

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time a stage (times of a repeated stage add up)."""
        started = time.perf_counter()
        try:
            yield
        finally:
            elapsed = (time.perf_counter() - started) * 1000
            self.timings_ms[name] = self.timings_ms.get(name, 0.0) + elapsed

    def sink(self, stage: str) -> Callable[[QueryRecord], None]:
        """A recorder for helper queries of ``stage``."""
        return lambda record: self.queries.append(record.at(stage))

    def note(self, text: str) -> None:
        if text and text not in self.notes:
            self.notes.append(text)


# --- stage 1-2: triplets, linking, SPARQL ----------------------------------------------------------


def run_triplets(ctx: AskContext, make: Callable[[AskContext], Triplets]) -> Triplets | None:
    """Stage 1 with degradation: unparseable or uncached LLM output → ``None`` and a note.

    An uncached prompt (``--llm-cache only``) is recorded in ``ctx.pending``: the
    strategy then stops with :func:`waiting_answer` instead of asking later prompts
    that would be built on a fallback and go stale once the triplets are answered.
    """
    with ctx.stage("triplets"), llm_context(stage="triplets"):
        try:
            triplets = make(ctx)
        except NotInCache as exc:
            ctx.pending.append(exc.key)
            ctx.note(WAITING_NOTE)
            return None
        except LLMParseError as exc:
            ctx.note(f"the LLM's triplets could not be parsed ({exc}); ranked by vectors only")
            return None
    ctx.llm_calls.extend(triplets.llm_calls)
    for note in triplets.notes:
        ctx.note(note)
    return triplets


def usable(triplets: Triplets | None) -> str | None:
    """Why ``triplets`` cannot narrow candidates (``None`` when they can)."""
    if triplets is None:
        return "no triplets"
    if not triplets.triplets:
        return "the triplets are empty"
    if not triplets.target:
        return "the triplets name no target variable"
    return None


def find(ctx: AskContext, triplets: Triplets) -> tuple[LinkedConstants | None, Candidates | None]:
    """Stage 2: link the constants and run the compiled SPARQL (errors become notes)."""
    from sparqlqa.stages.execute import ExecuteOptions, drop_constant_nodes, find_candidates
    from sparqlqa.stages.linking import link_constants

    try:
        with ctx.stage("linking"):
            linked = link_constants(triplets, ctx.kb, embedder=ctx.word_embedder)
        for note in linked.notes:
            ctx.note(note)
        with ctx.stage("sparql"):
            candidates = find_candidates(triplets, linked, ctx.kb, ctx.options or ExecuteOptions())
            note_topic(ctx, linked)
            if ctx.topic != TopicMode.KEEP:
                drop_constant_nodes(candidates, linked)
    except SparqlqaError as exc:
        ctx.note(f"finding candidates failed ({exc}); ranked by vectors only")
        return None, None
    ctx.queries.extend(q.at("sparql") for q in candidates.queries)
    for note in candidates.notes:
        ctx.note(note)
    return linked, candidates


def find_with_alternatives(ctx: AskContext, triplets: Triplets,
                           ) -> tuple[LinkedConstants | None, Candidates | None, int]:
    """:func:`find` on the triplets, then on each alternative until one yields candidates."""
    tiers = [triplets, *triplets.alternatives]
    linked: LinkedConstants | None = None
    candidates: Candidates | None = None
    for number, option in enumerate(tiers):
        if usable(option) is not None:
            continue
        linked, candidates = find(ctx, option)
        if candidates is not None and candidates.items:
            if number:
                ctx.note(f"the first triplets found no candidates; alternative {number} did")
            return linked, candidates, number
    return linked, candidates, 0


def note_topic(ctx: AskContext, linked: LinkedConstants | None) -> None:
    """Remember the nodes the question names (its topic entities) for :func:`rank` and :func:`settle`."""
    for matches in linked.links.values() if linked is not None else ():
        ctx.topic_iris.update(match.iri for match in matches)


def target_type(ctx: AskContext, triplets: Triplets | None) -> str | None:
    """The IRI of the target variable's type when the triplets give one the schema knows."""
    if triplets is None or not triplets.target:
        return None
    return triplets.target_type_iri(ctx.kb.schema)


# --- stage 3-4: vectors and rerank --------------------------------------------------------------


def rank(ctx: AskContext, triplets: Triplets | None, candidates: Candidates | None) -> Ranking:
    """Stage 3: vector ranking of the candidates, topped up to ``k``."""
    with ctx.stage("vector"):
        ranking = rank_candidates(ctx.kb, ctx.question, candidates, k=ctx.k, embedder=ctx.embedder,
                                  requirements=triplets.requirements if triplets else (),
                                  target_type=target_type(ctx, triplets),
                                  exclude=ctx.topic_iris if _excluding(ctx, candidates) else ())
    unbuilt = unbuilt_note(ctx.kb, ctx.embedder)
    if unbuilt in ranking.notes and not ctx.exact:  # the user is told why there is no fill-in
        ctx.note(unbuilt)
    return ranking


def _excluding(ctx: AskContext, candidates: Candidates | None) -> bool:
    """Whether the question's own nodes stay out of the fill-in (:class:`~sparqlqa.stages.modes.TopicMode`)."""
    found = candidates is not None and bool(candidates.items)
    return ctx.topic == TopicMode.EXCLUDE or (ctx.topic == TopicMode.AUTO and found)


@dataclass(frozen=True)
class Reranked:
    """Stage 4's result as the answer builder takes it: the node texts it read (the items' snippets) and the
    rerank's order of the ranking's top (``None``: no rerank applied; :func:`~sparqlqa.stages.ordering.order_answer`
    applies it)."""

    texts: Mapping[str, str] = field(default_factory=dict)
    order: RerankOrder | None = None


def rerank_top(ctx: AskContext, ranking: Ranking, *, enabled: bool = True) -> Reranked:
    """Stage 4: rerank the top ``k`` (scores on the items, in place; the order in the result)."""
    top = ranking.items[: ctx.k]
    runs = enabled and ctx.rerank != RerankMode.NONE and ctx.llm is not None and len(top) >= 2
    with ctx.stage("texts"), in_kb_language() if runs else nullcontext():  # cross-lingual rerank (issue 37)
        texts = node_texts(ctx.kb, [n.iri for n in top], mode="full", sink=ctx.sink("texts"),
                           **({"max_values": RERANK_MAX_VALUES} if runs else {}))
    if not runs or ctx.llm is None:
        return Reranked(texts)
    with in_kb_language():
        marks = _rerank_marks(ctx, top)
    with ctx.stage("rerank"), llm_context(stage="rerank"):
        result = rerank(ctx.question, [texts[n.iri] for n in top], ctx.llm, mode=ctx.rerank, **marks)
    ctx.records["rerank"] = result
    ctx.llm_calls.extend(result.llm_calls)
    ctx.pending.extend(result.pending)
    for note in result.notes:
        ctx.note(note)
    if result.applied:
        for position, index in enumerate(result.order):
            _rescore(top, index, position, result.scores, ctx.rerank, result.reasons.get(index))
    return Reranked(texts, RerankOrder.of(result))


class RerankMarks(TypedDict, total=False):
    """What the reranker is told of the nodes beyond their texts (the ``rerank`` keywords)."""

    matched: list[bool]
    evidence: list[list[str]]


def _rerank_marks(ctx: AskContext, top: Sequence[AnswerItem]) -> RerankMarks:
    """``matched`` and ``evidence`` (label paths) of the nodes to rerank, when some matched the query."""
    if not any(n.matched for n in top):
        return {}
    triples = [n.evidence_triples() if n.matched else [] for n in top]
    keys = list(dict.fromkeys(str(part) for rows in triples for triple in rows for part in triple))
    labels = fetch_labels(ctx.kb, node_keys(keys), sink=ctx.sink("labels"))[0] if keys else {}

    def name(key: object) -> str:
        return labels.get(str(key)) or display_name(str(key))

    paths = [[f"{name(s)} —{name(p)}→ {name(o)}" for s, p, o in rows] for rows in triples]
    return {"matched": [n.matched for n in top], "evidence": paths}


def _rescore(top: Sequence[AnswerItem], index: int, position: int, scores: dict[int, float],
             mode: str, reason: str | None = None) -> None:
    """The rerank's score on the node itself (``scores[mode]``; the vector score stays in ``scores["vss"]``)."""
    node = top[index]
    score = node.score
    if mode == RerankMode.POINTWISE and index in scores:
        score = scores[index]
    elif mode == RerankMode.LISTWISE:
        score = 1.0 + (len(top) - position) / len(top)
    node.rescore(mode, score, reason if mode == RerankMode.LISTWISE and not node.matched else None)


# --- the answer -----------------------------------------------------------------------------------


def build_answer(ctx: AskContext, ranking: Ranking | None = None, reranked: Reranked | None = None, *,
                 items: list[AnswerItem] | None = None, triplets: Triplets | None = None,
                 linked: LinkedConstants | None = None, candidates: Candidates | None = None,
                 table: Table | None = None) -> Answer:
    """The one place an :class:`Answer` is made, for every strategy.

    The items are ``ranking.items`` (or ``items``: FiSKE's model-knowledge answers), the scored nodes
    themselves, ordered once by :func:`~sparqlqa.stages.ordering.order_answer` from the stages' results
    (the similarity ranking, ``reranked.order``, the form's :class:`~sparqlqa.stages.ordering.FormShape` of
    ``candidates``); each one not yet labelled gets its label, type and snippet here (labels, types and
    evidence labels in one lookup).  Then the last word on which items stay (:func:`settle`).
    ``ctx.records`` become ``meta.records`` (JSON ``<stage>_result``), ``ctx.meta`` the strategy's own
    ``meta.extra``.  ``table``: the query's own table (several columns, aggregates; its rows as the query
    returned them), its node cells named in the same lookup; without one the answer's table is its items,
    count or yes/no (:func:`answer_table`).
    """
    ranking = ranking if ranking is not None else Ranking(query_text=ctx.question, items=[])
    reranked = reranked or Reranked()
    shape = FormShape.of(candidates, triplets, linked)
    ordered = order_answer(ranking.items if items is None else items, rerank=reranked.order, shape=shape)
    ranked = replace(ranking, items=list(ordered.ranked)) if items is None else ranking  # the JSON's meta.ranking
    with ctx.stage("answer"):
        labels = _describe(ctx, ordered.ranked, reranked.texts, table.node_keys() if table is not None else [])
        _provenance(ctx.kb, ordered.ranked)
    answer = Answer(question=ctx.question, kb=ctx.kb.name, strategy=ctx.strategy, items=list(ordered.items),
                    triplets=triplets, linked=linked, candidates=candidates, llm_calls=list(ctx.llm_calls),
                    queries=list(ctx.queries), notes=list(ctx.notes), timings_ms=dict(ctx.timings_ms),
                    labels=labels, meta=_meta(ctx, ranked), pending_llm=list(ctx.pending), lang=ctx.language,
                    labels_lang={key: tag for key, tag in ctx.label_languages.items() if key in labels})
    if shape is not None:
        answer.form, answer.value = shape.form, shape.value
    answer = settle(ctx, answer)
    answer.table = table.named(labels) if table is not None else answer_table(answer)
    return answer


def run_table_query(ctx: AskContext, query: BuiltQuery, columns: Sequence[str], *, aggregates: Iterable[str],
                    ordered: bool, failure: str) -> Table | None:
    """Run a table query sparqlqa built (stage ``sparql``, recorded) and read its rows as a :class:`Table`;
    ``None`` with the note ``failure`` (``{why}``: the reason) when it cannot run."""
    try:
        with ctx.stage("sparql"):
            result = ctx.kb.query(query)
    except QueryError as exc:
        ctx.note(failure.format(why=exc.message))
        return None
    ctx.queries.append(result.history().at("sparql"))
    return Table.from_result(result, columns, aggregates=aggregates, ordered=ordered)


def table_rows_ranking(ctx: AskContext, table: Table, *, form: str, value: int | bool | str | None,
                       ordered: bool, target: str | None = None) -> tuple[Ranking, Candidates]:
    """A query's table as stage 2 and 3 hand it on: its first column's distinct cells as matched items in row
    order (scored by rank), and the :class:`Candidates` carrying the form, value and order (the table
    answers of the offline table reader and of 4step's analytical form)."""
    from sparqlqa.stages.execute import Candidate, Candidates, Evidence

    keys = list(dict.fromkeys(row[0] for row in table.rows if row and row[0] is not None))
    items = [AnswerItem.ranked(key, 1.0 - n / (len(keys) + 1), ItemSource.FILTERED, tier=0)
             for n, key in enumerate(keys)]
    candidates = Candidates(target=target, items=[Candidate(key, 0, 1, Evidence()) for key in keys],
                            target_is_value=any(is_value_key(k) for k in keys), form=form, value=value,
                            ordered=ordered)
    return Ranking(query_text=ctx.question, items=items), candidates


def waiting_answer(ctx: AskContext) -> Answer:
    """The answer of a question stopped before ranking: no items, the pending prompts listed."""
    ctx.note(WAITING_NOTE)
    return build_answer(ctx)


def _describe(ctx: AskContext, items: Sequence[AnswerItem], texts: Mapping[str, str],
              cells: Sequence[str] = ()) -> dict[str, str]:
    """Label, type and snippet on each unlabelled item, in place; returns the labels of every IRI they name
    (and of ``cells``, a table's node cells)."""
    fresh = [item for item in items if not item.label]
    mentioned = [item.iri for item in fresh] + list(cells)
    for item in fresh:
        mentioned.extend(str(part) for triple in item.evidence_triples() for part in triple)
    keys = list(dict.fromkeys(mentioned))
    labels, types = fetch_labels(ctx.kb, node_keys(keys), sink=ctx.sink("labels"), languages=ctx.label_languages)
    labels.update(_remote_labels(ctx.kb, [key for key in node_keys(keys) if key not in labels]))
    labels.update({key: display_name(key) for key in keys if not is_node_key(key)})
    for item in fresh:
        kinds = types.get(item.iri, [])
        item.type = value_datatype(item.iri) if is_value_key(item.iri) else kinds[0] if kinds else None
        item.type_label = ctx.kb.schema.type_label(item.type) if item.type else None
        item.label = labels.get(item.iri) or display_name(item.iri)
        snippet = texts.get(item.iri, "")
        item.snippet = snippet[: SNIPPET_CHARS - 1].rstrip() + "…" if len(snippet) > SNIPPET_CHARS else snippet
    return labels


def _remote_labels(kb: KnowledgeBase, iris: list[str]) -> dict[str, str]:
    """In a KB group with a remote member, the labels the endpoint gives nodes the local members do not name."""
    if not iris or not kb.remote_members():
        return {}
    from sparqlqa.remote.labels import GroupLookup, lookup_for_kb

    lookup = lookup_for_kb(kb)
    return lookup.remote_labels(iris) if isinstance(lookup, GroupLookup) else {}


#: the matched items of a KB group's answer whose evidence triples get their member KBs
PROVENANCE_ITEMS = 20


def _provenance(kb: KnowledgeBase, items: Sequence[AnswerItem]) -> None:
    """In a KB group, which member states each evidence triple of the first matched items (in place)."""
    shown = [item for item in items if item.matched and item.evidence_triples()][:PROVENANCE_ITEMS]
    triples = [triple for item in shown for triple in item.evidence_triples()]
    stated = kb.provenance(triples) if triples else None
    if stated is None:
        return
    found = dict(zip(triples, stated))
    for item in shown:
        item.evidence_kbs = [found.get(triple, []) for triple in item.evidence_triples()]


def _meta(ctx: AskContext, ranking: Ranking) -> AnswerMeta:
    return AnswerMeta(strategy=ctx.strategy, k=ctx.k, rerank=ctx.rerank,
                      llm=ctx.llm.spec if ctx.llm is not None else None, embedder=ctx.embedder.model_id,
                      reader=ctx.reader.model_id if ctx.reader is not None else None, ranking=ranking,
                      records=dict(ctx.records), extra=dict(ctx.meta))


def settle(ctx: AskContext, answer: Answer) -> Answer:
    """The last word on which of an answer's items stay, whatever the strategy (:func:`build_answer` calls it,
    on items in their final order): the question's topic entities out (per ``ctx.topic``), and with
    ``ctx.exact`` only the answers that satisfied the query."""
    items = list(answer.items)
    named = ctx.topic_iris
    if ctx.topic == TopicMode.EXCLUDE:
        items = [i for i in items if i.iri not in named]
    elif ctx.topic == TopicMode.AUTO and any(i.matched for i in items):  # the query answered: not as fill-in
        items = [i for i in items if i.iri not in named or i.matched]
    if len(items) < len(answer.items):
        answer.notes.append(f"left out {len(answer.items) - len(items)} node(s) the question names "
                            f"(--topic {ctx.topic})")
    if ctx.exact:
        kept = [i for i in items if i.matched]
        if len(kept) < len(items):
            answer.notes.append(f"--exact: left out {len(items) - len(kept)} fill-in answer(s) that did not "
                                "satisfy the query")
        if not kept:
            answer.notes.append("--exact: no answer satisfied the query")
        items = kept
    answer.items = items
    answer.meta.exact, answer.meta.topic = ctx.exact, ctx.topic
    return answer


def vss_answer(ctx: AskContext, *, rerank_enabled: bool) -> Answer:
    """Vector search over all nodes, optionally reranked (the ``vss`` / ``vss+rerank`` strategies)."""
    with ctx.stage("vector"):
        ranking = vector_search(ctx.kb, ctx.question, k=max(ctx.k, VSS_DEPTH), embedder=ctx.embedder)
    return build_answer(ctx, ranking, rerank_top(ctx, ranking, enabled=rerank_enabled))
