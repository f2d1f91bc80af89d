"""Offline path scoring: how well a relation path says what the question asks (see DEVELOPERS.md).

Paths come from :mod:`sparqlqa.strategies.offline.paths`; each unit of a path is aligned to its own
question span and scored by embedding similarity, with the weights of :class:`ScoringSettings`.
"""

from __future__ import annotations

__all__ = ["QuestionScorer", "RelationVectors", "end_type_shares", "has_round_trip"]

import itertools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from sparqlqa.english import STOPWORDS, WH_CLASSES, ScoringSettings, singular
from sparqlqa.kb.schema import RelationInfo, Schema, humanize, local_name
from sparqlqa.strategies.offline.mentions import words_of
from sparqlqa.strategies.offline.question import (
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

from sparqlqa.strategies.offline.paths import Hop, RelationPath, Unit, path_text, segmentations


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

    def __init__(self, schema: Schema, embedder: Embedder,
                 embed: Callable[[str, list[str]], np.ndarray] | None = None) -> None:
        """``embed(name, texts)`` embeds the relation texts (``name`` "relations") and type labels ("types");
        the offline strategy passes :func:`~sparqlqa.vectors.text_vectors.stored_text_vectors`, so a KB
        generation's are embedded once, not at every process start."""
        embed = embed or (lambda _name, texts: embedder.embed(texts))
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
        vectors = embed("relations", flat) if flat else np.zeros((0, embedder.dimension), dtype=np.float32)
        self._row = {t: i for i, t in enumerate(flat)}
        self._matrix = vectors
        self.schema = schema
        self.classes = [t.iri for t in schema.types]
        self.class_vectors = embed("types", [schema.type_label(t) for t in self.classes]) \
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


def _exact_class(schema: Schema, phrase: str | None) -> str | None:
    """The KB type ``phrase`` names by its label or local name, in the singular or the plural ("dishes"
    → Dish); None when it names none exactly (then types are weighed by similarity)."""
    from sparqlqa.kb.labels import resolve_type

    if not phrase or len(schema.types) < 2:
        return None
    words = phrase.split()
    one = singular(words[-1].casefold()) if words else None
    forms = [phrase] + ([" ".join([*words[:-1], one])] if one else [])
    return next((iri for form in forms if (iri := resolve_type(schema, form)) is not None), None)


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
        self._span_vectors = relations.embedder.embed_cached([s.text for s in self.spans]) if self.spans else None
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
        said = self.focus.phrase if self.focus.phrase and self.focus.phrase.casefold() in question.casefold() else None
        self.exact_class = _exact_class(relations.schema, said)  # a noun of the question, not "where" → place
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
                    sims[i] = float((self.relations.embedder.embed_cached(texts) @ self._span_vectors[i]).max())

    def _twice_row(self, unit: Unit) -> np.ndarray:
        """A hop said twice by one "grand-" word: the cosine of the word's rest ("grand**parent**") with
        the relation; -inf for every other span."""
        row = np.full(len(self.spans), -np.inf)
        stems = [(i, stem) for i, s in enumerate(self.spans) if (stem := grand_stem(s.text))]
        if stems:
            vectors = self.relations.embedder.embed_cached([stem for _, stem in stems])
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
            if unit.kind.startswith("round-trip") and not self.cue and self.verb_spans:
                # the main verb alone never says "the same …": "which albums did X **record**" is no
                # trip out along ``record label`` and back, "what position does X **play**" none along
                # ``plays for``; the verb is said by a relation of its own or left unsaid
                row = row.copy()
                row[sorted(self.verb_spans)] = -np.inf
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
            phrase = rels.embedder.embed_cached([self.focus.phrase])[0]
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
        last = path.hops[-1]
        shares = rels.end_types.get((last.relation, last.forward), {})
        if self.exact_class is not None:  # "which **dishes** …" on a KB with a Dish type: that type, exactly
            share = shares.get(self.exact_class, 0.0)
            return self.settings.class_weight * (2 * share - 1) if shares else 0.0
        if self._class_values is None:
            sims = rels.class_vectors @ rels.embedder.embed_cached([self.class_phrase])[0]
            values = sims - sims.mean()
            named = float(values.max()) > self.settings.type_margin
            self._class_values = dict(zip(rels.classes, values.tolist())) if named else {}
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
