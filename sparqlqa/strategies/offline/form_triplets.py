"""Offline triplets for answer forms: the value relation an ordering or filter is about, the extra
triplets and form fields, and the reading of a yes/no question between two named nodes.

A superlative adds ``?x -value relation-> ?v`` with ``order_by ?v`` and ``limit 1``; a filter adds
``?x -value relation-> ?f1`` and ``?f1 > …``; the value relation is one whose values have the kind the
words ask for (a date for "earliest" or "after 2009", a number for "longest" or "over 150 million"),
held by the target's node type when the KB is typed, and whose texts are closest to what the question
says about it (the noun after "largest", the ordering word's hints, the question).  Nothing is tuned
per KB: only the KB's own relation names and datatypes are read.
"""

from __future__ import annotations

__all__ = ["ValueRelation", "ValueSamples", "add_form", "boolean_reading", "choose_value_relation", "value_relations"]

import itertools
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pyoxigraph import Literal, NamedNode

from sparqlqa.english import IMPLIED_HOP, ScoringSettings
from sparqlqa.errors import StorageError
from sparqlqa.paths import atomic_write_bytes
from sparqlqa.query.built_query import BuiltQuery
from sparqlqa.stages.forms import XSD, OrderBy, ValueFilter, is_numeric_type
from sparqlqa.stages.modes import Form
from sparqlqa.stages.triplets import Term, Triplet, Triplets
from sparqlqa.strategies.offline.mentions import PLACEHOLDER, Mention, mask_all
from sparqlqa.strategies.offline.paths import Hop, RelationPath, enumerate_paths
from sparqlqa.strategies.offline.scoring import QuestionScorer, RelationVectors

if TYPE_CHECKING:
    from sparqlqa.kb.knowledge_base import KnowledgeBase
    from sparqlqa.kb.labels import LabelIndex
    from sparqlqa.strategies.offline.forms import FilterCue, FormCue

DATE_TYPES = frozenset([XSD + "date", XSD + "dateTime", XSD + "gYear", XSD + "gYearMonth"])
#: a number written as text
NUMBER_TEXT = re.compile(r"[+-]?\d+(?:\.\d+)?")
#: what a word shared with a value relation's name adds to its embedding similarity
LEXICAL_WEIGHT = 0.3
#: nodes per named mention whose paths a yes/no reading walks
BOOLEAN_NODES = 2


@dataclass
class ValueRelation:
    """A relation whose objects are literals: its most common datatype and its subjects' types."""

    iri: str
    label: str
    datatype: str | None
    domains: set[str] = field(default_factory=set)
    numeric_text: bool = False  # plain strings that read as numbers ("2500000")
    #: the largest value as a number (queried the first time it is asked for; None when none reads as one)
    maximum: Callable[[], float | None] = field(default=lambda: None, repr=False, compare=False)

    def kind(self) -> str | None:
        if self.datatype in DATE_TYPES:
            return "date"
        return "number" if is_numeric_type(self.datatype) or self.numeric_text else None


def value_relations(kb: KnowledgeBase) -> list[ValueRelation]:
    """The KB's literal relations with their datatype (one sampled value each) and subject types.

    What that reads from the data (the sample's datatype, whether it is a number written as text, and the
    subjects' types of a relation the schema gives none) is read once per KB generation and kept in
    ``artifacts/offline/value-relations.json`` (:class:`ValueSamples`): a cold ``ask`` reads the file instead
    of a query per relation in its own process (14 on a 40K-triple graph mapped from tables, and the store
    opened for them: 0.03 s CPU).  Labels and the schema's domains are read from the schema each time."""
    samples = ValueSamples.stored(kb)
    found = []
    for rel in kb.schema.relations:
        if rel.kind != "literal":
            continue
        datatype, numeric_text = samples.value(kb, rel.iri)
        domains = {d for d, _, _ in rel.pairs if d} | ({rel.domain} if rel.domain else set())
        if not domains:
            domains = samples.subject_types(kb, rel.iri)
        found.append(ValueRelation(rel.iri, rel.label, datatype, domains, numeric_text, _largest(kb, rel.iri)))
    samples.keep(kb)
    return found


class ValueSamples:
    """What :func:`value_relations` reads from a KB's data, by relation IRI, kept with the generation."""

    FILE = "value-relations.json"
    FORMAT = "sparqlqa-value-relations/1"

    def __init__(self, values: dict[str, list[object]] | None = None,
                 types: dict[str, list[str]] | None = None) -> None:
        self.values = values or {}  # IRI -> [datatype or None, numeric text]
        self.types = types or {}  # IRI -> subjects' types (only for relations whose schema gives none)
        self.changed = False

    @classmethod
    def stored(cls, kb: KnowledgeBase) -> ValueSamples:
        """The generation's samples (none for an in-memory KB; a missing or damaged file: none, read anew)."""
        path = _samples_path(kb)
        try:
            data = json.loads(path.read_bytes()) if path is not None else None
            if isinstance(data, dict) and data.get("format") == cls.FORMAT:
                return cls(dict(data["values"]), dict(data["types"]))
        except (OSError, ValueError, KeyError, TypeError):
            pass
        return cls()

    def value(self, kb: KnowledgeBase, iri: str) -> tuple[str | None, bool]:
        if iri not in self.values:
            rows = kb.query(BuiltQuery.select(f"SELECT ?o WHERE {{ ?s {NamedNode(iri)} ?o . FILTER(isLiteral(?o)) }} "
                                              "LIMIT 1")).rows
            value = rows[0][0] if rows else None
            datatype = value.datatype.value if isinstance(value, Literal) else None
            numeric_text = isinstance(value, Literal) and not is_numeric_type(datatype) and \
                NUMBER_TEXT.fullmatch(value.value.strip()) is not None
            self.values[iri], self.changed = [datatype, numeric_text], True
        kept, number = self.values[iri]
        return (kept if isinstance(kept, str) else None), bool(number)

    def subject_types(self, kb: KnowledgeBase, iri: str) -> set[str]:
        if iri not in self.types:
            typed = kb.query(BuiltQuery.select(f"SELECT DISTINCT ?t WHERE {{ ?s {NamedNode(iri)} ?o . "
                             f"?s {NamedNode(kb.schema.type_predicate)} ?t }} LIMIT 20")).rows
            self.types[iri] = sorted(row[0].value for row in typed if isinstance(row[0], NamedNode))
            self.changed = True
        return set(self.types[iri])

    def keep(self, kb: KnowledgeBase) -> None:
        """Write the samples when something was read now (a KB folder we may not write: next time again)."""
        path = _samples_path(kb) if self.changed else None
        if path is None:
            return
        payload = {"format": self.FORMAT, "values": self.values, "types": self.types}
        try:
            atomic_write_bytes(path, json.dumps(payload, sort_keys=True).encode("utf-8"))
        except StorageError:
            pass


def _samples_path(kb: KnowledgeBase) -> Path | None:
    try:
        folder = kb.artifacts_dir("offline")
    except StorageError:  # a KB folder we may read but not write
        return None
    return folder / ValueSamples.FILE if folder is not None else None


def _largest(kb: KnowledgeBase, relation: str) -> Callable[[], float | None]:
    """A function that queries the relation's largest value as a number once (a 1-row aggregate)."""
    known: list[float | None] = []

    def largest() -> float | None:
        if not known:
            rows = kb.query(BuiltQuery.select(f"SELECT (MAX(?n) AS ?m) WHERE {{ ?s {NamedNode(relation)} ?o "
                            f"BIND({NamedNode(XSD + 'decimal')}(STR(?o)) AS ?n) }}")).rows
            value = rows[0][0] if rows else None
            known.append(float(value.value) if isinstance(value, Literal) else None)
        return known[0]

    return largest


def _in_stored_unit(flt: FilterCue, chosen: ValueRelation) -> str:
    """The filter's figure as the relation stores it: a KB whose every value is below the multiplier
    ("fee 45.5" while the question says "over 20 **million**") stores the value in that unit, so the
    bare figure is compared; otherwise the multiplied one."""
    if flt.unit == 1 or chosen.kind() != "number":
        return flt.value
    largest = chosen.maximum()
    return flt.figure if largest is not None and largest < flt.unit else flt.value


def _lexical(words: Sequence[str], label: str) -> float:
    """Whether a question word and a relation word share a 4-letter stem ("released" / "release date")."""
    names = [w for w in label.casefold().replace("_", " ").split() if len(w) >= 4]
    return float(any(w[:4] == n[:4] for w in words if len(w) >= 4 for n in names))


def choose_value_relation(kind: str | None, phrases: Sequence[str], words: Sequence[str],
                          targets: set[str] | None, values: Sequence[ValueRelation],
                          relations: RelationVectors) -> ValueRelation | None:
    """The value relation the words are about: of ``kind`` (typed datatypes first), held by ``targets``'
    types when known, closest by embedding (+ a shared word stem) to ``phrases``."""
    pool = [v for v in values if kind is None or v.kind() in (kind, None)]
    if targets:
        held = [v for v in pool if not v.domains or v.domains & targets]
        pool = held or pool
    if not pool:
        return None
    asked = relations.embedder.embed_cached([p for p in phrases if p.strip()] or ["value"])

    def score(value: ValueRelation) -> float:
        similarity = float(np.max(relations.vectors(value.iri, "forward") @ asked.T))
        typed = 0.0 if value.kind() == kind or kind is None else -0.2
        return similarity + LEXICAL_WEIGHT * _lexical(words, value.label) + typed

    return max(pool, key=score)


def _last_types(triplets: Triplets, relations: RelationVectors) -> set[str] | None:
    """The target's node types from the last triplet's relation (its range, or domain walked back)."""
    for triplet in reversed(triplets.triplets):
        if triplet.relation_iri is None:
            continue
        forward = triplet.tail.is_variable and triplet.tail.text == triplets.target
        shares = relations.end_types.get((triplet.relation_iri, forward), {})
        return set(shares) or None
    return None


def add_form(triplets: Triplets, cue: FormCue, question: str, values: Sequence[ValueRelation],
             relations: RelationVectors, targets: set[str] | None = None) -> None:
    """Turn ``cue`` into ``triplets.form`` (and the value triplets it needs) for ``triplets.target``."""
    target = triplets.target or "?x"
    targets = targets if targets is not None else _last_types(triplets, relations)
    literal = {v.iri for v in values}
    asks_value = bool(triplets.triplets) and triplets.triplets[-1].relation_iri in literal \
        and triplets.triplets[-1].tail.text == target
    triplets.form.form = Form.LIST if asks_value and cue.form == Form.COUNT else cue.form
    if cue.form == Form.BOOLEAN and not triplets.form.choices and not cue.filters and cue.order is None:
        triplets.form.form = Form.LIST  # one name and nothing to compare: no yes/no to decide, list what holds
    words = [w for w in question.casefold().split() if w.isalpha()]
    if cue.order is not None and not asks_value:
        phrases = [f"{cue.order.noun} {' '.join(cue.order.hints)}".strip(), " ".join(cue.order.hints),
                   mask_all(question, cue.choices, PLACEHOLDER)]
        chosen = choose_value_relation(cue.order.kind, phrases, [*words, *cue.order.hints], targets, values,
                                       relations)
        if chosen is not None:
            _value_triplet(triplets, target, chosen, "?v")
            triplets.form.order_by.append(OrderBy("?v", cue.order.direction))
            triplets.form.limit = 1 if cue.superlative or cue.choices else None
    for number, flt in enumerate(cue.filters if not asks_value else [], start=1):
        phrases = [f"{flt.context} {' '.join(flt.hints)}".strip(), f"{flt.phrase} {' '.join(flt.hints)}", question]
        chosen = choose_value_relation(flt.kind, phrases, [*flt.context.split(), *flt.hints] or words, targets, values,
                                       relations)
        if chosen is not None:
            _value_triplet(triplets, target, chosen, f"?f{number}")
            triplets.form.filters.append(ValueFilter(f"?f{number}", flt.op, _in_stored_unit(flt, chosen)))


def _value_triplet(triplets: Triplets, target: str, chosen: ValueRelation, var: str) -> None:
    triplets.triplets.append(Triplet(Term("variable", target), chosen.label, Term("variable", var),
                                     relation_iri=chosen.iri))


def boolean_reading(question: str, kb: KnowledgeBase, mentions: Sequence[Mention], index: LabelIndex,
                    relations: RelationVectors, settings: ScoringSettings,
                    chaining: Callable[[], object], value_of: Callable[[str], str | None] = lambda _: None,
                    ) -> tuple[RelationPath, Mention, Mention] | None:
    """A yes/no question about two named nodes: the best-scored path from one whose end has the other's
    node type (any end on an untyped KB); the other becomes the choice the ``ASK`` tests.  When the other
    is a class-like value (``value_of``: the one relation into it), naming it says the hop along that
    relation ("is X a **goalkeeper**": ``X position Goalkeeper``), even where X has no such edge ("is
    X **vegetarian**" of a dish with no diet: the ``ASK`` says no)."""
    named = [m for m in mentions if m.nodes][:3]
    literal = {r.iri for r in kb.schema.relations if r.kind == "literal"}
    best: tuple[float, RelationPath, Mention, Mention] | None = None
    for source, other in itertools.permutations(named, 2):
        if source.overlaps(other):
            continue
        hidden = sorted([source, other], key=lambda m: m.start)
        scorer = QuestionScorer(mask_all(question, hidden, PLACEHOLDER), relations, settings, PLACEHOLDER,
                                hidden.index(source))
        wanted = set(index.types_of(other.nodes[0]))
        implied = value_of(other.nodes[0])
        for node in source.nodes[:BOOLEAN_NODES]:
            for path in _boolean_paths(kb, node, implied, index, relations, chaining):
                last = path.hops[-1]
                if last.relation in literal:
                    continue  # a value is never the named node the question asks about
                ends = set(relations.end_types.get((last.relation, last.forward), {}))
                if wanted and ends and not wanted & ends:
                    continue
                scored = scorer.score(path)
                if implied and path.hops == (Hop(implied, True),) and not scored.score >= IMPLIED_HOP:
                    scored.score = IMPLIED_HOP
                if math.isfinite(scored.score) and (best is None or scored.score > best[0]):
                    best = (scored.score, scored, source, other)
    return None if best is None else best[1:]


def _boolean_paths(kb: KnowledgeBase, node: str, implied: str | None, index: LabelIndex,
                   relations: RelationVectors, chaining: Callable[[], object]) -> list[RelationPath]:
    """The paths from ``node``, plus the hop along ``implied`` when the node has none but is of a type
    that has it (its absence is the answer "no")."""
    paths = enumerate_paths(kb, node, chaining=chaining())  # type: ignore[arg-type]
    hop = Hop(implied, True) if implied else None
    if hop is not None and not any(p.hops == (hop,) for p in paths):
        holders = set(relations.end_types.get((hop.relation, False), {}))
        if holders & set(index.types_of(node)):
            paths.append(RelationPath(node, (hop,)))
    return paths
