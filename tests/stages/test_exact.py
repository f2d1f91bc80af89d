"""Exact answers first (issue 26, item 4): ``matched``, fill-in after exact answers unless a listwise rerank
gives a reason, ``exact=True``, and a rerank prompt that says which candidates matched and why."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sparqlqa.errors import ConfigError
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.llm import FakeLLM, LLMRequest
from sparqlqa.stages.answer import FILL_IN_MARK, AnswerItem
from sparqlqa.stages.ordering import exact_first
from sparqlqa.stages.ranking import RankedNode
from sparqlqa.stages.rerank import PASSAGE_CHARS, cap_passage, listwise_prompt, parse_reasons, rerank
from sparqlqa.strategies.ask import ask

EX = "https://example.org/movies/"


def _term(kind: str, text: str, type_: str | None) -> dict[str, Any]:
    return {"kind": kind, "text": text, "type": type_}


SCOTT = {"triplets": [{"head": _term("variable", "?x1", "movie"), "relation": "directed by",
                       "tail": _term("constant", "Ridley Scott", "person")}], "target": "?x1", "requirements": []}
QUESTION = "Which films did Ridley Scott direct?"


def _judge(word: str, reason: str | None = None, seen: list[str] | None = None) -> Callable[[LLMRequest], str]:
    """A listwise judge that puts the passage containing ``word`` first, with ``reason`` for it."""

    def answer(request: LLMRequest) -> str:
        prompt = request.messages[-1].content
        if seen is not None:
            seen.append(prompt)
        passages = re.findall(r"^\[(\d+)\] (.*)$", prompt, flags=re.M)
        ranked = sorted(passages, key=lambda p: (word not in p[1], int(p[0])))
        order = " > ".join(f"[{slot}]" for slot, _ in ranked)
        return order + (f"\nreason [{ranked[0][0]}]: {reason}" if reason else "")

    return answer


def _item(iri: str, source: str, reason: str | None = None) -> AnswerItem:
    return AnswerItem(iri=iri, label=iri, type=None, score=0.5, tier=0 if source == "filtered" else None,
                      source=source, evidence=None, snippet="", rerank_reason=reason)


# --- ordering ----------------------------------------------------------------------------------------


def test_exact_first_moves_fill_in_below_every_matched_item_keeping_each_groups_order() -> None:
    items = [_item("v1", "vector"), _item("f1", "filtered"), _item("v2", "vector"), _item("f2", "filtered"),
             _item("m1", "model-knowledge")]
    assert [i.iri for i in exact_first(items)] == ["f1", "f2", "v1", "v2", "m1"]
    assert [i.matched for i in exact_first(items)] == [True, True, False, False, False]


def test_a_rerank_reason_is_the_only_way_a_fill_in_item_stays_above_a_matched_one() -> None:
    items = [_item("v1", "vector", reason="its text names the award the question asks about"),
             _item("f1", "filtered"), _item("v2", "vector")]
    assert [i.iri for i in exact_first(items)] == ["v1", "f1", "v2"]
    nodes = [RankedNode("v", 0.9, "vector"), RankedNode("f", 0.1, "filtered", 0)]
    assert [n.iri for n in exact_first(nodes)] == ["f", "v"]


def test_items_say_whether_they_matched_in_json() -> None:
    data = _item("v1", "vector", reason="why").to_dict(1)
    assert data["matched"] is False and data["source"] == "vector" and data["rerank_reason"] == "why"
    assert _item("f1", "filtered").to_dict(1)["matched"] is True
    assert "rerank_reason" not in _item("f1", "filtered").to_dict(1)


def test_fill_in_never_ranks_above_a_matched_answer_when_the_rerank_gives_no_reason(movies_kb: KnowledgeBase,
                                                                                    ) -> None:
    answer = ask(movies_kb, QUESTION, llm=FakeLLM([SCOTT, _judge("Witness")]), k=6)
    sources = [i.source for i in answer.items]
    assert sources[:3] == ["filtered"] * 3 and set(sources[3:]) == {"vector"}
    labels = [i.label for i in answer.items]
    assert labels[3] == "Witness"  # the rerank's preference holds among the fill-in
    assert answer.meta.rerank_result.order[0] != 0  # the rerank did put Witness first


def test_a_listwise_rerank_may_move_fill_in_up_with_a_reason(movies_kb: KnowledgeBase) -> None:
    why = "the question's wording fits this film's text"
    answer = ask(movies_kb, QUESTION, llm=FakeLLM([SCOTT, _judge("Witness", why)]), k=6)
    top = answer.items[0]
    assert top.label == "Witness" and not top.matched and top.rerank_reason == why
    assert answer.to_dict()["items"][0]["rerank_reason"] == why
    assert [i.matched for i in answer.items[1:4]] == [True, True, True]


def test_a_reason_for_a_matched_candidate_changes_nothing(movies_kb: KnowledgeBase) -> None:
    answer = ask(movies_kb, QUESTION, llm=FakeLLM([SCOTT, _judge("Gladiator", "epic")]), k=6)
    assert answer.items[0].label == "Gladiator" and answer.items[0].rerank_reason is None


def test_pointwise_scores_cannot_lift_fill_in_above_matched(movies_kb: KnowledgeBase) -> None:
    prompts: list[str] = []

    def score(request: LLMRequest) -> str:
        prompts.append(request.messages[-1].content)
        return "0.9" if "Witness" in request.messages[-1].content else "0.1"

    answer = ask(movies_kb, QUESTION, llm=FakeLLM([SCOTT, *([score] * 6)]), k=6, rerank="pointwise")
    assert [i.matched for i in answer.items] == [True, True, True, False, False, False]
    fill_in = [i for i in answer.items if not i.matched]
    assert fill_in[0].label == "Witness" and fill_in[0].score > answer.items[0].score
    alien = next(p for p in prompts if p.count("Alien") and "science fiction horror" in p)
    assert "It MATCHED the knowledge-base query; evidence: Alien —directed by→ Ridley Scott" in alien
    witness = next(p for p in prompts if "Amish" in p)
    assert "did not match the knowledge-base query" in witness


# --- exact=True ----------------------------------------------------------------------------------------


def test_exact_returns_only_matched_answers(movies_kb: KnowledgeBase) -> None:
    everything = ask(movies_kb, QUESTION, llm=FakeLLM([SCOTT]), k=6, rerank="none")
    assert any(not i.matched for i in everything.items)
    exact = ask(movies_kb, QUESTION, llm=FakeLLM([SCOTT]), k=6, rerank="none", exact=True)
    assert {i.iri for i in exact.items} == {f"{EX}alien", f"{EX}blade_runner", f"{EX}gladiator"}
    assert all(i.matched for i in exact.items) and exact.meta.exact is True
    assert any("--exact: left out 3 fill-in" in n for n in exact.notes)


def test_exact_with_nothing_matched_returns_no_items_and_says_why(movies_kb: KnowledgeBase) -> None:
    answer = ask(movies_kb, "Which film is about replicants?", strategy="vss", exact=True)
    assert answer.items == [] and "--exact: no answer satisfied the query" in answer.notes
    json.dumps(answer.to_dict())


def test_unknown_topic_mode_is_refused(movies_kb: KnowledgeBase) -> None:
    with pytest.raises(ConfigError, match="topic mode"):
        ask(movies_kb, QUESTION, strategy="vss", topic="sometimes")


# --- the rerank prompt ------------------------------------------------------------------------------


def test_listwise_prompt_marks_matched_candidates_with_their_evidence_and_states_the_budget() -> None:
    prompt = listwise_prompt("Which films were directed by people born in Ohio?", ["Film A. A drama.", "Film B."],
                             [True, False], [["Film A —directed by→ Jo Doe", "Jo Doe —born in→ Ohio"], []])
    lines = prompt.splitlines()
    assert lines[lines.index("[1] Film A. A drama.") + 1] == \
        "    MATCHED the knowledge-base query; evidence: Film A —directed by→ Jo Doe; Jo Doe —born in→ Ohio"
    assert lines[lines.index("[2] Film B.") + 1] == ""  # no mark for the fill-in candidate
    assert f"at most {PASSAGE_CHARS} characters per candidate" in prompt
    assert "1 of the 2 candidates are marked MATCHED" in prompt and "reason [n]: why" in prompt
    plain = listwise_prompt("q", ["a", "b"])
    assert "MATCHED" not in plain and "Do not explain" in plain


def test_every_candidate_is_cut_to_the_budget_and_none_is_left_out() -> None:
    seen: list[str] = []
    texts = [f"candidate {i} " + "word " * 2000 for i in range(20)]
    result = rerank("q", texts, FakeLLM([_judge("candidate 7", seen=seen)]), window=20)
    assert result.applied and result.order[0] == 7
    passages = re.findall(r"^\[(\d+)\] (.*)$", seen[0], flags=re.M)
    assert len(passages) == 20 and all(len(text) <= PASSAGE_CHARS for _, text in passages)
    assert all(text.endswith("…") for _, text in passages)
    assert cap_passage("short text") == "short text"


def test_reasons_are_parsed_per_window_and_mapped_to_input_indexes() -> None:
    assert parse_reasons("[2] > [1]\nReason [2] - fits\nreason [9]: out of range", 2) == {1: "fits"}
    llm = FakeLLM(["[3] > [1] > [2]\nreason [3]: names the place"])
    result = rerank("q", ["a", "b", "c"], llm, matched=[True, True, False], evidence=[["a —r→ x"], ["b —r→ x"], []])
    assert result.order == [2, 0, 1] and result.reasons == {2: "names the place"}
    assert result.to_dict()["reasons"] == {"2": "names the place"}


def test_the_4step_rerank_prompt_shows_evidence_labels_and_full_relation_lists(tmp_path: Path) -> None:
    from sparqlqa.ingest import ingest

    films = "\n".join(f'ex:f{i} a ex:Film ; rdfs:label "Film {i}" ; rel:directed_by ex:nolan .' for i in range(9))
    ttl = tmp_path / "films.ttl"
    ttl.write_text(f"""@prefix ex: <https://example.org/f/> .
@prefix rel: <https://example.org/f/rel/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
ex:Film a owl:Class ; rdfs:label "film" .
ex:Person a owl:Class ; rdfs:label "person" .
rel:directed_by a owl:ObjectProperty ; rdfs:label "directed by" ; rdfs:domain ex:Film ; rdfs:range ex:Person .
ex:nolan a ex:Person ; rdfs:label "Chris Nolan" .
ex:weir a ex:Person ; rdfs:label "Peter Weir" .
ex:w a ex:Film ; rdfs:label "Witness" ; rel:directed_by ex:weir .
{films}
""", encoding="utf-8")
    kb = ingest([ttl], kb="films")
    triplets = {"triplets": [{"head": _term("constant", "Film 3", "film"), "relation": "directed by",
                              "tail": _term("variable", "?p", "person")}], "target": "?p", "requirements": []}
    seen: list[str] = []
    answer = ask(kb, "Who directed Film 3?", llm=FakeLLM([triplets, _judge("Peter Weir", seen=seen)]), k=2)
    assert answer.items[0].label == "Chris Nolan" and answer.items[0].matched
    prompt = seen[0]
    assert "MATCHED the knowledge-base query; evidence: Film 3 —directed by→ Chris Nolan" in prompt
    assert all(f"Film {i}" in prompt for i in range(9)) and " more" not in prompt  # no "… and 4 more"
    assert prompt.count("MATCHED the knowledge-base query") == 1


def test_the_terminal_marks_fill_in_as_similar_not_matched(movies_kb: KnowledgeBase) -> None:
    from sparqlqa.cli.ask_commands import answers_table, answers_tsv

    answer = ask(movies_kb, QUESTION, llm=FakeLLM([SCOTT]), k=5, rerank="none")
    rows = answers_tsv(answer, 5).splitlines()[1:]
    assert [FILL_IN_MARK in row for row in rows] == [False, False, False, True, True]
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(answers_table(answer, 5))
    text = console.export_text()
    assert text.count(FILL_IN_MARK) == 2 and "directed by" in text
