"""Offline answers to questions in en/de/fr/es on a multilingual KB (issue 37), named in the question's language."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sparqlqa.ingest import ingest
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.stages.answer import Answer
from sparqlqa.strategies.ask import ask

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CASES: list[dict[str, Any]] = json.loads((FIXTURES / "world_multilingual_questions.json").read_text(encoding="utf-8"))
#: written after the code, run once untuned (9/10: German "als" was missing from the cue words, then added)
HELD_OUT: list[dict[str, Any]] = json.loads((FIXTURES / "world_multilingual_heldout.json").read_text(encoding="utf-8"))


def right(answer: Answer, case: dict[str, Any]) -> bool:
    """The rules of benchmarks/bench_forms.py, on labels: the names must be the question's language's."""
    gold = [str(a) for a in case["answers"]]
    if answer.form != case["form"]:
        return False
    if case["form"] != "list":
        return answer.value == case["value"]
    labels = [item.label for item in answer.items]
    if case["kind"] in ("superlative", "comparison"):
        return bool(labels) and labels[0] == gold[0]
    return bool(labels) and labels[0] in gold and set(gold) <= set(labels[: len(gold)])


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    import os

    home = tmp_path_factory.mktemp("home")
    old = os.environ.get("SPARQLQA_HOME")
    os.environ["SPARQLQA_HOME"] = str(home)
    try:
        kb = ingest([FIXTURES / "world_multilingual.ttl"], kb="world")
    finally:
        if old is not None:
            os.environ["SPARQLQA_HOME"] = old
    return kb


def test_offline_answers_four_languages(world: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARQLQA_EMBEDDER", "onnx:all-MiniLM-L6-v2")
    results = []
    for case in CASES + HELD_OUT:
        answer = ask(world, case["question"], strategy="offline", rerank="none", k=10)
        results.append((right(answer, case), case["lang"], case["question"], answer.form, answer.value,
                        [i.label for i in answer.items[:6]]))
    wrong = [r for r in results if not r[0]]
    print(f"\noffline multilingual: {len(results) - len(wrong)}/{len(results)}")
    for r in wrong:
        print("  WRONG", r[1:])
    assert len(results) - len(wrong) >= 0.9 * len(results), wrong


def test_unsupported_language_offline_says_so(world: KnowledgeBase) -> None:
    answer = ask(world, "Quali città si trovano in Germania?", strategy="offline", rerank="none")
    assert answer.items == [] and answer.lang is not None and answer.lang.code == "it"
    assert any("Italian" in note and "LLM" in note for note in answer.notes), answer.notes


def test_the_answer_records_its_language_and_label_tags(world: KnowledgeBase) -> None:
    answer = ask(world, "Which cities are in Germany?", strategy="offline", rerank="none", lang="de")
    data = answer.to_dict()
    assert data["lang"] == {"code": "de", "source": "given"}
    assert "München" in [item.label for item in answer.items]
    assert data["labels_lang"]["http://example.org/world/Munich"] == "de"
    detected = ask(world, "¿Qué ciudades están en Alemania?", strategy="offline", rerank="none").to_dict()
    assert detected["lang"] == {"code": "es", "source": "detected"}
