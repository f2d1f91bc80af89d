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

__all__ = ["EXPAND_SAMPLE", "Hop", "RelationPath", "SelfChaining", "Unit", "ValueClasses", "enumerate_paths",
           "is_zigzag", "object_relation_iris", "path_text", "same_kind", "segmentations", "self_chaining_hops"]

from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from pyoxigraph import Literal, NamedNode

from sparqlqa.english import SELF_CHAIN_MIN
from sparqlqa.kb.schema import Schema, humanize, local_name
from sparqlqa.query.built_query import BuiltQuery
from sparqlqa.strategies.offline.verbalise import inverse_twins

if TYPE_CHECKING:
    from sparqlqa.kb.knowledge_base import KnowledgeBase

#: nodes per path prefix that are expanded to find the next hop
EXPAND_SAMPLE = 40
#: at most this many distinct paths per start node
MAX_PATHS = 4000
#: subjects and values sampled per relation to decide whether it can follow itself (``same_kind``)
SELF_CHAIN_SAMPLE = 300


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


def _level_query(frontier: Sequence[tuple[int, Sequence[str]]], with_nodes: bool, values: bool = False) -> str:
    """One aggregate query: for each (prefix number, sampled nodes), the next (relation, direction);
    ``values``: also forward hops to literals (a path may end on a value: a date, a number)."""
    pairs = " ".join(f"({i} {NamedNode(x)})" for i, nodes in frontier for x in nodes)
    nodes = ' (GROUP_CONCAT(DISTINCT STR(?y); separator=" ") AS ?ys)' if with_nodes else ""
    ends = 'isIRI(?y) || (isLiteral(?y) && ?dir = "f")' if values else "isIRI(?y)"
    return (
        f"SELECT ?i ?p ?dir (COUNT(DISTINCT ?y) AS ?n){nodes} WHERE {{ "
        f"VALUES (?i ?x) {{ {pairs} }} "
        '{ ?x ?p ?y BIND("f" AS ?dir) } UNION { ?y ?p ?x BIND("b" AS ?dir) } '
        f"FILTER({ends}) }} GROUP BY ?i ?p ?dir"
    )


def _int(term: Any) -> int:
    return int(term.value) if isinstance(term, Literal) else 0


def _expand(kb: KnowledgeBase, prefixes: list[RelationPath], samples: list[list[str]], relations: set[str],
            with_nodes: bool, chaining: Container[Hop] | None, values: set[str],
            ) -> tuple[list[RelationPath], list[list[str]]]:
    """Extend every prefix by one hop; returns the new paths and their end-node samples (none after a hop
    to values: such a path ends there)."""
    frontier = [(i, nodes) for i, nodes in enumerate(samples) if nodes]
    if not frontier:
        return [], []
    result = kb.query(BuiltQuery.select(_level_query(frontier, with_nodes, bool(values))))
    grown: list[RelationPath] = []
    ends: list[list[str]] = []
    for row in result.rows:
        i, p, direction, n = row[0], row[1], row[2], row[3]
        if not isinstance(p, NamedNode) or not isinstance(direction, Literal) or not (
                p.value in relations or (p.value in values and direction.value == "f")):
            continue
        prefix = prefixes[_int(i)]
        hop = Hop(p.value, forward=direction.value == "f")
        if is_zigzag((*prefix.hops[-2:], hop)) or (
                chaining is not None and prefix.hops[-1:] == (hop,) and hop not in chaining):
            continue
        grown.append(RelationPath(prefix.start, (*prefix.hops, hop), count=_int(n)))
        raw = row[4].value.split(" ") if with_nodes and isinstance(row[4], Literal) and p.value in relations else []
        ends.append([node for node in raw[:EXPAND_SAMPLE] if node])
    order = sorted(range(len(grown)), key=lambda k: (grown[k].arrows()))
    return [grown[k] for k in order], [ends[k] for k in order]


def enumerate_paths(kb: KnowledgeBase, start: str, *, max_hops: int = 3, relations: Iterable[str] | None = None,
                    chaining: Container[Hop] | None = None, values: Iterable[str] | None = None,
                    ) -> list[RelationPath]:
    """Every relation path of 1..``max_hops`` hops from ``start`` (both directions), bounded.

    Each level expands at most :data:`EXPAND_SAMPLE` nodes per prefix; a path
    that immediately walks back the edge it came along from a single node is
    kept (it reaches *other* nodes sharing that neighbour, e.g. co-stars).
    ``chaining``: the hops that may repeat themselves (see :func:`self_chaining_hops`); None: all.
    ``values``: relations to literal values a path may end with, forwards (default: the KB's, see
    :func:`_value_relation_iris`).
    """
    relations = set(relations if relations is not None else object_relation_iris(kb.schema))
    value_relations = set(values if values is not None else _value_relation_iris(kb.schema))
    if not relations and not value_relations:
        return []
    found: list[RelationPath] = []
    prefixes = [RelationPath(start, ())]
    samples = [[start]]
    for level in range(1, max_hops + 1):
        prefixes, samples = _expand(kb, prefixes, samples, relations, level < max_hops, chaining, value_relations)
        found.extend(prefixes)
        if len(found) >= MAX_PATHS:
            break
    return found[:MAX_PATHS]


def self_chaining_hops(kb: KnowledgeBase, relations: Iterable[str] | None = None) -> set[Hop]:
    """The hops that can follow themselves (``-parents-> -parents->``): those of relations whose values
    are the same kind of thing as their subjects (:func:`same_kind`).  A repeat of any other hop
    (``-release year-> -release year->``) only crosses a node that two things share by accident, such
    as a year and a film both called "1941"."""
    relations = list(relations if relations is not None else object_relation_iris(kb.schema))
    return {Hop(r, forward) for r in relations if same_kind(kb, r, relations) >= SELF_CHAIN_MIN
            for forward in (True, False)}


class SelfChaining:
    """:func:`self_chaining_hops` decided lazily, one relation at a time, the first time a path repeats it
    (a KB with thousands of relations pays only for those its questions walk twice)."""

    def __init__(self, kb: KnowledgeBase, relations: Iterable[str] | None = None) -> None:
        self.kb = kb
        self.relations = list(relations if relations is not None else object_relation_iris(kb.schema))
        self._known: dict[str, bool] = {}

    def __contains__(self, hop: object) -> bool:
        if not isinstance(hop, Hop):
            return False
        if hop.relation not in self._known:
            self._known[hop.relation] = same_kind(self.kb, hop.relation, self.relations) >= SELF_CHAIN_MIN
        return self._known[hop.relation]


def same_kind(kb: KnowledgeBase, relation: str, relations: Sequence[str]) -> float:
    """How alike a relation's values and its subjects are, from the other relations each has (the KB's
    own evidence of domain and range, when it declares none): the overlap of the two profiles over
    the larger one's norm, 0..~1 (0: years vs films; ~1: parents vs children).  Samples
    :data:`SELF_CHAIN_SAMPLE` of each."""
    pred = str(NamedNode(relation))
    profiles = []
    for side in ("?s", "?o"):
        query = f"SELECT DISTINCT ?n WHERE {{ ?s {pred} ?o FILTER(isIRI(?o)) BIND({side} AS ?n) }} " \
                f"LIMIT {SELF_CHAIN_SAMPLE}"
        nodes = [row[0] for row in kb.query(BuiltQuery.select(query)).rows if isinstance(row[0], NamedNode)]
        profiles.append(_profile(kb, nodes, [r for r in relations if r != relation]))
    subjects, values = profiles
    overlap = float(subjects @ values)
    larger = max(float(subjects @ subjects), float(values @ values))
    return overlap / larger if larger else 0.0


def _profile(kb: KnowledgeBase, nodes: Sequence[NamedNode], relations: Sequence[str]) -> np.ndarray:
    """Per (relation, side), the share of ``nodes`` that are its subject / its object."""
    profile = np.zeros(2 * len(relations))
    if not nodes or not relations:
        return profile
    where = {r: i for i, r in enumerate(relations)}
    query = (f"SELECT ?p ?side (COUNT(DISTINCT ?n) AS ?c) WHERE {{ VALUES ?n {{ {' '.join(map(str, nodes))} }} "
             "{ ?n ?p ?x BIND(0 AS ?side) } UNION { ?x ?p ?n BIND(1 AS ?side) } } GROUP BY ?p ?side")
    for p, side, count in kb.query(BuiltQuery.select(query)).rows:
        if isinstance(p, NamedNode) and p.value in where:
            profile[2 * where[p.value] + _int(side)] = _int(count) / len(nodes)
    return profile


class ValueClasses:
    """Which nodes are *class-like values* ("Forward", "Goalkeeper", "Jazz", "Hardcover"): nodes that are
    the value of exactly one relation, for at least two subjects, and have no relation of their own.  A
    question that names one ("which players are **forwards**", "is X a **goalkeeper**") says that
    relation by naming the value, so the hop into it needs no other word.  Decided per node, lazily."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self.relations = set(object_relation_iris(kb.schema))
        self._known: dict[str, str | None] = {}

    def relation_into(self, node: str) -> str | None:
        """The one relation whose value ``node`` is, when the node is a class-like value; else None."""
        if node not in self._known:
            self._known[node] = self._decide(node)
        return self._known[node]

    def _decide(self, node: str) -> str | None:
        """Three bounded queries (no counting over a hub's edges): the relations into the node, two of
        its subjects along the one relation, and whether it has a relation of its own."""
        term = str(NamedNode(node))
        rows = self.kb.query(BuiltQuery.select(f"SELECT DISTINCT ?p WHERE {{ ?s ?p {term} }} LIMIT 20")).rows
        into = [p.value for (p,) in rows if isinstance(p, NamedNode) and p.value in self.relations]
        if len(into) != 1:
            return None
        two = BuiltQuery.select(f"SELECT ?s WHERE {{ ?s {NamedNode(into[0])} {term} }} LIMIT 2")
        if len(self.kb.query(two).rows) < 2:
            return None
        own = BuiltQuery.select(f"SELECT DISTINCT ?p WHERE {{ {term} ?p ?o FILTER(!isLiteral(?o)) }} LIMIT 20")
        out = self.kb.query(own).rows
        if any(isinstance(p, NamedNode) and p.value in self.relations for (p,) in out):
            return None
        return into[0]


def is_zigzag(hops: Sequence[Hop]) -> bool:
    """Out, back and out again along one relation (``-r-> <-r- -r->``): for a relation with one value
    per node that re-reaches the first hop's nodes, and it is never how a question reads, so such
    paths are not enumerated (a single out-and-back, "the same r", is)."""
    return len(hops) == 3 and len({h.relation for h in hops}) == 1 \
        and hops[0].forward == hops[2].forward != hops[1].forward


def object_relation_iris(schema: Schema) -> list[str]:
    """The relations whose values are nodes (the ones a path can walk), less the ``_inverse`` twins
    of others (:func:`~sparqlqa.strategies.offline.verbalise.inverse_twins`: walked as the original, backwards)."""
    twins = inverse_twins(schema)
    return [r.iri for r in schema.object_relations if r.iri not in twins]


def _value_relation_iris(schema: Schema) -> list[str]:
    """The relations whose values are mostly literals (a birth date, a population): the last hop of a
    path may walk one forwards, to the value a question asks for.  A naming column found in the data
    (:mod:`sparqlqa.kb.data_names`) is how its nodes are shown, not a value to walk to."""
    names = set(schema.label_predicates)
    return [r.iri for r in schema.relations if r.kind == "literal" and r.iri not in names]


@dataclass(frozen=True)
class Unit:
    """A piece of a path that should be said by its own span of the question: one hop, a round trip,
    or one hop twice ("grandparent": ``-parents-> -parents->``)."""

    relation: str
    kind: str  # "forward" | "backward" | "round-trip-out" | "round-trip-in" | "twice-forward" | "twice-backward"

    @property
    def hops(self) -> int:
        return 2 if self.kind.startswith(("round-trip", "twice")) else 1


def segmentations(hops: Sequence[Hop]) -> list[tuple[Unit, ...]]:
    """Every way to cut ``hops`` into units (a hop; a hop and its reverse as one round trip; a hop
    and its repeat as one "grand-" unit)."""
    if not hops:
        return [()]
    first = hops[0]
    single = Unit(first.relation, "forward" if first.forward else "backward")
    found = [(single, *rest) for rest in segmentations(hops[1:])]
    if len(hops) > 1 and hops[1].relation == first.relation and hops[1].forward != first.forward:
        trip = Unit(first.relation, "round-trip-out" if first.forward else "round-trip-in")
        found += [(trip, *rest) for rest in segmentations(hops[2:])]
    if len(hops) > 1 and hops[1] == first:
        twice = Unit(first.relation, "twice-forward" if first.forward else "twice-backward")
        found += [(twice, *rest) for rest in segmentations(hops[2:])]
    return found


def path_text(path: RelationPath, labels: dict[str, str]) -> str:
    """A readable rendering of a path: ``X → directed by → ? ← starred actors ← ?``."""
    parts = []
    for hop in path.hops:
        label = labels.get(hop.relation) or humanize(local_name(hop.relation))
        parts.append(f"-{label}->" if hop.forward else f"<-{label}-")
    return " ".join(parts)
