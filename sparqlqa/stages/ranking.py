"""Stage 3: order the SPARQL-filtered candidates by cosine similarity to the question.

Each ranked node is an :class:`~sparqlqa.stages.answer.AnswerItem` (made by :meth:`AnswerItem.ranked`):
the one scored type, which the rerank rescores in place and the answer builder describes.

The query text is the question plus the free-text requirements.  Filtered
candidates are sorted by (tier, -similarity, IRI): stricter tiers first, then
the most similar, ties broken by IRI so runs are reproducible.  When fewer
than ``k`` survive, the list is topped up from the global vector ranking of
the target type; those additions (``source="vector"``) always come after
every filtered candidate, and never include the ``exclude`` nodes (the question's own
topic entities, which it does not ask for).

The ranking never waits for a whole-KB embedding: a KB whose node index is not built yet
(:func:`~sparqlqa.vectors.index.built_index`) has its filtered candidates embedded now (the same
texts and vectors the index would hold, so the same order) and no top-up, with a note
(:func:`unbuilt_note`) saying how to build the index.
"""

from __future__ import annotations

__all__ = ["RankedNode", "query_text", "rank_candidates", "unbuilt_note", "vector_search"]

import time
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from sparqlqa.embed.embedders import Embedder
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.node_text import node_texts
from sparqlqa.stages.answer import AnswerItem, Ranking
from sparqlqa.stages.modes import ItemSource
from sparqlqa.vectors.index import NodeIndex, built_index, embed_query, index_supported, load_index

if TYPE_CHECKING:
    from sparqlqa.stages.execute import Candidates


#: the name the scored node had before it was one type with the answer's items: ``RankedNode(iri, score,
#: source, tier, evidence)`` still makes one (an :class:`~sparqlqa.stages.answer.AnswerItem`)
RankedNode = AnswerItem.ranked


def query_text(question: str, requirements: Sequence[str] = ()) -> str:
    """The text embedded for ranking: the question, then each requirement.

    >>> query_text("movies by Ridley Scott", ["set in space"])
    'movies by Ridley Scott. set in space'
    """
    extra = [r.strip() for r in requirements if r and r.strip() and r.strip() not in question]
    return ". ".join([question.strip(), *extra])


def _filtered_scores(kb: KnowledgeBase, embedder: Embedder, index: NodeIndex | None, vector: Any,
                     iris: list[str]) -> dict[str, float]:
    scores = index.similarities(vector, iris) if index is not None else {}
    missing = [iri for iri in iris if iri not in scores]
    if missing:  # nodes the index does not hold (e.g. added after it was built): embed them now
        texts = node_texts(kb, missing, mode="index")
        vectors = embedder.embed([texts[i] for i in missing])
        scores.update({iri: float(v @ vector) for iri, v in zip(missing, vectors)})
    return scores


def rank_candidates(kb: KnowledgeBase, question: str, candidates: Candidates | None, *, k: int = 20,
                    embedder: Embedder, requirements: Sequence[str] = (),
                    target_type: str | None = None, index: NodeIndex | None = None,
                    exclude: Collection[str] = ()) -> Ranking:
    """Sort ``candidates`` by similarity and top up to ``k`` from the global ranking (not with ``exclude``)."""
    started = time.perf_counter()
    if index is None:
        index = built_index(kb, embedder)
    text = query_text(question, requirements)
    vector = embed_query(embedder, text)
    items = list(candidates.items) if candidates is not None else []
    iris = list(dict.fromkeys(c.iri for c in items))
    scores = _filtered_scores(kb, embedder, index, vector, iris) if iris else {}
    best: dict[str, AnswerItem] = {}
    for cand in items:
        node = AnswerItem.ranked(cand.iri, scores.get(cand.iri, 0.0), ItemSource.FILTERED, cand.tier, cand.evidence)
        held = best.get(cand.iri)
        if held is None or (node.tier or 0) < (held.tier or 0):
            best[cand.iri] = node
    ranked = sorted(best.values(), key=lambda n: (n.tier or 0, -n.score, n.iri))
    ranking = Ranking(text, ranked, target_type, filtered=len(ranked))
    if ranked and candidates is not None and candidates.target_is_value:
        ranking.notes.append("the answer is a value (a literal): no top-up from the node ranking")
    elif len(ranked) < k and index is not None:
        _top_up(ranking, index, vector, k, exclude)
    elif len(ranked) < k and not index_supported(kb):
        ranking.notes.append("remote KB: no node index, so no top-up from the global vector ranking")
    elif len(ranked) < k:
        ranking.notes.append(unbuilt_note(kb, embedder))
    ranking.elapsed_ms = (time.perf_counter() - started) * 1000
    return ranking


def unbuilt_note(kb: KnowledgeBase, embedder: Embedder) -> str:
    """What stage 3 says of a KB whose node index is not built yet (no fill-in from the vector ranking)."""
    nodes = kb.manifest.counts.get("nodes", 0) if kb.directory is not None else 0
    size = f" ({nodes:,} nodes, once per KB and embedder)" if nodes else " (once per KB and embedder)"
    return (f"the node index of {kb.name} ({embedder.model_id}) is not built yet, so no 'similar, not matched' "
            f"fill-in from the vector ranking: 'sparqlqa index {kb.name}' builds it{size}")


def _top_up(ranking: Ranking, index: NodeIndex, vector: Any, k: int, exclude: Collection[str] = ()) -> None:
    """Append the best global matches (of the target type when known, not ``exclude``) until there are ``k``."""
    have = {n.iri for n in ranking.items}
    if ranking.target_type is None and have:
        ranking.target_type = index.dominant_type(have)
    kind = ranking.target_type
    if kind is not None and kind not in index.type_rows:
        ranking.notes.append(f"no indexed node has the target type <{kind}>: topping up from all nodes")
        kind = None
    extra = index.search(vector, k - len(ranking.items), type_iri=kind, exclude=have | set(exclude))
    ranking.items.extend(AnswerItem.ranked(iri, score, ItemSource.VECTOR) for iri, score in extra)
    ranking.added = len(extra)


def vector_search(kb: KnowledgeBase, question: str, *, k: int, embedder: Embedder,
                  target_type: str | None = None) -> Ranking:
    """The global vector ranking alone (the ``vss`` strategy, STaRK's baseline)."""
    started = time.perf_counter()
    index = load_index(kb, embedder)
    vector = embed_query(embedder, question)
    kind = target_type if target_type in index.type_rows else None
    found = index.search(vector, k, type_iri=kind)
    items = [AnswerItem.ranked(iri, s, ItemSource.VECTOR) for iri, s in found]
    ranking = Ranking(question, items, kind, added=len(found))
    ranking.elapsed_ms = (time.perf_counter() - started) * 1000
    return ranking
