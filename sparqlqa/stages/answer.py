"""The result of :func:`sparqlqa.ask`: ranked answers with evidence, and every stage's record.

An :class:`Answer` keeps what each stage produced (triplets, linked constants,
candidates), every SPARQL query that ran, every LLM call, human-readable notes
about anything that degraded, and per-stage timings.  :meth:`Answer.to_dict`
is JSON-serialisable (the evaluation harness writes one per question).

>>> item = AnswerItem(iri="https://example.org/alien", label="Alien", type=None, score=0.9,
...                   tier=0, source="filtered", evidence=None, snippet="Alien (1979) ...")
>>> answer = Answer(question="q", kb="movies", strategy="vss", items=[item])
>>> answer.to_dict()["items"][0]["rank"], answer.top.label, answer.to_dict()["items"][0]["matched"]
(1, 'Alien', True)
"""

from __future__ import annotations

__all__ = ["FILL_IN_MARK", "Answer", "AnswerItem", "AnswerMeta", "Ranking", "StageRecord", "answer_table",
           "headline", "to_jsonable"]

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from sparqlqa.english import plural
from sparqlqa.kb.naming import display_name
from sparqlqa.kb.records import JsonRecord, QueryRecord
from sparqlqa.kb.terms import is_value_key
from sparqlqa.language import Language
from sparqlqa.stages.modes import Form, ItemSource, RerankMode, TopicMode
from sparqlqa.stages.rerank import RerankResult
from sparqlqa.stages.table import Table

if TYPE_CHECKING:
    from sparqlqa.llm import LLMCall
    from sparqlqa.stages.execute import Candidates, Evidence
    from sparqlqa.stages.linking import LinkedConstants
    from sparqlqa.stages.triplets import Triplets

#: what the terminal and the page call an item that did not (vector or model fill-in)
FILL_IN_MARK = "similar, not matched"


@dataclass
class AnswerItem:
    """One scored node, from the ranking (stage 3) to the printed answer: the one scored type.

    Stage 3 makes it (:meth:`ranked`: ``iri``, ``score``, ``source``, ``tier``, ``evidence``), a rerank
    rescores it in place (:meth:`rescore`), and the answer builder
    (:func:`sparqlqa.strategies.pipeline.build_answer`) fills in ``label``, ``type``, ``type_label`` and
    ``snippet``.  ``source`` is ``filtered`` (found by the SPARQL stage), ``vector`` (added
    from the global vector ranking) or ``model-knowledge`` (FiSKE's fallback); ``tier`` is the SPARQL
    relaxation tier (0 = every kept triplet holds), ``None`` for vector additions.  ``scores``
    keeps each stage's score (``vss``, ``listwise``, ``pointwise``, ``llm``); ``score`` is the latest one.
    :attr:`matched`: the item satisfied the SPARQL that ran (``source="filtered"``); anything else is
    fill-in, similar but not matched.  ``rerank_reason``: why a listwise rerank put a fill-in item above
    a matched one (the only way fill-in ranks above an exact answer).

    >>> item = AnswerItem.ranked("http://x/a", 0.5, "vector")
    >>> item.rescore("listwise", 1.5)
    >>> item.score, item.scores
    (1.5, {'vss': 0.5, 'listwise': 1.5})
    """

    iri: str
    label: str = ""
    type: str | None = None
    score: float = 0.0
    tier: int | None = None
    source: ItemSource = ItemSource.VECTOR
    evidence: Evidence | None = None
    snippet: str = ""
    type_label: str | None = None
    scores: dict[str, float] = field(default_factory=dict)
    rerank_reason: str | None = None
    #: a KB group's answer: for each evidence triple, the member KBs that state it (:mod:`sparqlqa.kb.group`)
    evidence_kbs: list[list[str]] | None = None

    @classmethod
    def ranked(cls, iri: str, score: float, source: ItemSource | str, tier: int | None = None,
               evidence: Evidence | None = None) -> AnswerItem:
        """A node as stage 3 ranks it: its similarity is its score and ``scores["vss"]``."""
        return cls(iri=iri, score=score, tier=tier, source=ItemSource(source), evidence=evidence,
                   scores={"vss": score})

    def __post_init__(self) -> None:
        self.source = ItemSource(self.source)  # one of its words, read as the enum (JSON: the same string)

    def rescore(self, stage: str, score: float, reason: str | None = None) -> None:
        """A later stage's score (kept in ``scores[stage]``) becomes the score; ``reason``: a rerank's why."""
        self.scores[stage] = score
        self.score = score
        if reason is not None:
            self.rerank_reason = reason

    @property
    def matched(self) -> bool:
        """Whether the item satisfied the query (found by the SPARQL stage), not vector or model fill-in."""
        return self.source == ItemSource.FILTERED

    @property
    def kind(self) -> str:
        """``node`` (``iri`` is an IRI) or ``value`` (``iri`` is a literal in N-Triples form, ``label`` its
        lexical form, ``type`` its datatype)."""
        return "value" if is_value_key(self.iri) else "node"

    def evidence_triples(self) -> list[tuple[str, str, str]]:
        """The (s, p, o) IRIs connecting this answer to the question's constants."""
        if self.evidence is None:
            return []
        return [(s, p, o) for s, p, o in self.evidence.triples]

    def evidence_text(self, labels: Mapping[str, str]) -> list[str]:
        """Each evidence triple as ``subject —relation→ object`` with labels (and ``(in KB)`` in a group)."""
        kbs = self.evidence_kbs or []
        return [f"{_name(s, labels)} —{_name(p, labels)}→ {_name(o, labels)}"
                + (f" (in {', '.join(kbs[n])})" if n < len(kbs) and kbs[n] else "")
                for n, (s, p, o) in enumerate(self.evidence_triples())]

    def to_dict(self, rank: int | None = None, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
        data: dict[str, Any] = {"rank": rank} if rank is not None else {}
        data.update(iri=self.iri, kind=self.kind, label=self.label, type=self.type, type_label=self.type_label,
                    score=round(float(self.score), 6), tier=self.tier, source=self.source, matched=self.matched,
                    scores={k: round(float(v), 6) for k, v in self.scores.items()},
                    evidence=to_jsonable(self.evidence),
                    evidence_text=self.evidence_text(labels or {}), snippet=self.snippet)
        if self.rerank_reason:
            data["rerank_reason"] = self.rerank_reason
        if self.evidence_kbs is not None:
            data["evidence_kbs"] = self.evidence_kbs
        return data


@dataclass
class Ranking:
    """Stage 3's result (:mod:`sparqlqa.stages.ranking`): ordered nodes and how the order was made."""

    query_text: str
    items: list[AnswerItem]
    target_type: str | None = None
    filtered: int = 0
    added: int = 0
    notes: list[str] = field(default_factory=list)
    elapsed_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"query_text": self.query_text, "target_type": self.target_type, "filtered": self.filtered,
                "added": self.added, "notes": list(self.notes), "elapsed_ms": round(self.elapsed_ms, 3),
                "top": [{"iri": n.iri, "score": round(n.score, 6), "source": n.source, "tier": n.tier}
                        for n in self.items[:20]]}


class StageRecord(Protocol):
    """A stage's or a strategy's own record in :attr:`AnswerMeta.records` (a :class:`RerankResult`, FiSKE's
    ``FiskeRun``): a typed object whose JSON form is ``to_dict()``."""

    def to_dict(self) -> dict[str, Any]: ...


@dataclass
class AnswerMeta(JsonRecord):
    """How an answer was made: the settings, and each stage's own record as the typed object it is.

    Its JSON form (``answer.to_dict()["meta"]``) is the flat mapping it always was: ``strategy``, ``k``,
    ``rerank``, ``llm``, ``embedder`` (``reader`` when set), ``ranking``, ``<stage>_result`` per record,
    the strategy's :attr:`extra` entries, ``exact``, ``topic``.  ``answer.meta["ranking"]`` still reads
    that JSON form, with a :class:`DeprecationWarning`: read ``answer.meta.ranking`` (a :class:`Ranking`).

    >>> meta = AnswerMeta(strategy="vss", embedder="fake", ranking=Ranking("q", []))
    >>> meta.ranking.filtered, list(meta.to_dict())[:6]
    (0, ['strategy', 'k', 'rerank', 'llm', 'embedder', 'ranking'])
    """

    strategy: str = ""
    k: int = 20
    rerank: str = RerankMode.LISTWISE
    #: the LLM's spec (``None``: no LLM), the ranking embedder's model id, the word reader's (when apart)
    llm: str | None = None
    embedder: str = ""
    reader: str | None = None
    ranking: Ranking | None = None
    #: each stage's own record, by stage, in the order they ran: ``rerank`` (a :class:`RerankResult`),
    #: ``fiske`` (FiSKE's run); JSON key ``<stage>_result``
    records: dict[str, StageRecord] = field(default_factory=dict)
    #: the strategy's own entries, JSON keys as they are: FiSKE's ``answer_source`` (text), the offline
    #: strategy's ``offline`` (why it read the question as it did: mentions, paths, chosen readings)
    extra: dict[str, object] = field(default_factory=dict)
    #: ``--exact`` and ``--topic`` as the answer's last step applied them
    exact: bool = False
    topic: str = TopicMode.AUTO

    @property
    def rerank_result(self) -> RerankResult | None:
        """The rerank's record, when a rerank ran."""
        record = self.records.get("rerank")
        return record if isinstance(record, RerankResult) else None

    @property
    def answer_source(self) -> str | None:
        """FiSKE: where the answer came from (``kb-routes``, ``model-knowledge``, ``none``)."""
        source = self.extra.get("answer_source")
        return source if isinstance(source, str) else None

    @property
    def offline(self) -> JsonRecord | None:
        """The offline strategy's reasons, why it read the question as it did: an
        :class:`~sparqlqa.strategies.offline.reasons.OfflineReasons`, read by attribute (``form``, ``order``,
        ``filters``, ``mentions``, ``paths``, ``chosen[i].reading`` / ``.score`` / ``.confidence``,
        ``elapsed_ms``); its ``to_dict()`` is the JSON ``meta.offline``.  Typed here by its base
        (``stages`` sits below ``strategies``); ``meta.offline["chosen"]`` still reads the JSON form,
        deprecated.  ``None`` when another strategy answered."""
        details = self.extra.get("offline")
        return details if isinstance(details, JsonRecord) else None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"strategy": self.strategy, "k": self.k, "rerank": self.rerank, "llm": self.llm,
                                "embedder": self.embedder}
        if self.reader is not None:
            data["reader"] = self.reader
        if self.ranking is not None:
            data["ranking"] = self.ranking.to_dict()
        data.update({f"{stage}_result": to_jsonable(record) for stage, record in self.records.items()})
        data.update({key: to_jsonable(value) for key, value in self.extra.items()})
        data.update(exact=self.exact, topic=self.topic)
        return data


@dataclass
class Answer:
    """Everything :func:`sparqlqa.ask` found out about one question.

    ``labels`` maps every IRI mentioned in evidence to its label; ``meta`` (an :class:`AnswerMeta`)
    records the settings (strategy, k, rerank mode, LLM spec, embedder) and each stage's own record.
    ``pending_llm`` lists LLM cache keys that were missing in ``--llm-cache only``
    mode (their stage degraded; re-run after importing the answers).
    """

    question: str
    kb: str
    strategy: str
    items: list[AnswerItem] = field(default_factory=list)
    triplets: Triplets | None = None
    linked: LinkedConstants | None = None
    candidates: Candidates | None = None
    llm_calls: list[LLMCall] = field(default_factory=list)
    queries: list[QueryRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    meta: AnswerMeta = field(default_factory=AnswerMeta)
    pending_llm: list[str] = field(default_factory=list)
    #: the answer's form: "list" | "count" | "boolean" | "value" | "table" (:mod:`sparqlqa.stages.forms`);
    #: ``value``: the count (an int), the yes/no (a bool) or the one value's lexical form (a str) for those
    #: forms, None for a list or a table
    form: str = Form.LIST
    value: int | bool | str | None = None
    #: the answer as a table (:class:`~sparqlqa.stages.table.Table`): every answer has one — a query's own
    #: columns and rows, or its items as one column, its count or yes/no as one cell (:func:`answer_table`)
    table: Table | None = None
    #: the question's language (``{"code": "de", "source": "detected" | "given"}`` in JSON; issue 37)
    lang: Language | None = None
    #: the language tag of each label in :attr:`labels` that has one (untagged labels are not listed)
    labels_lang: dict[str, str] = field(default_factory=dict)

    @property
    def headline(self) -> str:
        """One line for people: "3 films: A, B, C", "4 films: …", "yes — <evidence>", "no — …"."""
        return headline(self)

    @property
    def top(self) -> AnswerItem | None:
        """The best answer, if any."""
        return self.items[0] if self.items else None

    @property
    def degraded(self) -> bool:
        """True when a stage fell back (see :attr:`notes`)."""
        return bool(self.notes)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy (``json.dumps(answer.to_dict())`` always works)."""
        return {
            "question": self.question,
            "kb": self.kb,
            "strategy": self.strategy,
            "form": self.form,
            "value": self.value,
            "headline": self.headline,
            "table": (self.table or answer_table(self)).to_dict(),
            "items": [item.to_dict(rank, self.labels) for rank, item in enumerate(self.items, start=1)],
            "triplets": to_jsonable(self.triplets),
            "linked": to_jsonable(self.linked),
            "candidates": to_jsonable(self.candidates),
            "llm_calls": [to_jsonable(call) for call in self.llm_calls],
            "queries": to_jsonable(self.queries),
            "notes": list(self.notes),
            "timings_ms": {k: round(float(v), 3) for k, v in self.timings_ms.items()},
            "labels": dict(self.labels),
            "meta": self.meta.to_dict(),
            "pending_llm": list(self.pending_llm),
            "lang": self.lang.to_dict() if self.lang is not None else None,
            "labels_lang": dict(self.labels_lang),
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)


def to_jsonable(obj: Any) -> Any:
    """Objects → JSON types: ``to_dict()`` when present, dataclasses field by field, terms as text."""
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return obj if obj == obj and abs(obj) != float("inf") else None
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        return to_jsonable(to_dict())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalars
        return to_jsonable(obj.item())
    value = getattr(obj, "value", None)  # pyoxigraph terms
    return value if isinstance(value, str) else str(obj)


#: answers named in a headline
HEADLINE_ITEMS = 5


def _listing(items: list[AnswerItem], total: int | None = None) -> str:
    names = ", ".join(item.label for item in items[:HEADLINE_ITEMS])
    more = (total if total is not None else len(items)) - min(len(items), HEADLINE_ITEMS)
    return names + (f", … ({more} more)" if more > 0 else "")


def headline(answer: Answer) -> str:
    """The one-line answer (see :attr:`Answer.headline`).

    >>> a = AnswerItem("http://x/a", "Alien", None, 1.0, 0, "filtered", None, "", type_label="film")
    >>> b = AnswerItem("http://x/b", "Aliens", None, 1.0, 0, "filtered", None, "", type_label="film")
    >>> headline(Answer("q", "kb", "offline", items=[a, b]))
    '2 films: Alien, Aliens'
    >>> headline(Answer("q", "kb", "offline", items=[a], form="boolean", value=True))
    'yes — Alien'
    """
    if answer.form in (Form.VALUE, Form.TABLE) and answer.table is not None:
        return _table_headline(answer.table)
    matched = [i for i in answer.items if i.matched]
    shown = matched or answer.items
    if answer.form == Form.BOOLEAN:
        if not shown:
            return "yes" if answer.value else "no"
        evidence = shown[0].evidence_text(answer.labels)
        one = evidence[0] if evidence else shown[0].label
        why = one if answer.value or len(shown) == 1 else _listing(shown)
        return f"{'yes' if answer.value else 'no'} — {why}"
    types = [i.type_label for i in shown if i.type_label]
    noun = max(set(types), key=types.count) if types else "answer"
    if answer.form == Form.COUNT:
        count = int(answer.value or 0)
        return f"{count} {plural(noun, count)}" + (f": {_listing(shown, count)}" if shown and count else "")
    if not shown:
        return "no answer found"
    if len(matched) == 1 or not matched:
        return shown[0].label
    return f"{len(matched)} {plural(noun, len(matched))}: {_listing(matched)}"


def _table_headline(table: Table) -> str:
    """A value answer's value, or a table's size and first rows: "3 rows: Joe, 52; Ann, 41; …"."""
    rows = table.text_rows()
    if not rows:
        return "no answer found"
    if len(rows) == 1 and table.width == 1:
        return rows[0][0]
    shown = "; ".join(", ".join(row) for row in rows[:HEADLINE_ITEMS])
    more = len(rows) - min(len(rows), HEADLINE_ITEMS)
    return f"{len(rows)} {plural('row', len(rows))}: {shown}" + (f"; … ({more} more)" if more > 0 else "")


def answer_table(answer: Answer) -> Table:
    """The table of an answer that has no query table: a count or yes/no as one cell, a list as one column
    of its matched items (of every item, marked not matched, when none matched), in the answer's order.

    >>> a = AnswerItem("http://x/a", "Alien", None, 1.0, 0, "filtered", None, "", type_label="film")
    >>> answer_table(Answer("q", "kb", "offline", items=[a])).to_dict()["rows"]
    [['http://x/a']]
    >>> answer_table(Answer("q", "kb", "offline", form="count", value=3)).text_rows()
    [['3']]
    """
    if answer.form == Form.COUNT:
        return Table.of_count(int(answer.value or 0))
    if answer.form == Form.BOOLEAN:
        return Table.of_boolean(bool(answer.value))
    matched = [i for i in answer.items if i.matched]
    shown = matched or answer.items
    types = [i.type_label for i in shown if i.type_label]
    noun = max(set(types), key=types.count) if types else "answer"
    ordered = answer.candidates is not None and answer.candidates.ordered
    table = Table.of_keys(noun, [i.iri for i in shown], ordered=ordered, matched=bool(matched) or not shown)
    return table.named({i.iri: i.label for i in shown if i.label})


def _name(iri: str, labels: Mapping[str, str]) -> str:
    return labels.get(iri) or display_name(iri)
