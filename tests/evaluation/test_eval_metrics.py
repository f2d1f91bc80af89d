"""Metrics pinned on hand-computed rankings (STaRK semantics, the tie rule, KGQA F1)."""

from __future__ import annotations

import math

import pytest

from sparqlqa.evaluation.metrics import (
    RankedItem,
    answer_f1,
    answer_set,
    apply_tie_rule,
    gold_ranks,
    hit_at,
    percentile,
    question_metrics,
    recall_at,
    reciprocal_rank,
)


def items(*pairs: tuple[str, float | None]) -> list[RankedItem]:
    return [RankedItem(iri, label=iri, score=score) for iri, score in pairs]


def test_hand_computed_ranking_with_two_of_three_gold_answers() -> None:
    # ranking: x(0.9) g1(0.8) y(0.7) z(0.6) w(0.5) g2(0.4); gold g1, g2, g3 (g3 never returned)
    ranking = items(("x", 0.9), ("g1", 0.8), ("y", 0.7), ("z", 0.6), ("w", 0.5), ("g2", 0.4))
    m = question_metrics(ranking, {"g1", "g2", "g3"})
    assert m["rank"] == 2
    assert m["n_gold"] == 3
    assert m["hit@1"] == 0.0
    assert m["hit@5"] == 1.0
    assert m["recall@20"] == pytest.approx(2 / 3)  # g3 outside the candidate set: a miss, still counted
    assert m["mrr"] == 0.5


def test_recall_is_normalised_by_all_gold_answers_not_by_k() -> None:
    gold = {f"g{i}" for i in range(25)}
    ranking = items(*[(f"g{i}", 1.0 - i / 100) for i in range(25)])
    m = question_metrics(ranking, gold)
    assert m["recall@20"] == pytest.approx(20 / 25)
    assert m["hit@1"] == 1.0 and m["mrr"] == 1.0


def test_mrr_uses_the_full_returned_ranking_beyond_twenty() -> None:
    ranking = items(*[(f"n{i:02d}", 1.0 - i / 100) for i in range(30)], ("g", 0.0))
    m = question_metrics(ranking, {"g"})
    assert m["rank"] == 31
    assert m["mrr"] == pytest.approx(1 / 31)
    assert m["recall@20"] == 0.0 and m["hit@5"] == 0.0


def test_ties_are_ordered_by_iri_whatever_order_the_strategy_listed_them() -> None:
    # gold "b" listed first among three items tied at 0.5: the rule puts "a" before it
    first = question_metrics(items(("top", 0.9), ("b", 0.5), ("c", 0.5), ("a", 0.5)), {"b"})
    second = question_metrics(items(("top", 0.9), ("c", 0.5), ("a", 0.5), ("b", 0.5)), {"b"})
    assert first["rank"] == second["rank"] == 3
    assert first["mrr"] == pytest.approx(1 / 3)


def test_ties_only_reorder_consecutive_runs() -> None:
    # equal scores separated by another score are not merged (the list order stays the ranking)
    ranked = apply_tie_rule(items(("z", 0.5), ("m", 0.7), ("a", 0.5)))
    assert [i.iri for i in ranked] == ["z", "m", "a"]


def test_unscored_candidates_tie_at_the_bottom() -> None:
    ranked = apply_tie_rule(items(("u2", None), ("s", 0.1), ("u1", math.nan), ("t", 0.0)))
    assert [i.iri for i in ranked] == ["s", "t", "u1", "u2"]
    assert question_metrics(items(("g", None), ("s", 0.1)), {"g"})["rank"] == 2


def test_empty_predictions_and_empty_gold_score_zero() -> None:
    empty = question_metrics([], {"g"})
    assert empty["rank"] is None
    assert all(empty[m] == 0.0 for m in ("hit@1", "hit@5", "recall@20", "mrr", "hits@1", "f1"))
    no_gold = question_metrics(items(("a", 1.0)), set())
    assert no_gold["n_gold"] == 0
    assert all(no_gold[m] == 0.0 for m in ("hit@1", "hit@5", "recall@20", "mrr", "f1"))


def test_primitive_metrics_on_ranks() -> None:
    assert hit_at([5], 5) == 1.0 and hit_at([6], 5) == 0.0
    assert recall_at([1, 3, 21], 20, n_gold=3) == pytest.approx(2 / 3)
    assert reciprocal_rank([7, 3]) == pytest.approx(1 / 3)


def test_labels_match_case_insensitively_and_each_gold_answer_counts_once() -> None:
    ranking = [RankedItem("n1", "United_Kingdom", 0.9), RankedItem("n2", "united kingdom", 0.8),
               RankedItem("n3", "Female", 0.7)]
    assert gold_ranks(ranking, gold_labels={"united_kingdom", "female"}) == [1, 3]
    m = question_metrics(ranking, gold_labels={"united_kingdom", "female"})
    assert m["recall@20"] == 1.0 and m["hit@1"] == 1.0


def test_iri_gold_answers_do_not_match_by_label() -> None:
    # a node with the gold answer's label but another IRI is not the gold node
    ranking = [RankedItem("http://x/other", "TP53", 0.9), RankedItem("http://x/0", "TP53", 0.8)]
    assert gold_ranks(ranking, gold_iris={"http://x/0"}) == [2]


def test_answer_set_is_the_best_filtered_tier_else_the_top_item() -> None:
    ranked = [RankedItem("a", tier=1, source="filtered"), RankedItem("b", tier=0, source="filtered"),
              RankedItem("c", tier=0, source="filtered"), RankedItem("d", source="vector")]
    assert [i.iri for i in answer_set(ranked)] == ["b", "c"]
    assert [i.iri for i in answer_set(ranked[3:])] == ["d"]
    assert answer_set([]) == []


def test_answer_f1_hand_computed() -> None:
    predicted = [RankedItem("1", "male"), RankedItem("2", "paris"), RankedItem("3", "lyon")]
    # 1 of 3 predictions right, 1 of 2 gold found: P = 1/3, R = 1/2, F1 = 0.4
    assert answer_f1(predicted, gold_labels={"male", "female"}) == pytest.approx(0.4)
    assert answer_f1([RankedItem("1", "male"), RankedItem("2", "Male")], gold_labels={"male"}) == 1.0
    assert answer_f1(predicted, gold_labels={"nobody"}) == 0.0


def test_kgqa_f1_in_question_metrics_uses_the_filtered_answer_set() -> None:
    ranking = [RankedItem("g1", "g1", 0.9, tier=0, source="filtered"),
               RankedItem("x", "x", 0.8, tier=0, source="filtered"),
               RankedItem("g2", "g2", 0.7, source="vector")]
    m = question_metrics(ranking, {"g1", "g2"})
    assert m["hits@1"] == 1.0
    assert m["f1"] == pytest.approx(0.5)  # P = 1/2, R = 1/2


def test_percentile_interpolates_linearly() -> None:
    assert percentile([1, 2, 3, 4, 5], 50) == 3
    assert percentile([0, 100], 95) == pytest.approx(95.0)
    assert percentile([], 50) is None
