"""Typed evaluation results: a row's JSON line keeps its keys and order, and reads back as the same result."""

from __future__ import annotations

import json

import pytest

from sparqlqa.evaluation import EvalReport, LLMUsage, QuestionResult, RunSettings, StrategySummary
from sparqlqa.evaluation.datasets import Question
from sparqlqa.evaluation.report import build_metrics
from sparqlqa.evaluation.runner import error_row
from sparqlqa.llm import LLMCall

ROW_KEYS = ["id", "strategy", "question", "gold_iris", "gold_labels", "rank", "n_gold", "hit@1", "hit@5",
            "recall@20", "mrr", "hits@1", "f1", "answer_set", "items", "triplets", "sparql", "evidence", "notes",
            "llm", "latency_ms", "wall_ms", "timings_ms", "strategy_used", "error"]


def test_an_error_row_is_written_with_the_keys_it_always_had() -> None:
    row = error_row(Question("q1", "who?", gold_labels=frozenset({"A"})), "s", ValueError("boom"), 2.5, crash=True)
    data = json.loads(json.dumps(row.to_dict()))
    assert list(data) == [*ROW_KEYS, "crash"] and data["error"] == "ValueError: boom" and data["crash"] is True
    assert data["llm"] == {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0, "cache_hits": 0}
    assert QuestionResult.from_dict(data) == row


def test_a_line_of_an_other_version_reads_back_and_keeps_what_it_does_not_know() -> None:
    line = {"id": 7, "strategy": "vss", "hit@1": 1.0, "latency_ms": None, "warmup": True, "future": [1]}
    row = QuestionResult.from_dict(line)
    assert (row.id, row.metric("hit@1"), row.metric("f1"), row.latency_ms, row.warmup) == ("7", 1.0, 0.0, 0.0, True)
    assert row.to_dict()["future"] == [1] and list(row.to_dict())[-2:] == ["warmup", "future"]


def test_llm_usage_of_calls() -> None:
    calls = [LLMCall(backend="fake", model="m", input_tokens=10, output_tokens=2, cost_usd=0.5, cache_hit=True),
             LLMCall(backend="fake", model="m", input_tokens=5, output_tokens=1)]
    assert LLMUsage.of(calls) == LLMUsage(calls=2, input_tokens=15, output_tokens=3, cost_usd=0.5, cache_hits=1)
    assert LLMUsage.of([LLMCall(backend="fake", model="m")]).cost_usd is None and LLMUsage.of([]).cost_usd == 0.0


def test_the_report_is_typed_and_metrics_json_keeps_its_shape() -> None:
    rows = [QuestionResult("1", "vss", "q", metrics={"hit@1": 1.0, "f1": 0.5}, latency_ms=4.0, warmup=False),
            QuestionResult("2", "vss", "q", error="LLMError: no", crash=False)]
    report = build_metrics(RunSettings("jsonl", "src", "kb", ["vss"]), "retrieval", 2, rows, ["vss"])
    assert isinstance(report, EvalReport) and isinstance(report.strategies["vss"], StrategySummary)
    assert report.complete and report.strategies["vss"].metrics["hit@1"] == 0.5 and report.errors[0].id == "2"
    data = report.to_dict()
    assert list(data) == ["run", "kind", "questions", "complete", "strategies", "errors", "semantics",
                          "last_invocation"]
    assert list(data["strategies"]["vss"]) == ["questions", "errors", "metrics", "llm_per_question", "llm_totals",
                                               "latency_ms"]
    assert data["errors"] == [{"id": "2", "strategy": "vss", "error": "LLMError: no"}]
    with pytest.warns(DeprecationWarning):
        assert report["strategies"]["vss"]["latency_ms"]["n"] == 2
