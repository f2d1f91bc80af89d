"""Constant linking (between steps 1 and 2): the names in triplets → KB nodes.

Each constant goes through a :class:`~sparqlqa.kb.labels.NodeLookup` (the KB's persisted
:class:`~sparqlqa.kb.labels.LabelIndex`, or name queries on a remote endpoint), best first:
exact normalised name, fuzzy (rapidfuzz ``ratio`` ≥ 0.95), containment, and nearest label
by embedding only when nothing else matched; the stated node type is relaxed only when it
yields nothing.
"""

from __future__ import annotations

__all__ = ["LinkedConstants", "link_constants", "link_one"]

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sparqlqa.kb.labels import (
    EMBEDDING_MIN_SCORE,
    FUZZY_CUTOFF,
    TYPE_MISMATCH_PENALTY,
    NodeLookup,
    NodeMatch,
    resolve_type,
)
from sparqlqa.remote.labels import lookup_for_kb

if TYPE_CHECKING:
    from sparqlqa.embed.embedders import Embedder
    from sparqlqa.kb.knowledge_base import KnowledgeBase
    from sparqlqa.stages.triplets import Triplets

@dataclass
class LinkedConstants:
    """Each constant's candidate nodes, best first (several per constant, with scores)."""

    links: dict[str, list[NodeMatch]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    elapsed_ms: float = 0.0

    def iris(self, text: str) -> list[str]:
        return [m.iri for m in self.links.get(text, [])]

    def to_dict(self) -> dict[str, Any]:
        return {"links": {k: [m.to_dict() for m in v] for k, v in self.links.items()},
                "notes": list(self.notes), "elapsed_ms": round(self.elapsed_ms, 3)}


def _merge(found: dict[str, NodeMatch], matches: Iterable[NodeMatch], factor: float = 1.0) -> None:
    for match in matches:
        score = match.score * factor
        if match.iri not in found or found[match.iri].score < score:
            found[match.iri] = NodeMatch(match.iri, match.label, score, match.method)


def link_one(lookup: NodeLookup, text: str, type_iri: str | None, *, top: int = 5,
             embedder: Embedder | None = None) -> tuple[list[NodeMatch], list[str]]:
    """Link one constant: exact, fuzzy, containment; the stated type is relaxed only when it
    yields nothing; embeddings only when no name matched.  Returns (matches, notes)."""
    notes: list[str] = []
    found: dict[str, NodeMatch] = {}
    for restrict, factor in ((type_iri, 1.0), (None, TYPE_MISMATCH_PENALTY)):
        _merge(found, lookup.exact(text, restrict), factor)
        _merge(found, lookup.fuzzy(text, restrict, cutoff=FUZZY_CUTOFF, limit=top), factor)
        _merge(found, lookup.containing(text, restrict, limit=top), factor)
        if found or type_iri is None:
            break
        notes.append(f"{text!r}: no node of the stated type matches; searched all types")
    if not found and embedder is not None:
        for restrict, factor in ((type_iri, 1.0), (None, TYPE_MISMATCH_PENALTY)):
            near = lookup.nearest(text, embedder, restrict, limit=top)
            _merge(found, [m for m in near if m.score >= EMBEDDING_MIN_SCORE], factor)
            if found or type_iri is None:
                break
        if found:
            notes.append(f"{text!r}: no label matches; linked by embedding similarity")
    if not found:
        notes.append(f"{text!r}: no KB node matches; its triplets are dropped")
    ranked = sorted(found.values(), key=lambda m: (-m.score, m.label, m.iri))
    return ranked[:top], notes


def link_constants(triplets: Triplets, kb: KnowledgeBase, *, embedder: Embedder | None = None, top: int = 5,
                   lookup: NodeLookup | None = None) -> LinkedConstants:
    """Link every constant of ``triplets`` to up to ``top`` KB nodes (key: the constant's text).

    ``embedder`` None → the default embedder (``$SPARQLQA_EMBEDDER``), used only for
    constants no label matches.  ``lookup`` defaults to the KB's :class:`LabelIndex`.
    """
    start = time.perf_counter()
    lookup = lookup or lookup_for_kb(kb)
    linked = LinkedConstants()
    for text, type_name in _constants(triplets):
        type_iri = resolve_type(kb.schema, type_name)
        if type_name and type_iri is None and len(kb.schema.types) > 1:  # one-type KBs: the prompt lists no types
            linked.notes.append(f"{text!r}: unknown node type {type_name!r}; searched all types")
        if embedder is None:
            from sparqlqa.embed.embedders import get_embedder

            embedder = get_embedder()
        matches, notes = link_one(lookup, text, type_iri, top=top, embedder=embedder)
        linked.links[text] = matches
        linked.notes.extend(notes)
    linked.elapsed_ms = (time.perf_counter() - start) * 1000
    return linked


def _constants(triplets: Triplets) -> list[tuple[str, str | None]]:
    """Distinct constant texts in order of appearance, each with the first type stated for it."""
    seen: dict[str, str | None] = {}
    for triplet in triplets.triplets:
        for term in (triplet.head, triplet.tail):
            if term.kind == "constant" and term.text.strip() and seen.get(term.text) is None:
                seen[term.text] = term.type
    for text in triplets.form.choices:  # the nodes a comparison names
        if text.strip():
            seen.setdefault(text, triplets.target_type)
    return list(seen.items())
