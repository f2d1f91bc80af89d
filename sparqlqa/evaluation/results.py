"""Typed evaluation results: one :class:`QuestionResult` per (question, strategy) pair, its :class:`LLMUsage`.

``questions.jsonl`` holds each result's :meth:`~QuestionResult.to_dict` (one line, keys as they always
were: the metrics flat beside the rest); a line read back becomes a result again with
:meth:`~QuestionResult.from_dict`, at the file's edge.

>>> row = QuestionResult(id="1", strategy="vss", question="q", metrics={"rank": 1, "hit@1": 1.0})
>>> list(row.to_dict())[:6], row.metric("hit@1"), row.metric("mrr")
(['id', 'strategy', 'question', 'gold_iris', 'gold_labels', 'rank'], 1.0, 0.0)
>>> QuestionResult.from_dict(row.to_dict()) == row
True
"""

from __future__ import annotations

__all__ = ["LLMUsage", "QuestionResult", "TopItem"]

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sparqlqa.evaluation.execution import ExecutionScore
from sparqlqa.evaluation.metrics import ALL_METRICS
from sparqlqa.kb.records import JsonRecord

#: the per-question metric keys of a row, in the order they are written (:func:`question_metrics`)
METRIC_KEYS: tuple[str, ...] = ("rank", "n_gold", *ALL_METRICS)
#: the keys a row writes around its metrics
_HEAD = ("id", "strategy", "question", "gold_iris", "gold_labels")
_TAIL = ("answer_set", "items", "triplets", "sparql", "evidence", "notes", "llm", "latency_ms", "wall_ms",
         "timings_ms", "strategy_used", "error", "crash", "warmup", "execution")


@dataclass
class LLMUsage(JsonRecord):
    """Calls, tokens, cost and cache hits of one answer's LLM calls (``cost_usd``: ``None`` when a call's
    price is unknown)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    cache_hits: int = 0

    @classmethod
    def of(cls, calls: Iterable[Any]) -> LLMUsage:
        """The usage of ``LLMCall`` records."""
        calls = list(calls)
        costs = [c.cost_usd for c in calls if c.cost_usd is not None]
        return cls(calls=len(calls), input_tokens=sum(int(c.input_tokens or 0) for c in calls),
                   output_tokens=sum(int(c.output_tokens or 0) for c in calls),
                   cost_usd=float(sum(costs)) if costs else (0.0 if not calls else None),
                   cache_hits=sum(1 for c in calls if c.cache_hit))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> LLMUsage:
        data = data or {}
        cost = data.get("cost_usd")
        return cls(calls=int(data.get("calls", 0)), input_tokens=int(data.get("input_tokens", 0)),
                   output_tokens=int(data.get("output_tokens", 0)),
                   cost_usd=float(cost) if cost is not None else None, cache_hits=int(data.get("cache_hits", 0)))

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cost_usd": self.cost_usd, "cache_hits": self.cache_hits}


@dataclass
class TopItem:
    """One of the first ``k`` ranked items of a result, as the metrics saw it."""

    rank: int
    iri: str
    label: str = ""
    score: float | None = None
    tier: int | None = None
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "iri": self.iri, "label": self.label, "score": self.score, "tier": self.tier,
                "source": self.source}


@dataclass
class QuestionResult(JsonRecord):
    """One (question, strategy) pair's result: its metrics, ranking, triplets, SPARQL, evidence and cost.

    ``metrics``: ``rank`` (of the first gold answer), ``n_gold`` and each of
    :data:`~sparqlqa.evaluation.metrics.ALL_METRICS`; ``triplets`` and ``evidence`` are kept in their JSON
    form (what the strategy's objects wrote); ``error``: why the strategy failed on the pair (a miss),
    ``crash``: the failure was an unexpected exception; ``warmup``: the first pair of its strategy in an
    invocation (left out of the latency percentiles; ``None`` on error rows, which do not say);
    ``execution``: the rows scored against the gold's, for an execution-scored dataset."""

    id: str
    strategy: str
    question: str
    gold_iris: list[str] = field(default_factory=list)
    gold_labels: list[str] = field(default_factory=list)
    metrics: dict[str, float | int | None] = field(default_factory=dict)
    answer_set: list[str] = field(default_factory=list)
    items: list[TopItem] = field(default_factory=list)
    triplets: object = None
    sparql: list[str] = field(default_factory=list)
    evidence: dict[str, object] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    llm: LLMUsage = field(default_factory=LLMUsage)
    latency_ms: float = 0.0
    wall_ms: float = 0.0
    timings_ms: dict[str, float] = field(default_factory=dict)
    strategy_used: str = ""
    error: str | None = None
    crash: bool = False
    warmup: bool | None = None
    #: an execution-scored question's rows, the gold's and right/wrong (Spider4SPARQL); None otherwise
    execution: ExecutionScore | None = None
    #: keys of a line this version does not know (written back as they were)
    extra: dict[str, object] = field(default_factory=dict)

    def metric(self, name: str) -> float:
        """A metric's value, 0.0 when missing (a miss)."""
        return float(self.metrics.get(name) or 0.0)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "strategy": self.strategy, "question": self.question,
                                "gold_iris": list(self.gold_iris), "gold_labels": list(self.gold_labels),
                                **self.metrics, "answer_set": list(self.answer_set),
                                "items": [item.to_dict() for item in self.items], "triplets": self.triplets,
                                "sparql": list(self.sparql), "evidence": dict(self.evidence),
                                "notes": list(self.notes), "llm": self.llm.to_dict(), "latency_ms": self.latency_ms,
                                "wall_ms": self.wall_ms, "timings_ms": dict(self.timings_ms),
                                "strategy_used": self.strategy_used, "error": self.error}
        if self.crash:
            data["crash"] = True
        if self.warmup is not None:
            data["warmup"] = self.warmup
        if self.execution is not None:
            data["execution"] = self.execution.to_dict()
        data.update(self.extra)
        return data

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> QuestionResult:
        """A line of ``questions.jsonl`` (of this version or an earlier one) as a result."""
        items = [TopItem(rank=int(i.get("rank", n)), iri=str(i.get("iri", "")), label=str(i.get("label") or ""),
                         score=i.get("score"), tier=i.get("tier"), source=str(i.get("source") or ""))
                 for n, i in enumerate(row.get("items") or [], start=1)]
        known = {*_HEAD, *METRIC_KEYS, *_TAIL}
        return cls(id=str(row.get("id", "")), strategy=str(row.get("strategy", "")),
                   question=str(row.get("question", "")), gold_iris=list(row.get("gold_iris") or []),
                   gold_labels=list(row.get("gold_labels") or []),
                   metrics={key: row[key] for key in METRIC_KEYS if key in row},
                   answer_set=list(row.get("answer_set") or []), items=items, triplets=row.get("triplets"),
                   sparql=list(row.get("sparql") or []), evidence=dict(row.get("evidence") or {}),
                   notes=list(row.get("notes") or []), llm=LLMUsage.from_dict(row.get("llm")),
                   latency_ms=float(row.get("latency_ms") or 0.0), wall_ms=float(row.get("wall_ms") or 0.0),
                   timings_ms=dict(row.get("timings_ms") or {}), strategy_used=str(row.get("strategy_used", "")),
                   error=row.get("error"), crash=bool(row.get("crash")), warmup=row.get("warmup"),
                   execution=ExecutionScore.from_dict(row["execution"]) if row.get("execution") else None,
                   extra={key: value for key, value in row.items() if key not in known})
