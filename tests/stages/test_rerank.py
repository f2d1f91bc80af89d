"""LLM rerank: listwise sliding windows, pointwise scores, robust parsing, failures keep the vector order."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sparqlqa.errors import ConfigError, LLMAuthError, NotInCache
from sparqlqa.llm import FakeLLM, LLMRequest
from sparqlqa.stages.rerank import (
    fit_passages,
    listwise_prompt,
    parse_permutation,
    parse_score,
    rerank,
    truncate_words,
)


def _sorting_llm(calls: list[int]) -> FakeLLM:
    """A listwise LLM that orders passages 'item N' by N descending (a perfect judge)."""

    def answer(request: LLMRequest) -> str:
        prompt = request.messages[-1].content
        found = re.findall(r"^\[(\d+)\] item (\d+)", prompt, flags=re.M)
        calls.append(len(found))
        ranked = sorted(found, key=lambda pair: -int(pair[1]))
        return " > ".join(f"[{slot}]" for slot, _ in ranked)

    return FakeLLM([answer] * 50)


def test_parse_permutation_repairs_bad_answers() -> None:
    assert parse_permutation("[3] > [1] > [2]", 3) == [2, 0, 1]
    assert parse_permutation("[2] > [2] > [7] > [0]", 3) == [1, 0, 2]  # dedupe, drop unknown, append missing
    assert parse_permutation("Ranking: 2, 3", 4) == [1, 2, 0, 3]  # bare numbers when no brackets
    assert parse_permutation("[4] > [1]  (of 20 candidates)", 4) == [3, 0, 1, 2]  # brackets win
    assert parse_permutation("I cannot rank these.", 3) is None


def test_parse_score_accepts_only_numbers_in_the_unit_interval() -> None:
    assert parse_score("0.83") == 0.83
    assert parse_score("Score: .5 because ...") == 0.5
    assert parse_score("1") == 1.0
    assert parse_score("8/10") is None
    assert parse_score("7") is None
    assert parse_score("maybe") is None


def test_listwise_k20_is_one_call_and_applies_the_permutation() -> None:
    calls: list[int] = []
    texts = [f"item {n}" for n in range(20)]
    result = rerank("q", texts, _sorting_llm(calls), mode="listwise")
    assert calls == [20]
    assert result.applied and result.order == list(range(19, -1, -1))
    assert len(result.llm_calls) == 1 and result.llm_calls[0].input_tokens > 0


def test_listwise_sliding_window_brings_the_best_to_the_top() -> None:
    calls: list[int] = []
    values = [(n * 37) % 100 for n in range(100)]  # a shuffled 0..99
    result = rerank("q", [f"item {v}" for v in values], _sorting_llm(calls), mode="listwise")
    assert len(calls) == 9  # window 20, stride 10, bottom to top
    top = [values[i] for i in result.order[:10]]
    assert top == list(range(99, 89, -1))
    assert sorted(result.order) == list(range(100))


def test_listwise_garbage_keeps_that_window_in_vector_order() -> None:
    result = rerank("q", ["a", "b", "c"], FakeLLM(["no idea, sorry"]), mode="listwise")
    assert result.order == [0, 1, 2]
    assert any("no candidate ids" in n for n in result.notes)


@pytest.mark.parametrize("error", [NotInCache("f" * 64), LLMAuthError("bad key")])
def test_listwise_llm_failure_keeps_vector_order_with_a_note(error: Exception) -> None:
    result = rerank("q", ["a", "b", "c"], FakeLLM([error]), mode="listwise")
    assert result.order == [0, 1, 2] and not result.applied
    assert result.notes and "kept the vector order" in result.notes[0]
    assert result.pending == (["f" * 64] if isinstance(error, NotInCache) else [])


def test_pointwise_combines_llm_score_with_vector_rank() -> None:
    llm = FakeLLM(["0.2", "0.9", "0.9", "0.5"])
    result = rerank("q", ["a", "b", "c", "d"], llm, mode="pointwise")
    # final = llm + 0.1 * (n - rank) / n: b = 0.9 + 0.075, c = 0.9 + 0.05
    assert result.order == [1, 2, 3, 0]
    assert result.scores[1] == pytest.approx(0.975) and result.scores[0] == pytest.approx(0.3)
    assert len(llm.requests) == 4 and "Candidate answer" in llm.requests[0].messages[-1].content


def test_pointwise_unparseable_reply_keeps_that_candidate_in_place() -> None:
    result = rerank("q", ["a", "b", "c", "d"], FakeLLM(["0.1", "dunno", "0.3", "0.9"]), mode="pointwise")
    assert result.order == [3, 1, 2, 0]  # b keeps slot 2; the others sorted around it
    assert any("kept their vector positions" in n for n in result.notes)


def test_pointwise_records_every_pending_prompt_then_keeps_vector_order() -> None:
    llm = FakeLLM([NotInCache("a" * 64), "0.9", NotInCache("b" * 64)])
    result = rerank("q", ["a", "b", "c"], llm, mode="pointwise")
    assert result.pending == ["a" * 64, "b" * 64] and result.order == [0, 1, 2]
    assert not result.applied and "not cached" in result.notes[0]


def test_passages_are_truncated_to_words_then_to_the_budget() -> None:
    long = " ".join(f"w{i}" for i in range(1000))
    assert len(truncate_words(long).split()) == 301  # 300 words + the ellipsis
    fitted = fit_passages([long] * 20, budget_chars=4000)
    assert all(len(p) <= 200 for p in fitted)
    prompt = listwise_prompt("q", fitted)
    assert prompt.count("\n[") == 20 and "[20]" in prompt


def test_mode_none_and_unknown_modes() -> None:
    assert rerank("q", ["a", "b"], FakeLLM([]), mode="none").order == [0, 1]
    with pytest.raises(ConfigError):
        rerank("q", ["a", "b"], FakeLLM([]), mode="sideways")


def test_rerank_texts_state_each_fact_once(tmp_path: Path) -> None:
    """A WorldCup2014-style KB stores every fact twice (``X`` and ``X_inverse``); texts say it once."""
    from sparqlqa.ingest import ingest
    from sparqlqa.kb.node_text import node_texts

    src = tmp_path / "wc.txt"
    src.write_text("Andrea_PIRLO\tplays_for_country\tItaly\nItaly\tplays_for_country_inverse\tAndrea_PIRLO\n"
                   "Andrea_PIRLO\tplays_position\tMidfielder\nMidfielder\tplays_position_inverse\tAndrea_PIRLO\n"
                   "Gianluigi_BUFFON\tplays_for_country\tItaly\n")
    kb = ingest([src], kb="wc", format="triples")
    iris = {f"https://sparqlqa.dev/kb/wc/entity/{name}": name for name in ("Andrea_PIRLO", "Italy")}
    texts = {name: node_texts(kb, [iri], mode="full")[iri] for iri, name in iris.items()}
    assert texts["Andrea_PIRLO"].count("Italy") == 1 and "inverse" not in texts["Andrea_PIRLO"]
    assert "Andrea_PIRLO plays for country Italy" in texts["Andrea_PIRLO"]
    assert "Andrea_PIRLO, Gianluigi_BUFFON plays for country Italy" in texts["Italy"]
    assert "inverse" not in texts["Italy"]
    index_text = node_texts(kb, list(iris), mode="index")  # the vector index's texts are unchanged
    assert any("inverse" in text for text in index_text.values())
