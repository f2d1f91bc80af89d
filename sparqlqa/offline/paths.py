"""Relation paths from a linked node: bounded enumeration on the KB, verbalisation, scoring.

A :class:`RelationPath` is a sequence of 1-3 :class:`Hop` s (a relation and a
direction) that exists in the KB from a start node.  Paths are enumerated level
by level with one aggregate SPARQL query per level over a bounded sample of the
nodes reached so far, so a hub (a genre with thousands of movies) never makes
the store enumerate millions of walks.

Paths are *verbalised* from the ontology alone: a relation's ``rdfs:label``
(else its local name split into words), its ``skos:altLabel`` s and its
``rdfs:comment``; a hop walked backwards reads "<label> of".  Scores are cosine
similarities between the question (mention masked) and those texts, under the
offline embedding model.

>>> hop = Hop("http://x/rel/directed_by", forward=False)
>>> hop.arrow()
'<-directed_by-'
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from pyoxigraph import Literal, NamedNode

from sparqlqa.schema import RelationInfo, Schema, humanize, local_name

if TYPE_CHECKING:
    from sparqlqa.embed import Embedder
    from sparqlqa.kb import KnowledgeBase

#: nodes per path prefix that are expanded to find the next hop
EXPAND_SAMPLE = 40
#: at most this many distinct paths per start node
MAX_PATHS = 600


@dataclass(frozen=True)
class Hop:
    """One step of a path: walk ``relation`` forwards (subject → object) or backwards."""

    relation: str
    forward: bool = True

    def arrow(self) -> str:
        name = local_name(self.relation)
        return f"-{name}->" if self.forward else f"<-{name}-"


@dataclass
class RelationPath:
    """A relation path from ``start`` that exists in the KB (``count``: end nodes seen, a lower bound)."""

    start: str
    hops: tuple[Hop, ...]
    count: int = 0
    score: float = 0.0
    parts: dict[str, float] = field(default_factory=dict)
    text: str = ""

    def arrows(self) -> str:
        return "".join(h.arrow() for h in self.hops)

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "path": self.arrows(), "text": self.text, "count": self.count,
                "score": round(self.score, 4), "parts": {k: round(v, 4) for k, v in self.parts.items()}}


# -- enumeration -----------------------------------------------------------------------------------


def _level_query(frontier: Sequence[tuple[int, Sequence[str]]], with_nodes: bool) -> str:
    """One aggregate query: for each (prefix number, sampled nodes), the next (relation, direction)."""
    pairs = " ".join(f"({i} {NamedNode(x)})" for i, nodes in frontier for x in nodes)
    nodes = ' (GROUP_CONCAT(DISTINCT STR(?y); separator=" ") AS ?ys)' if with_nodes else ""
    return (
        f"SELECT ?i ?p ?dir (COUNT(DISTINCT ?y) AS ?n){nodes} WHERE {{ "
        f"VALUES (?i ?x) {{ {pairs} }} "
        '{ ?x ?p ?y BIND("f" AS ?dir) } UNION { ?y ?p ?x BIND("b" AS ?dir) } '
        "FILTER(isIRI(?y)) } GROUP BY ?i ?p ?dir"
    )


def _int(term: Any) -> int:
    return int(term.value) if isinstance(term, Literal) else 0


def _expand(kb: KnowledgeBase, prefixes: list[RelationPath], samples: list[list[str]],
            relations: Sequence[str], with_nodes: bool) -> tuple[list[RelationPath], list[list[str]]]:
    """Extend every prefix by one hop; returns the new paths and their end-node samples."""
    frontier = [(i, nodes) for i, nodes in enumerate(samples) if nodes]
    if not frontier:
        return [], []
    result = kb.query(_level_query(frontier, with_nodes))
    grown: list[RelationPath] = []
    ends: list[list[str]] = []
    for row in result.rows:
        i, p, direction, n = row[0], row[1], row[2], row[3]
        if i is None or p is None or direction is None or p.value not in relations:
            continue
        prefix = prefixes[_int(i)]
        hop = Hop(p.value, forward=direction.value == "f")
        grown.append(RelationPath(prefix.start, (*prefix.hops, hop), count=_int(n)))
        raw = row[4].value.split(" ") if with_nodes and row[4] is not None else []
        ends.append([node for node in raw[:EXPAND_SAMPLE] if node])
    order = sorted(range(len(grown)), key=lambda k: (grown[k].arrows()))
    return [grown[k] for k in order], [ends[k] for k in order]


def enumerate_paths(kb: KnowledgeBase, start: str, *, max_hops: int = 3,
                    relations: Sequence[str] | None = None) -> list[RelationPath]:
    """Every relation path of 1..``max_hops`` hops from ``start`` (both directions), bounded.

    Each level expands at most :data:`EXPAND_SAMPLE` nodes per prefix; a path
    that immediately walks back the edge it came along from a single node is
    kept (it reaches *other* nodes sharing that neighbour, e.g. co-stars).
    """
    relations = list(relations if relations is not None else object_relation_iris(kb.schema))
    if not relations:
        return []
    found: list[RelationPath] = []
    prefixes = [RelationPath(start, ())]
    samples = [[start]]
    for level in range(1, max_hops + 1):
        prefixes, samples = _expand(kb, prefixes, samples, relations, with_nodes=level < max_hops)
        found.extend(prefixes)
        if len(found) >= MAX_PATHS:
            break
    return found[:MAX_PATHS]


def object_relation_iris(schema: Schema) -> list[str]:
    """The relations whose values are nodes (the ones a path can walk)."""
    return [r.iri for r in schema.object_relations]
