"""The answerable (oracle) subset: questions whose gold relation path reaches a gold answer on this KB.

A benchmark KB can lack facts its gold answers need (MetaQA's reconstructed KB misses about 3.5% of
the answer edges), and a method cannot be blamed for those.  When a question-type file gives each
question's relation path (MetaQA's ``qa_*_qtype.txt``: ``actor_to_movie_to_director``) or the
question line does (PathQuestion: ``subj#r1#e1#r2#answer``), the path is run from the topic entity
on the KB; a question is **answerable** when that reaches at least one gold answer.  ``eval``
reports Hits@1 over this subset beside the whole set.

>>> metaqa_path("actor_to_movie_to_director")
(('starred_actors', False), ('directed_by', True))
>>> pathquestion_path("x#spouse#y#nationality#uk#<end>#uk")
GoldPath(topic='x', hops=(('spouse', True), ('nationality', True)))
"""

from __future__ import annotations

__all__ = ["GoldPath", "OracleFigures", "OracleSummary", "answerable", "gold_path", "metaqa_path", "oracle_markdown",
           "oracle_summary", "pathquestion_path"]

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyoxigraph import Literal, NamedNode

from sparqlqa.evaluation.datasets import Question
from sparqlqa.evaluation.metrics import mean, normalize_label
from sparqlqa.evaluation.results import QuestionResult
from sparqlqa.kb.records import JsonRecord
from sparqlqa.query.built_query import BuiltQuery

if TYPE_CHECKING:
    from sparqlqa.kb.knowledge_base import KnowledgeBase

#: MetaQA question-type words → the relation names of its KB
METAQA_RELATIONS = {"actor": "starred_actors", "director": "directed_by", "writer": "written_by",
                    "genre": "has_genre", "year": "release_year", "language": "in_language",
                    "tags": "has_tags", "tag": "has_tags", "imdbrating": "has_imdb_rating",
                    "imdbvotes": "has_imdb_votes"}
#: topic nodes tried per question
MAX_STARTS = 20


@dataclass(frozen=True)
class GoldPath:
    """The topic entity's label and the relation path from it: ``(relation name, forward)`` per hop."""

    topic: str
    hops: tuple[tuple[str, bool], ...]


def metaqa_path(qtype: str) -> tuple[tuple[str, bool], ...]:
    """A MetaQA question type as hops: ``X_to_movie`` walks X's relation backwards, ``movie_to_X`` forwards."""
    parts = qtype.strip().split("_to_")
    return tuple((METAQA_RELATIONS[b], True) if a == "movie" else (METAQA_RELATIONS[a], False)
                 for a, b in itertools.pairwise(parts))


def pathquestion_path(chain: str) -> GoldPath:
    """PathQuestion's ``subject#r1#e1#r2#…#answer[#<end>#answer]`` as a path (every hop forwards)."""
    parts = chain.split("#<end>#")[0].split("#")
    return GoldPath(parts[0], tuple((r, True) for r in parts[1::2]))


def gold_path(question: Question) -> GoldPath | None:
    """The question's gold path from its ``meta``: ``qtype`` + ``topic`` (MetaQA) or ``path`` (PathQuestion)."""
    meta = question.meta
    try:
        if meta.get("qtype") and meta.get("topic"):
            return GoldPath(str(meta["topic"]), metaqa_path(str(meta["qtype"])))
        if isinstance(meta.get("path"), str) and "#" in meta["path"]:
            path = pathquestion_path(meta["path"])
            return path if path.topic and path.hops else None
    except KeyError:  # a question type word this table does not know
        return None
    return None


def _relation_iris(kb: KnowledgeBase) -> dict[str, list[str]]:
    """Relation name (local name, and normalised label) → the KB's relation IRIs."""
    from sparqlqa.kb.schema import local_name

    found: dict[str, list[str]] = {}
    for relation in kb.schema.relations:
        for key in {local_name(relation.iri), normalize_label(getattr(relation, "label", "") or "")} - {""}:
            found.setdefault(key, []).append(relation.iri)
    return found


def _reached_labels(kb: KnowledgeBase, path: GoldPath, relations: Mapping[str, list[str]] | None = None,
                   ) -> set[str]:
    """Normalised labels (or literal values) of what ``path`` reaches from its topic entity on ``kb``."""
    from sparqlqa.kb.labels import LabelIndex
    from sparqlqa.kb.labels import normalize_label as label_key
    from sparqlqa.kb.node_text import label_predicates

    relations = relations if relations is not None else _relation_iris(kb)
    starts = LabelIndex.for_kb(kb).nodes_for_key(label_key(path.topic))[:MAX_STARTS]
    hops = [relations.get(name) or relations.get(normalize_label(name)) for name, _ in path.hops]
    if not starts or not path.hops or not all(hops):
        return set()
    lines, current = [], "?s"
    for number, ((_, forward), iris) in enumerate(zip(path.hops, hops), start=1):
        nxt = f"?v{number}"
        preds = " ".join(str(NamedNode(i)) for i in iris or [])
        lines.append(f"VALUES ?p{number} {{ {preds} }} "
                     + (f"{current} ?p{number} {nxt} ." if forward else f"{nxt} ?p{number} {current} ."))
        current = nxt
    starts_in = " ".join(str(NamedNode(s)) for s in starts)
    labels_in = ", ".join(str(NamedNode(p)) for p in label_predicates(kb))
    query = (f"SELECT DISTINCT {current} ?l WHERE {{ VALUES ?s {{ {starts_in} }} {' '.join(lines)} "
             f"OPTIONAL {{ {current} ?lp ?l FILTER(?lp IN ({labels_in})) }} }}")
    reached: set[str] = set()
    for node, label in kb.query(BuiltQuery.select(query)).rows:
        if isinstance(label, Literal):
            reached.add(normalize_label(label.value))
        elif isinstance(node, Literal):
            reached.add(normalize_label(node.value))
    return reached


def answerable(kb: KnowledgeBase, questions: Iterable[Question]) -> dict[str, bool]:
    """Question id → whether its gold path reaches a gold answer on ``kb`` (questions without a path
    or without gold labels are left out: nothing can be said about them)."""
    relations: dict[str, list[str]] | None = None
    found: dict[str, bool] = {}
    for question in questions:
        path = gold_path(question)
        if path is None or not question.gold_labels:
            continue
        if relations is None:
            relations = _relation_iris(kb)
        gold = {normalize_label(label) for label in question.gold_labels}
        found[question.id] = bool(gold & _reached_labels(kb, path, relations))
    return found


@dataclass
class OracleFigures:
    """One strategy over the answerable subset: how many of its questions, mean Hits@1 and F1."""

    questions: int
    hits_at_1: float | None
    f1: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"questions": self.questions, "hits@1": self.hits_at_1, "f1": self.f1}


@dataclass
class OracleSummary(JsonRecord):
    """The answerable subset: questions with a gold path, of them answerable, each strategy's figures."""

    with_path: int
    answerable: int
    strategies: dict[str, OracleFigures] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"with_path": self.with_path, "answerable": self.answerable,
                "strategies": {name: figures.to_dict() for name, figures in self.strategies.items()}}


def oracle_summary(rows: Sequence[QuestionResult], strategies: Sequence[str],
                   answerable_ids: Mapping[str, bool]) -> OracleSummary | None:
    """Hits@1 and F1 per strategy over the answerable questions; ``None`` when no question had a path."""
    if not answerable_ids:
        return None
    keep = {qid for qid, ok in answerable_ids.items() if ok}
    summary = OracleSummary(with_path=len(answerable_ids), answerable=len(keep))
    for strategy in strategies:
        chosen = [r for r in rows if r.strategy == strategy and r.id in keep]
        summary.strategies[strategy] = OracleFigures(
            questions=len(chosen), hits_at_1=mean(r.metric("hits@1") for r in chosen) if chosen else None,
            f1=mean(r.metric("f1") for r in chosen) if chosen else None)
    return summary


def oracle_markdown(summary: OracleSummary | None) -> list[str]:
    """The report section on the answerable subset (no lines without one)."""
    if not summary:
        return []
    names = list(summary.strategies)
    lines = [f"## Answerable subset (oracle): {summary.answerable} of {summary.with_path} questions", "",
             "A question is answerable when its gold relation path, run from its topic entity on this KB, "
             "reaches a gold answer; the others lack facts in the KB, not in the method.", "",
             "| metric | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for metric, title in (("questions", "questions"), ("hits@1", "Hits@1"), ("f1", "F1")):
        values = [summary.strategies[n].to_dict()[metric] for n in names]
        lines.append(f"| {title} | " + " | ".join("n/a" if v is None else str(v) if isinstance(v, int)
                                                  else f"{v:.3f}" for v in values) + " |")
    return [*lines, ""]
