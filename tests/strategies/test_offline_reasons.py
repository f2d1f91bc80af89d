"""The offline step's reasons are a typed record (``Answer.meta.offline``) whose JSON is the same per reading."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparqlqa.cli.ask_commands import _offline_lines
from sparqlqa.ingest import ingest
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.strategies.ask import ask
from sparqlqa.strategies.offline.reasons import OfflineReasons
from sparqlqa.strategies.offline.strategy import MAX_QUESTION_WORDS, offline_triplets

BOOKS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "forms_books.ttl"


@pytest.fixture
def books(tmp_path: Path) -> KnowledgeBase:
    return ingest([BOOKS], kb="books")


def test_a_scored_reading_keeps_its_json_keys_and_reads_by_attribute(books: KnowledgeBase) -> None:
    answer = ask(books, "Which books did Mara Lindqvist write?", strategy="offline", rerank="none")
    reasons = answer.meta.offline
    assert isinstance(reasons, OfflineReasons) and reasons.form is None and reasons.elapsed_ms is not None
    assert [m.text for m in reasons.mentions] == ["Mara Lindqvist"] and reasons.paths["Mara Lindqvist"]
    assert reasons.chosen[0].reading.startswith("'Mara Lindqvist'") and reasons.chosen[0].confidence is not None
    data = answer.to_dict()["meta"]["offline"]
    assert list(data) == ["mentions", "paths", "chosen", "elapsed_ms"] and data == reasons.to_dict()
    assert data["chosen"][0] == {"reading": reasons.chosen[0].reading, "score": round(reasons.chosen[0].score, 4),
                                 "confidence": round(reasons.chosen[0].confidence, 4)}


def test_a_yes_no_between_two_names_has_one_reading_without_confidence(books: KnowledgeBase) -> None:
    answer = ask(books, "Did Pavel Horak write The Last Ferry?", strategy="offline", rerank="none")
    reasons = answer.meta.offline
    assert isinstance(reasons, OfflineReasons) and reasons.form == "boolean" and reasons.elapsed_ms is None
    assert len(reasons.chosen) == 1 and reasons.chosen[0].confidence is None
    assert list(answer.to_dict()["meta"]["offline"]) == ["form", "order", "filters", "chosen"]
    lines = _offline_lines(reasons)  # the trace printed "confidence" from a key this reading never had
    assert lines[-1] == f"chosen: {reasons.chosen[0].reading}  score {round(reasons.chosen[0].score, 4)}"


def test_a_question_too_long_to_read_has_empty_reasons(books: KnowledgeBase) -> None:
    result = offline_triplets("word " * (MAX_QUESTION_WORDS + 1), books)
    assert result.details.empty and result.to_dict()["offline"] == {} and _offline_lines(result.details) == []
