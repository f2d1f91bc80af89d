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

import itertools
import math
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from pyoxigraph import Literal, NamedNode

from sparqlqa.kb.schema import RelationInfo, Schema, humanize, local_name
from sparqlqa.strategies.offline.mentions import words_of
from sparqlqa.strategies.offline.question import (
    WH_CLASSES,
    do_support,
    grand_stem,
    main_verb,
    question_focus,
    question_spans,
    round_trip_cue,
)
from sparqlqa.strategies.offline.verbalise import category_texts, inverse_twins, relation_texts, round_trip_texts

if TYPE_CHECKING:
    from sparqlqa.embed.embedders import Embedder
    from sparqlqa.kb.knowledge_base import KnowledgeBase

#: nodes per path prefix that are expanded to find the next hop
EXPAND_SAMPLE = 40
#: at most this many distinct paths per start node
MAX_PATHS = 4000
#: subjects and values sampled per relation to decide whether it can follow itself (``same_kind``)
SELF_CHAIN_SAMPLE = 300
#: ... and how alike they must be (parents/children/spouses 0.5-1; years, genres, languages < 0.15)
SELF_CHAIN_MIN = 0.3


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
    result = kb.query(_level_query(frontier, with_nodes, bool(values)))
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
    :func:`value_relation_iris`).
    """
    relations = set(relations if relations is not None else object_relation_iris(kb.schema))
    value_relations = set(values if values is not None else value_relation_iris(kb.schema))
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
        nodes = [row[0] for row in kb.query(query).rows if isinstance(row[0], NamedNode)]
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
    for p, side, count in kb.query(query).rows:
        if isinstance(p, NamedNode) and p.value in where:
            profile[2 * where[p.value] + _int(side)] = _int(count) / len(nodes)
    return profile


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


def value_relation_iris(schema: Schema) -> list[str]:
    """The relations whose values are mostly literals (a birth date, a population): the last hop of a
    path may walk one forwards, to the value a question asks for."""
    return [r.iri for r in schema.relations if r.kind == "literal"]


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


# -- scoring ---------------------------------------------------------------------------------------


@dataclass
class ScoringSettings:
    """Knobs of path scoring (KB-agnostic; see the README on improving relation labels instead).

    ``hop_cost``: the similarity a unit's span must exceed to pay for the unit, so
    paths grow a hop only when the question says that hop; ``centering``: how much
    of a span's mean similarity to *all* relations is subtracted (domain words such
    as "film" resemble every relation of a movie KB and so evidence none);
    ``backward_penalty``: a tie-breaker preferring hops read in the label's direction;
    ``round_trip_cue``: what a reading without a round trip loses when the question says "together",
    "same", "share", "co-" or "also"; ``class_weight``: how much the answer's node type counts on a
    typed KB (no typed benchmark KB here, so set by hand, below ``type_weight``); ``unsaid_verb``: what a
    reading loses when no hop is said by the main verb of a do-question ("what did X 's mother **die** of").
    """

    hop_cost: float = 0.2
    centering: float = 0.9
    backward_penalty: float = 0.01
    max_span_words: int = 3
    order_penalty: float = 0.15
    type_weight: float = 1.0
    type_margin: float = 0.2
    chain_hop_cost: float = 0.05
    round_trip_cue: float = 0.2
    class_weight: float = 0.5
    unsaid_verb: float = 0.2


def end_type_shares(relation: RelationInfo, forward: bool) -> dict[str, float]:
    """Where a hop along ``relation`` ends, by node type: the shares of its edges' range types (forward)
    or domain types (backward), else the declared ``rdfs:range`` / ``rdfs:domain``; {} when untyped."""
    counts: dict[str, int] = {}
    for domain, range_, count in relation.pairs:
        end = range_ if forward else domain
        if end is not None:
            counts[end] = counts.get(end, 0) + count
    if not counts:
        declared = relation.range if forward else relation.domain
        return {declared: 1.0} if declared else {}
    total = sum(counts.values())
    return {end: count / total for end, count in counts.items()}


class RelationVectors:
    """Embeddings of every relation's texts and round-trip texts for one KB (computed once, cached)."""

    def __init__(self, schema: Schema, embedder: Embedder) -> None:
        self.embedder = embedder
        twins = inverse_twins(schema)
        self.relations = [r for r in schema.relations if r.iri not in twins]  # values' too: a path may end on one
        self.index = {r.iri: i for i, r in enumerate(self.relations)}
        self.labels = {r.iri: r.label for r in self.relations}
        self._texts: dict[tuple[str, str], list[str]] = {}
        for rel in self.relations:
            texts = relation_texts(rel)
            self._texts[(rel.iri, "hop")] = texts
            self._texts[(rel.iri, "round-trip-out")] = round_trip_texts(texts, True)
            self._texts[(rel.iri, "round-trip-in")] = round_trip_texts(texts, False)
        flat = list(dict.fromkeys(t for texts in self._texts.values() for t in texts))
        vectors = embedder.embed(flat) if flat else np.zeros((0, embedder.dimension), dtype=np.float32)
        self._row = {t: i for i, t in enumerate(flat)}
        self._matrix = vectors
        self.classes = [t.iri for t in schema.types]
        self.class_vectors = embedder.embed([schema.type_label(t) for t in self.classes]) \
            if len(self.classes) > 1 else None
        self.end_types = {(r.iri, forward): end_type_shares(r, forward)
                          for r in self.relations for forward in (True, False)}

    def texts(self, relation: str, kind: str) -> list[str]:
        key = "hop" if kind in ("forward", "backward") or kind.startswith("twice") else kind
        return self._texts.get((relation, key), [humanize(local_name(relation))])

    def vectors(self, relation: str, kind: str) -> np.ndarray:
        """One row per text of the relation (at least its split name, so never an empty array)."""
        texts = self.texts(relation, kind) or [humanize(local_name(relation))]
        rows = [self._row[t] for t in texts if t in self._row]
        return self._matrix[rows] if rows else self.embedder.embed(texts)


_VECTORS: dict[tuple[str, str], np.ndarray] = {}
#: short texts (question spans) whose vectors are kept in memory, per process
VECTOR_CACHE_SIZE = 50_000


def embed_cached(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """``embedder.embed(texts)``, remembering each text's vector (spans recur across questions)."""
    if not texts:
        return np.zeros((0, embedder.dimension), dtype=np.float32)
    model = embedder.model_id
    # read each vector once into a local dict: another thread (sparqlqa serve) may clear the cache meanwhile
    found: dict[str, np.ndarray | None] = {t: _VECTORS.get((model, t)) for t in texts}
    missing = [t for t, v in found.items() if v is None]
    if missing:
        fresh = dict(zip(missing, embedder.embed(missing)))
        found.update(fresh)
        if len(_VECTORS) + len(missing) > VECTOR_CACHE_SIZE:
            _VECTORS.clear()
        _VECTORS.update({(model, t): v for t, v in fresh.items()})
    return np.stack([cast(np.ndarray, found[t]) for t in texts])


def has_round_trip(hops: Sequence[Hop]) -> bool:
    """Whether a path goes out and back along one relation somewhere (``-r-> <-r-`` or ``<-r- -r->``)."""
    return any(a.relation == b.relation and a.forward != b.forward for a, b in itertools.pairwise(hops))


class QuestionScorer:
    """Scores paths against one masked question: each unit of a path is aligned to its own,
    non-overlapping question span; a path's score is the best total of (span similarity − centring −
    hop cost) over its segmentations, so every hop must be *said* somewhere in the question."""

    def __init__(self, question: str, relations: RelationVectors, settings: ScoringSettings,
                 placeholder: str = "X", occurrence: int = 0) -> None:
        self.question = question
        self.relations = relations
        self.settings = settings
        self.spans = question_spans(question, placeholder, settings.max_span_words)
        self._span_vectors = embed_cached(relations.embedder, [s.text for s in self.spans]) if self.spans else None
        self._apart = np.array([[a.last < b.first or b.last < a.first for b in self.spans] for a in self.spans],
                               dtype=bool).reshape(len(self.spans), len(self.spans))
        self._free = np.array([[a.last <= b.first or b.last <= a.first for b in self.spans] for a in self.spans],
                              dtype=bool).reshape(len(self.spans), len(self.spans))
        self.focus = question_focus(question, placeholder)
        self.cue = round_trip_cue(question)
        self._axis = self._positions_on_axis(placeholder, occurrence)
        self._raw: dict[Unit, np.ndarray] = {}
        self._centers: dict[str, np.ndarray] = {}
        self._rows: dict[Unit, np.ndarray] = {}
        self._cache: dict[tuple[tuple[Unit, ...], bool], tuple[float, list[int]]] = {}
        self._focus_scores: np.ndarray | None = None
        self._class_values: dict[str, float] | None = None
        words = words_of(question)
        at = self.focus.position
        focus_word = words[at].text.casefold() if at is not None and at < len(words) else ""
        self.class_phrase = self.focus.phrase or WH_CLASSES.get(focus_word)
        names = [i for i, w in enumerate(words) if w.text == placeholder]
        verb = main_verb([w.text.casefold() for w in words], at, self.focus.phrase,
                         names[min(occurrence, len(names) - 1)]) if names else None
        self.verb_spans = {i for i, s in enumerate(self.spans) if verb is not None and s.first <= verb < s.last}
        self.verb = words[verb].text.casefold() if verb is not None else ""

    def _raw_row(self, unit: Unit) -> np.ndarray:
        """Cosine of the unit's best text with every span (a round trip averages in its plain label, so
        the span must say the relation, not just "same")."""
        if unit not in self._raw:
            assert self._span_vectors is not None
            if unit.kind.startswith("twice"):
                self._raw[unit] = self._twice_row(unit)
                return self._raw[unit]
            sims = (self.relations.vectors(unit.relation, unit.kind) @ self._span_vectors.T).max(axis=0)
            if unit.hops == 2:
                plain = (self.relations.vectors(unit.relation, "forward") @ self._span_vectors.T).max(axis=0)
                sims = (sims + plain) / 2
            else:
                self._read_categories(unit.relation, sims)
            self._raw[unit] = sims
        return self._raw[unit]

    def _read_categories(self, relation: str, sims: np.ndarray) -> None:
        """A "kind of N" span is compared with "<relation> of N" ("genre of film"), not with the bare
        relation: "kind" alone resembles every relation a little and "film" every relation of a film KB."""
        assert self._span_vectors is not None
        for i, span in enumerate(self.spans):
            if span.category_of:
                texts = category_texts(self.relations.texts(relation, "forward"), span.category_of)
                if texts:
                    sims[i] = float((embed_cached(self.relations.embedder, texts) @ self._span_vectors[i]).max())

    def _twice_row(self, unit: Unit) -> np.ndarray:
        """A hop said twice by one "grand-" word: the cosine of the word's rest ("grand**parent**") with
        the relation; -inf for every other span."""
        row = np.full(len(self.spans), -np.inf)
        stems = [(i, stem) for i, s in enumerate(self.spans) if (stem := grand_stem(s.text))]
        if stems:
            vectors = embed_cached(self.relations.embedder, [stem for _, stem in stems])
            sims = (self.relations.vectors(unit.relation, "forward") @ vectors.T).max(axis=0)
            row[[i for i, _ in stems]] = sims
        return row

    def _center(self, kind: str = "forward") -> np.ndarray:
        """Per span, its mean raw score over all relations (round trips are centred like hops, so a
        round trip only beats its plain hop when "same <label>" fits the span better than "<label>")."""
        key = "twice" if kind.startswith("twice") else "hop"
        if key not in self._centers:
            rows = [self._raw_row(Unit(r.iri, "twice-forward" if key == "twice" else "forward"))
                    for r in self.relations.relations]
            center = np.mean(rows, axis=0) if rows else np.zeros(len(self.spans))
            self._centers[key] = np.where(np.isfinite(center), center, 0.0)  # no "grand-" word: -inf rows
        return self._centers[key]

    def unit_row(self, unit: Unit) -> np.ndarray:
        """The unit's adjusted score against every span: raw − centering − hop cost (− backward penalty)."""
        if unit not in self._rows:
            row = self._raw_row(unit) - self.settings.centering * self._center(unit.kind) - self._hop_costs()
            if unit.kind.endswith("backward"):
                row = row - self.settings.backward_penalty
            self._rows[unit] = row
        return self._rows[unit]

    def _hop_costs(self) -> np.ndarray:
        """Per span, what a unit pays to be said there: less in a possessive chain, where every noun
        is a hop ("X 's darling 's sex"), than in free text, where a noun may only name a type."""
        return np.array([self.settings.chain_hop_cost if s.in_chain else self.settings.hop_cost
                         for s in self.spans])

    def align(self, units: tuple[Unit, ...], ordered: bool = False) -> tuple[float, list[int]]:
        """Best total over one-to-one, non-overlapping unit → span assignments (and the spans).

        ``ordered``: the units are consecutive hops of one path, so each should be said *farther* from
        the question's focus than the next (the hop nearest the answer is said nearest the wh-word:
        "**who directed** the movies that X **acted in**"); each inversion costs ``order_penalty``.
        """
        key = (units, ordered)
        if key in self._cache:
            return self._cache[key]
        if not self.spans or not units or len(units) > 3:
            return (-math.inf, [])
        rows = [self.unit_row(u) for u in units]
        total = rows[0].copy()
        shape = [len(self.spans)]
        for k, row in enumerate(rows[1:], start=1):
            total = total[..., None] + row.reshape([1] * k + [-1])
            shape.append(len(self.spans))
            for j in range(k):
                same = units[j].relation == units[k].relation
                total = np.where(self._pair_mask(j, k, k + 1, apart=same), total, -np.inf)
            if ordered:
                total = total - self.settings.order_penalty * self._inversions(k - 1, k, k + 1)
        flat = int(np.argmax(total))
        best = (float(total.flat[flat]), [int(i) for i in np.unravel_index(flat, tuple(shape))])
        self._cache[key] = best
        return best

    def _positions_on_axis(self, placeholder: str, occurrence: int) -> np.ndarray | None:
        """Per span, how far along the way from the name to the focus it is said (distance to the name −
        distance to the focus; with no wh-word, the words after the name and then those before it);
        None when the question has no masked name."""
        from sparqlqa.strategies.offline.mentions import words_of

        words = [w.text.casefold() for w in words_of(self.question)]
        names = [i for i, w in enumerate(words) if w == placeholder.casefold()]
        if not names:
            return None
        name, focus = names[min(occurrence, len(names) - 1)], self.focus.position
        centers = np.array([(s.first + s.last - 1) / 2 for s in self.spans])
        if focus is None:  # "the heir of X 's mother 's heir": the chain after the name, then the one before
            return np.where(centers > name, centers - name, len(words) + name - centers)
        axis = np.abs(centers - name) - np.abs(centers - focus)
        if do_support(words, focus, self.focus.phrase) and focus < name:
            # "where did the daughter of X **die**": the final verb goes with the wh-word
            from sparqlqa.strategies.offline.mentions import STOPWORDS

            final = max((i for i, w in enumerate(words) if w not in STOPWORDS), default=-1)
            ends = np.array([s.last - 1 for s in self.spans])
            axis[(ends == final) & (centers > name)] = abs(name - focus)
        return axis

    def _inversions(self, a: int, b: int, ndim: int) -> np.ndarray:
        """1 where unit ``a``'s span lies nearer the focus than the next unit ``b``'s (hops are said from
        the name outwards to the focus)."""
        if self._axis is None:
            return np.zeros([1] * ndim)
        inverted = (self._axis[:, None] > self._axis[None, :]).astype(float)
        shape = [1] * ndim
        shape[a] = shape[b] = len(self.spans)
        return inverted.reshape(shape)

    def type_score(self, path: RelationPath) -> float:
        """Evidence from what the question calls its answer: "what **year** …" names the *object* of
        ``release year``, so a path ending forward along it gains and one ending backward along it
        (at the things that have a year) loses.  Only a focus that names one relation clearly (by
        ``type_margin`` above its mean similarity) counts: "which movies" or "who …" are neutral."""
        if not self.focus.phrase or not path.hops or not self.relations.relations:
            return 0.0
        if self._focus_scores is None:
            rels = self.relations
            phrase = embed_cached(rels.embedder, [self.focus.phrase])[0]
            raw = np.array([float((rels.vectors(r.iri, "forward") @ phrase).max()) for r in rels.relations])
            self._focus_scores = np.maximum(0.0, raw - raw.mean() - self.settings.type_margin)
        last = path.hops[-1]
        index = self.relations.index.get(last.relation)
        if index is None:
            return 0.0
        value = float(self._focus_scores[index])
        return self.settings.type_weight * (value if last.forward else -value)

    def class_score(self, path: RelationPath) -> float:
        """Evidence from the node types of a typed KB: "which **movies** …", "who …" (a person) say what
        type the answer has; a path gains the similarity of its end types (the last hop's range, or domain
        when walked backwards, by edge share) to that phrase, less the mean over all types.  Only when
        the phrase names some type clearly (``type_margin`` above the mean); 0 on an untyped KB."""
        rels = self.relations
        if not self.class_phrase or rels.class_vectors is None or not path.hops:
            return 0.0
        if self._class_values is None:
            sims = rels.class_vectors @ embed_cached(rels.embedder, [self.class_phrase])[0]
            values = sims - sims.mean()
            named = float(values.max()) > self.settings.type_margin
            self._class_values = dict(zip(rels.classes, values.tolist())) if named else {}
        last = path.hops[-1]
        shares = rels.end_types.get((last.relation, last.forward), {})
        return self.settings.class_weight * sum(self._class_values.get(t, 0.0) * share for t, share in shares.items())

    def _named_by_verb(self, path: RelationPath) -> bool:
        """Whether a hop's relation is named with the main verb ("which country does X **play** for" and
        ``plays for country``): its noun then takes a span of its own and the verb is said all the same."""
        if len(self.verb) < 3:
            return False
        words = {w for hop in path.hops
                 for w in self.relations.labels.get(hop.relation, local_name(hop.relation)).casefold().split()}
        return any(w.startswith(self.verb) or (len(w) >= 3 and self.verb.startswith(w)) for w in words)

    def _pair_mask(self, a: int, b: int, ndim: int, apart: bool = False) -> np.ndarray:
        """Where units ``a`` and ``b`` may sit: on disjoint spans; with ``apart``, also not side by side
        (two units of one relation on "**religious** **belief**" split one phrase that says it once)."""
        shape = [1] * ndim
        shape[a] = shape[b] = len(self.spans)
        return (self._apart if apart else self._free).reshape(shape)

    def score(self, path: RelationPath) -> RelationPath:
        """Set ``path.score`` (and ``parts``, ``text``) from its best segmentation; returns the path."""
        best: float = -math.inf
        chosen: tuple[Unit, ...] = ()
        spans: list[int] = []
        for units in segmentations(path.hops):
            value, where = self.align(units, ordered=True)
            if value > best:
                best, chosen, spans = value, units, where
        typed = self.type_score(path)
        classed = self.class_score(path)
        missed = -self.settings.round_trip_cue if self.cue and not has_round_trip(path.hops) else 0.0
        unsaid = -self.settings.unsaid_verb if self.verb_spans and not self.verb_spans & set(spans) \
            and not self._named_by_verb(path) else 0.0
        path.score = best + typed + classed + missed + unsaid
        path.parts = {f"{u.kind}:{self.relations.labels.get(u.relation, local_name(u.relation))} ~ "
                      f"{self.spans[s].text!r}": float(self.unit_row(u)[s]) for u, s in zip(chosen, spans)}
        if typed:
            path.parts[f"answer type ~ {self.focus.phrase!r}"] = typed
        if classed:
            path.parts[f"answer class ~ {self.class_phrase!r}"] = classed
        if missed:
            path.parts[f"no round trip for {self.cue!r}"] = missed
        if unsaid:
            path.parts["main verb unsaid"] = unsaid
        path.text = path_text(path, self.relations.labels)
        return path
