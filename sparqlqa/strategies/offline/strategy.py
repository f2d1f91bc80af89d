"""The offline strategy: the same triplets the LLM step would write, from the KB alone.

1. :func:`~sparqlqa.strategies.offline.mentions.detect_mentions` finds the names in the question;
2. :func:`~sparqlqa.strategies.offline.paths.enumerate_paths` lists the 1-3 hop relation paths from each
   named node, :class:`~sparqlqa.strategies.offline.scoring.QuestionScorer` scores them against the question
   (mention masked) with the offline embedding model; two mentions whose paths meet in one
   node make a conjunctive question;
3. the best path becomes a chain of triplets ending in the target variable (close runners-up become
   ``alternatives``), and the normal pipeline (SPARQL, vector ranking, evidence) runs unchanged.

Why it chose what it chose is in :attr:`OfflineTriplets.details`, an
:class:`~sparqlqa.strategies.offline.reasons.OfflineReasons` (mentions, paths with scores, chosen readings),
copied to ``Answer.meta.offline`` by the strategy.
"""

from __future__ import annotations

__all__ = ["MAX_QUESTION_WORDS", "Choice", "OfflineStrategy", "OfflineTriplets", "masked_for", "offline_triplets",
           "relation_vectors"]

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pyoxigraph import NamedNode

import sparqlqa.english as english
from sparqlqa.english import ALTERNATIVE_MARGIN, IMPLIED_HOP, MENTION_WEIGHT, ScoringSettings, foreign_cues
from sparqlqa.kb.data_names import mapped_from_tables
from sparqlqa.kb.labels import LabelIndex, NodeMatch, resolve_type
from sparqlqa.query.built_query import BuiltQuery
from sparqlqa.stages.linking import LinkedConstants
from sparqlqa.stages.modes import Form, TopicMode
from sparqlqa.stages.triplets import Term, Triplet, Triplets
from sparqlqa.strategies.base import FourStep, strategies
from sparqlqa.strategies.offline.foreign import read_as_english, unreadable_note
from sparqlqa.strategies.offline.form_triplets import ValueRelation, add_form, boolean_reading, value_relations
from sparqlqa.strategies.offline.forms import FormCue, detect_form
from sparqlqa.strategies.offline.mentions import PLACEHOLDER, Mention, detect_mentions, mask_all, words_of
from sparqlqa.strategies.offline.paths import RelationPath, SelfChaining, ValueClasses, enumerate_paths
from sparqlqa.strategies.offline.reasons import ChosenReading, OfflineReasons
from sparqlqa.strategies.offline.scoring import QuestionScorer, RelationVectors, has_round_trip
from sparqlqa.strategies.pipeline import build_answer, note_topic

if TYPE_CHECKING:
    import numpy as np

    from sparqlqa.embed.embedders import Embedder
    from sparqlqa.kb.knowledge_base import KnowledgeBase
    from sparqlqa.stages.answer import Answer
    from sparqlqa.stages.execute import Candidates
    from sparqlqa.strategies.pipeline import AskContext

#: mentions (and nodes per mention) whose paths are explored
MAX_MENTIONS = 3
MAX_NODES_PER_MENTION = 3
MAX_ALTERNATIVES = 2
#: longer questions are not path-scored (alignment cost grows with the cube of the span count;
#: the longest STaRK question has 97 words): they get no triplets and are ranked by vectors
MAX_QUESTION_WORDS = 120
#: how many paths per mention are shown in the explanation and tried in conjunctions
SHOWN_PATHS = 8


@dataclass
class OfflineTriplets(Triplets):
    """:class:`Triplets` plus the offline step's reasons (``details``) and its exact node links."""

    details: OfflineReasons = field(default_factory=OfflineReasons)
    links: dict[str, list[NodeMatch]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data["offline"] = self.details.to_dict()
        return data


@dataclass
class Choice:
    """A candidate reading of the question: one path per mention, meeting in the target."""

    paths: list[RelationPath]
    mentions: list[Mention]
    score: float

    def describe(self) -> str:
        return " AND ".join(f"{m.text!r} {p.text}" for m, p in zip(self.mentions, self.paths))


# -- building triplets ------------------------------------------------------------------------------


def _chain(path: RelationPath, constant: Term, prefix: str, target: str, labels: dict[str, str],
           confidence: float) -> tuple[list[Triplet], list[tuple[str, str]]]:
    """The triplets of one path from ``constant`` (its last variable is ``target``), and the pairs of
    terms an out-and-back along one relation keeps apart: "films that share actors with X" are *other*
    films than X, whatever comes after them."""
    triplets = []
    nodes = [constant]
    for number, hop in enumerate(path.hops, start=1):
        last = number == len(path.hops)
        nxt = Term("variable", target if last else f"?{prefix}{number}")
        head, tail = (nodes[-1], nxt) if hop.forward else (nxt, nodes[-1])
        triplets.append(Triplet(head, labels.get(hop.relation, hop.relation), tail,
                                relation_iri=hop.relation, confidence=confidence))
        nodes.append(nxt)
    distinct = [(nodes[i].text, nodes[i + 2].text) for i in range(len(path.hops) - 1)
                if path.hops[i].relation == path.hops[i + 1].relation
                and path.hops[i].forward != path.hops[i + 1].forward]
    return triplets, distinct


def _triplets_for(question: str, choice: Choice, index: LabelIndex, labels: dict[str, str],
                  confidence: float) -> OfflineTriplets:
    target = "?x"
    triplets: list[Triplet] = []
    distinct: list[tuple[str, str]] = []
    links: dict[str, list[NodeMatch]] = {}
    for number, (mention, path) in enumerate(zip(choice.mentions, choice.paths)):
        name = index.label_of(path.start) or mention.text
        links.setdefault(name, [])
        if path.start not in [m.iri for m in links[name]]:
            links[name].append(NodeMatch(path.start, name, mention.score, mention.method))
        prefix = "xyz"[number % 3]
        chain, apart = _chain(path, Term("constant", name), prefix, target, labels, confidence)
        triplets += chain
        distinct += apart
    return OfflineTriplets(question=question, triplets=triplets, target=target, requirements=[],
                           source="offline", notes=[], llm_calls=[], links=links, distinct=distinct)


# -- choosing paths ------------------------------------------------------------------------------------


def _scored_paths(kb: KnowledgeBase, masked: str, mention: Mention, relations: RelationVectors,
                  settings: ScoringSettings, occurrence: int = 0) -> list[RelationPath]:
    """The paths from ``mention``'s nodes, scored against the question with all names masked
    (``occurrence``: which placeholder of ``masked`` stands for ``mention``)."""
    scorer = QuestionScorer(masked, relations, settings, PLACEHOLDER, occurrence)
    chaining = _kb_statistic(kb, "self-chaining hops", lambda: SelfChaining(kb))
    values = _value_classes(kb)
    paths = [_implied(scorer.score(p), values) for node in mention.nodes[:MAX_NODES_PER_MENTION]
             for p in enumerate_paths(kb, node, chaining=chaining)]
    paths = [p for p in paths if math.isfinite(p.score)]
    paths.sort(key=lambda p: (-p.score, len(p.hops), p.arrows()))
    dead = [i for i, p in enumerate(paths[:SHOWN_PATHS]) if has_round_trip(p.hops[:2]) and not _leaves_start(kb, p)]
    return [p for i, p in enumerate(paths) if i not in dead]


def _value_classes(kb: KnowledgeBase) -> ValueClasses:
    """The KB's class-like value nodes (decided lazily, once per opened KB)."""
    return _kb_statistic(kb, "value classes", lambda: ValueClasses(kb))


def _is_implied(path: RelationPath, values: ValueClasses) -> bool:
    """Whether ``path`` is the one hop into a class-like value from the things that have it
    (``Forward <-position-``): naming the value says that hop."""
    return len(path.hops) == 1 and not path.hops[0].forward \
        and values.relation_into(path.start) == path.hops[0].relation


def _implied(path: RelationPath, values: ValueClasses) -> RelationPath:
    """``path`` scored at least :data:`~sparqlqa.english.IMPLIED_HOP` when naming its value says it."""
    if path.score < IMPLIED_HOP and _is_implied(path, values):
        path.parts["said by naming the value"] = IMPLIED_HOP - path.score
        path.score = IMPLIED_HOP
    return path


def _leaves_start(kb: KnowledgeBase, path: RelationPath) -> bool:
    """Whether a path with an out-and-back (``<-r- -r->``) reaches a node other than the one it went out
    from: "who was born in X" read as "born in the birthplace of people born in X" only comes back to X,
    and the compiled query (which keeps the two ends apart) finds nothing."""
    nodes = [str(NamedNode(path.start))] + [f"?n{i}" for i in range(1, len(path.hops) + 1)]
    lines = [f"{nodes[i]} {NamedNode(h.relation)} {nodes[i + 1]} ." if h.forward else
             f"{nodes[i + 1]} {NamedNode(h.relation)} {nodes[i]} ." for i, h in enumerate(path.hops)]
    apart = [f"FILTER({nodes[i]} != {nodes[i + 2]})" for i in range(len(path.hops) - 1)
             if path.hops[i].relation == path.hops[i + 1].relation
             and path.hops[i].forward != path.hops[i + 1].forward]
    return bool(kb.query(BuiltQuery.ask(f"ASK {{ {' '.join(lines + apart)} }}")).boolean)


def _meets(kb: KnowledgeBase, first: RelationPath, second: RelationPath) -> bool:
    """Whether the two paths end in a common node (other than their start nodes)."""
    lines = []
    for name, path in (("a", first), ("b", second)):
        current = str(NamedNode(path.start))
        for number, hop in enumerate(path.hops, start=1):
            nxt = "?t" if number == len(path.hops) else f"?{name}{number}"
            pred = str(NamedNode(hop.relation))
            lines.append(f"{current} {pred} {nxt} ." if hop.forward else f"{nxt} {pred} {current} .")
            current = nxt
    starts = ", ".join(str(NamedNode(p.start)) for p in (first, second))
    return bool(kb.query(BuiltQuery.ask(f"ASK {{ {' '.join(lines)} FILTER(?t NOT IN ({starts})) }}")).boolean)


def masked_for(question: str, mentions: list[Mention], used: list[Mention]) -> tuple[str, list[Mention]]:
    """The question as a reading that starts from ``used`` sees it: those mentions masked, and every
    other mention that looks like a name (so names never count as evidence for a relation), but not a
    lower-case word that merely is some node's label too ("who is the **writer** of X")."""
    hidden = [m for m in mentions if any(m is u for u in used)
              or (m.looks_like_a_name and not any(m.overlaps(u) for u in used))]
    return mask_all(question, hidden, PLACEHOLDER), hidden


def _conjunctions(kb: KnowledgeBase, question: str, mentions: list[Mention],
                  considered: dict[str, list[RelationPath]], relations: RelationVectors,
                  settings: ScoringSettings) -> list[Choice]:
    """Two mentions whose paths (≤ 3 units together) meet in one node."""
    found: list[Choice] = []
    for i, first in enumerate(mentions):
        for second in mentions[i + 1 :]:
            if first.overlaps(second):
                continue
            scorer = QuestionScorer(masked_for(question, mentions, [first, second])[0], relations, settings,
                                    PLACEHOLDER)
            prior = MENTION_WEIGHT * (first.prior + second.prior)
            for a in considered[first.text][:SHOWN_PATHS]:
                for b in considered[second.text][:SHOWN_PATHS]:
                    if len(a.hops) + len(b.hops) > 3 or not _meets(kb, a, b):
                        continue
                    value = _pair_value(scorer, a, b, _value_classes(kb))
                    if math.isfinite(value):
                        found.append(Choice([a, b], [first, second], value + prior))
    return found


def _pair_value(scorer: QuestionScorer, a: RelationPath, b: RelationPath, values: ValueClasses) -> float:
    """How well two paths meeting in the target say the question: every unit on its own span, or a
    class-like value's own hop said by naming it ("how many **goalkeepers** play for X")."""
    value, _ = scorer.align((*_units(a), *_units(b)))
    for said, implied in ((a, b), (b, a)):
        if _is_implied(implied, values):
            value = max(value, scorer.align(_units(said))[0] + IMPLIED_HOP)
    return value


def _units(path: RelationPath) -> tuple[Any, ...]:
    from sparqlqa.strategies.offline.paths import segmentations

    return segmentations(path.hops)[0]


T = TypeVar("T")


def _kb_statistic(kb: KnowledgeBase, name: str, compute: Callable[[], T]) -> T:
    """``compute()`` once per opened KB (and its added ontologies): see :meth:`KnowledgeBase.remember`."""
    return kb.remember(("offline", name, len(kb.manifest.extra.get("ontologies", []))), compute)


def relation_vectors(kb: KnowledgeBase, embedder: Embedder) -> RelationVectors:
    """The KB's relation verbalisations, embedded once per (KB generation, model): kept with the generation
    (:mod:`sparqlqa.vectors.text_vectors`) and remembered by the opened KB."""
    from sparqlqa.vectors.text_vectors import stored_text_vectors

    def embed(name: str, texts: list[str]) -> np.ndarray:
        return stored_text_vectors(kb, name, texts, embedder)

    return _kb_statistic(kb, f"relation vectors {embedder.model_id}",
                        lambda: RelationVectors(kb.schema, embedder, embed))


def _choices(kb: KnowledgeBase, question: str, mentions: list[Mention], relations: RelationVectors,
             settings: ScoringSettings) -> tuple[list[Choice], dict[str, list[RelationPath]]]:
    considered: dict[str, list[RelationPath]] = {}
    choices: list[Choice] = []
    mentions = mentions[:MAX_MENTIONS]
    for mention in mentions:
        masked, hidden = masked_for(question, mentions, [mention])
        occurrence = sum(other.end <= mention.start for other in hidden)
        paths = _scored_paths(kb, masked, mention, relations, settings, occurrence)
        considered[mention.text] = paths
        prior = MENTION_WEIGHT * mention.prior
        choices += [Choice([p], [mention], p.score + prior) for p in paths]
    if len(mentions) > 1:
        choices += _conjunctions(kb, question, mentions, considered, relations, settings)
    choices.sort(key=lambda c: (-c.score, sum(len(p.hops) for p in c.paths), c.describe()))
    return choices, considered


def _confidences(choices: list[Choice], temperature: float = 0.05) -> list[float]:
    """A softmax over choice scores: how sure the step is of each reading."""
    if not choices:
        return []
    top = choices[0].score
    weights = [math.exp((c.score - top) / temperature) for c in choices]
    total = sum(weights)
    return [w / total for w in weights]


def _details(mentions: list[Mention], considered: dict[str, list[RelationPath]], choices: list[Choice],
             confidences: list[float], elapsed_ms: float) -> OfflineReasons:
    return OfflineReasons(
        mentions=list(mentions),
        paths={text: list(paths[:SHOWN_PATHS]) for text, paths in considered.items()},
        chosen=[ChosenReading(c.describe(), c.score, conf)
                for c, conf in zip(choices[: 1 + MAX_ALTERNATIVES], confidences)],
        elapsed_ms=elapsed_ms,
    )


def offline_triplets(question: str, kb: KnowledgeBase, *, embedder: Embedder | None = None,
                     settings: ScoringSettings | None = None, use_brackets: bool = True) -> OfflineTriplets:
    """Stage 1 without an LLM: mentions → scored relation paths → triplets (best first, runners-up as
    ``alternatives``).  Never raises for a question it cannot read: the result then has no triplets
    and a note, and the pipeline ranks by vectors."""
    from sparqlqa.embed.embedders import get_embedder

    if len(question.split()) > MAX_QUESTION_WORDS:
        return OfflineTriplets(question=question, triplets=[], target=None, requirements=[], source="offline",
                               notes=[f"offline triplets: the question has more than {MAX_QUESTION_WORDS} words; "
                                      "ranked by vectors only"], llm_calls=[])
    started = time.perf_counter()
    embedder = embedder or get_embedder()
    settings = settings or ScoringSettings()
    index = LabelIndex.for_kb(kb)
    values_of = _value_classes(kb)
    mentions = detect_mentions(question, index, use_brackets=use_brackets,
                               is_value=lambda node: values_of.relation_into(node) is not None)
    relations = relation_vectors(kb, embedder)
    cue = detect_form(question, mentions)
    values = _kb_statistic(kb, "value relations", lambda: value_relations(kb))
    if not cue.plain:
        special = _form_reading(question, kb, cue, mentions, index, relations, settings, values)
        if special is not None:
            return special
    choices, considered = _choices(kb, question, mentions, relations, settings)
    if cue.order is not None or cue.filters or (cue.form == Form.COUNT and not english.VALUE_COUNT_PATTERN.search(
            question)):  # things counted, ordered or filtered by a value, not the value itself
        literal = {v.iri for v in values}
        choices = [c for c in choices if c.paths[0].hops[-1].relation not in literal] or choices
    confidences = _confidences(choices)
    elapsed = (time.perf_counter() - started) * 1000
    details = _details(mentions, considered, choices, confidences, elapsed)
    if not choices:
        why = "no KB node is named in the question" if not mentions else \
            "no relation path from the named nodes matches the question"
        return OfflineTriplets(question=question, triplets=[], target=None, requirements=[], source="offline",
                               notes=[f"offline triplets: {why}"], llm_calls=[], details=details)
    labels = relations.labels
    best = _triplets_for(question, choices[0], index, labels, confidences[0])
    for choice, confidence in zip(choices[1 : 1 + MAX_ALTERNATIVES], confidences[1:]):
        if choice.score >= choices[0].score - ALTERNATIVE_MARGIN:
            best.alternatives.append(_triplets_for(question, choice, index, labels, confidence))
    best.details = details
    if not cue.plain:
        for option in [best, *best.alternatives]:
            add_form(option, cue, question, values, relations)
    return best


def _form_reading(question: str, kb: KnowledgeBase, cue: FormCue, mentions: list[Mention], index: LabelIndex,
                  relations: RelationVectors, settings: ScoringSettings,
                  values: list[ValueRelation]) -> OfflineTriplets | None:
    """The readings a path from one name does not give: a comparison of named choices ("A or B"), a
    yes/no on one name's own value ("was X released in 2010") or between two names, an ordering or filter
    over a node type no name is given for."""
    details = OfflineReasons(form=cue.form, order=cue.order.word if cue.order is not None else None,
                             filters=[f.phrase for f in cue.filters])
    if cue.choices:
        return _named_reading(question, cue, cue.choices, index, relations, values, details)
    named = [m for m in mentions if m.nodes and m.looks_like_a_name]
    if cue.form == Form.BOOLEAN and len(named) == 1 and cue.filters:
        return _named_reading(question, cue, named, index, relations, values, details)
    if cue.form == Form.BOOLEAN and len([m for m in mentions if m.nodes]) > 1:
        return _pair_reading(question, kb, mentions, index, relations, settings, details)
    if [m for m in mentions if m.looks_like_a_name] or (cue.order is None and not cue.filters):
        return None
    return _typed_reading(question, kb, cue, relations, values, details)


def _typed_reading(question: str, kb: KnowledgeBase, cue: FormCue, relations: RelationVectors,
                   values: list[ValueRelation], details: OfflineReasons) -> OfflineTriplets | None:
    """An ordering or filter over the node type the question names ("which **stadium** has the largest
    capacity"); when it names none ("**who** scored the most goals" on a KB without a person type), over
    the things that have the value its words choose, typed by that value's one subject type if it has one."""
    type_iri = _named_type(kb, question)
    result = _empty(question, details)
    add_form(result, cue, question, values, relations, targets={type_iri} if type_iri else None)
    if not result.triplets:
        return None
    if type_iri is None:
        chosen = next((v for v in values if v.iri == result.triplets[0].relation_iri), None)
        type_iri = next(iter(chosen.domains)) if chosen is not None and len(chosen.domains) == 1 else None
    result.target_type = kb.schema.type_label(type_iri) if type_iri else None
    return result


def _named_reading(question: str, cue: FormCue, named: list[Mention], index: LabelIndex, relations: RelationVectors,
                   values: list[ValueRelation], details: OfflineReasons) -> OfflineTriplets | None:
    """The named nodes themselves are the target's choices; the form compares their values."""
    result = _empty(question, details)
    targets: set[str] = set()
    for mention in named:
        label = index.label_of(mention.nodes[0]) or mention.text
        result.links[label] = [NodeMatch(mention.nodes[0], label, mention.score, mention.method)]
        result.form.choices.append(label)
        targets |= set(index.types_of(mention.nodes[0]))
    add_form(result, cue, question, values, relations, targets=targets or None)
    return result if result.triplets else None


def _pair_reading(question: str, kb: KnowledgeBase, mentions: list[Mention], index: LabelIndex,
                  relations: RelationVectors, settings: ScoringSettings,
                  details: OfflineReasons) -> OfflineTriplets | None:
    """A yes/no between two names: the path from one, the other the choice the ``ASK`` tests."""
    chaining = lambda: _kb_statistic(kb, "self-chaining hops", lambda: SelfChaining(kb))  # noqa: E731
    reading = boolean_reading(question, kb, mentions, index, relations, settings, chaining,
                              _value_classes(kb).relation_into)
    if reading is None:
        return None
    path, source, other = reading
    result = _triplets_for(question, Choice([path], [source], path.score), index, relations.labels, 1.0)
    label = index.label_of(other.nodes[0]) or other.text
    result.links.setdefault(label, []).append(NodeMatch(other.nodes[0], label, other.score, other.method))
    result.form.form, result.form.choices = Form.BOOLEAN, [label]
    result.details = replace(details, chosen=[ChosenReading(f"{source.text!r} {path.text} = {label!r}?", path.score)])
    return result


def _empty(question: str, details: OfflineReasons) -> OfflineTriplets:
    return OfflineTriplets(question=question, triplets=[], target="?x", requirements=[], source="offline",
                           notes=[], llm_calls=[], details=details)


def _named_type(kb: KnowledgeBase, question: str) -> str | None:
    """The first question word that names a node type of the KB ("which **films** …", "which **city** …")."""
    for word in words_of(question):
        text = word.text.casefold()
        for form in english.noun_forms(text):
            iri = resolve_type(kb.schema, form) if len(form) > 2 else None
            if iri is not None:
                return iri
    first = words_of(question)[:1]
    wh = english.WH_CLASSES.get(first[0].text.casefold()) if first else None
    return resolve_type(kb.schema, wh) if wh else None  # "who is the youngest …": a person


# -- the strategy ------------------------------------------------------------------------------------


@strategies.register("offline")
class OfflineStrategy(FourStep):
    """4StepFocus with the offline triplet step and no LLM anywhere (no rerank)."""

    needs_llm: ClassVar[bool] = False
    rerank_enabled: ClassVar[bool] = False

    def run(self, ctx: AskContext) -> Answer:
        """A question in a language the reader has no cue words for is not answered (issue 37): a note says
        so, no vector-similar nodes stand in for an answer.  A graph mapped from tables is read as tables first
        (:mod:`.tables.answer`), then as paths; when neither reading holds there, the answer says so rather
        than offer similar nodes as answers."""
        if ctx.language is not None and not ctx.language.english and foreign_cues(ctx.language.code) is None:
            ctx.note(unreadable_note(ctx.language.code))
            return build_answer(ctx)
        if not mapped_from_tables(ctx.kb):  # the table reader is not even imported (issue 36)
            return super().run(ctx)
        from sparqlqa.strategies.offline.tables.answer import honest, table_answer

        answer = table_answer(ctx)
        if answer is not None:
            return answer
        return honest(ctx, super().run(ctx))

    def make_triplets(self, ctx: AskContext) -> Triplets:
        question = ctx.question
        if ctx.language is not None and not ctx.language.english:  # read as English (strategies/offline/foreign)
            question = read_as_english(question, ctx.language.code, ctx.kb) or question
            ctx.note(f"read offline as: {question}")
        triplets = offline_triplets(question, ctx.kb, embedder=ctx.word_embedder)
        if isinstance(triplets, OfflineTriplets):  # why it chose what it chose: Answer.meta.offline
            ctx.meta["offline"] = triplets.details
        return triplets

    def narrow(self, ctx: AskContext, triplets: Triplets | None,
               ) -> tuple[LinkedConstants | None, Candidates | None]:
        """Stage 2 with the step's own exact links (the nodes it walked from), tier by tier."""
        if not isinstance(triplets, OfflineTriplets) or not triplets.triplets:
            return super().narrow(ctx, triplets)
        from sparqlqa.stages.execute import ExecuteOptions, drop_constant_nodes, find_candidates

        linked: LinkedConstants | None = None
        candidates: Candidates | None = None
        for number, option in enumerate([triplets, *triplets.alternatives]):
            if not isinstance(option, OfflineTriplets):
                continue
            linked = LinkedConstants(links=dict(option.links))
            with ctx.stage("sparql"):
                candidates = find_candidates(option, linked, ctx.kb, ctx.options or ExecuteOptions())
            ctx.queries.extend(q.at("sparql") for q in candidates.queries)
            note_topic(ctx, linked)
            if ctx.topic != TopicMode.KEEP:
                drop_constant_nodes(candidates, linked)
            if candidates.items:
                if number:
                    ctx.note(f"the best path found no candidates; alternative {number} did")
                break
        for text in candidates.notes if candidates is not None else []:
            ctx.note(text)
        return linked, candidates
