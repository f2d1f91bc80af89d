"""The one ordering step (issue 34 item 5): the query's ORDER BY, else the rerank, else similarity; matched
answers before fill-in; the stages' results are frozen and the step is the only one that orders."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from sparqlqa.stages.answer import AnswerItem
from sparqlqa.stages.execute import Candidate, Candidates, Evidence
from sparqlqa.stages.modes import Form, ItemSource
from sparqlqa.stages.ordering import FormShape, RerankOrder, order_answer
from sparqlqa.stages.rerank import RerankResult

PACKAGE = Path(__file__).resolve().parents[2] / "sparqlqa"


def _ranking(*specs: str) -> list[AnswerItem]:
    """Items in similarity order; ``f:x`` a matched item, ``v:x`` vector fill-in."""
    return [AnswerItem.ranked(spec[2:], 1.0 - n / 10, ItemSource.FILTERED if spec[0] == "f" else ItemSource.VECTOR,
                              0 if spec[0] == "f" else None) for n, spec in enumerate(specs)]


def _iris(items: tuple[AnswerItem, ...]) -> list[str]:
    return [item.iri for item in items]


def test_similarity_alone_keeps_the_ranking_with_matched_answers_first() -> None:
    ordered = order_answer(_ranking("v:w", "f:a", "f:b", "v:x"))
    assert _iris(ordered.items) == ["a", "b", "w", "x"]
    assert _iris(ordered.ranked) == ["w", "a", "b", "x"]  # the ranking as stage 3 left it


def test_a_rerank_orders_the_top_and_leaves_the_rest() -> None:
    ordered = order_answer(_ranking("f:a", "f:b", "f:c", "f:d"), rerank=RerankOrder((2, 0, 1)))
    assert _iris(ordered.items) == ["c", "a", "b", "d"] and _iris(ordered.ranked) == ["c", "a", "b", "d"]


def test_a_fill_in_item_a_rerank_moved_up_without_a_reason_goes_below_the_matched_ones() -> None:
    items = _ranking("f:a", "v:w", "f:b")
    ordered = order_answer(items, rerank=RerankOrder((1, 0, 2)))
    assert _iris(ordered.items) == ["a", "b", "w"]
    items[1].rerank_reason = "its text names the award the question asks about"
    assert _iris(order_answer(items, rerank=RerankOrder((1, 0, 2))).items) == ["w", "a", "b"]


def test_the_query_s_order_by_wins_over_rerank_and_similarity() -> None:
    shape = FormShape(query_order=("c", "a", "b"), ordered=True)
    ordered = order_answer(_ranking("f:a", "f:b", "f:c", "v:w"), rerank=RerankOrder((1, 0)), shape=shape)
    assert _iris(ordered.items) == ["c", "a", "b", "w"]
    assert _iris(ordered.ranked) == ["b", "a", "c", "w"]  # the rerank's order is still the ranking's


def test_a_query_without_order_by_leaves_the_rerank_s_order() -> None:
    shape = FormShape(query_order=("c", "a", "b"), ordered=False)
    ordered = order_answer(_ranking("f:a", "f:b", "f:c"), rerank=RerankOrder((1, 0, 2)), shape=shape)
    assert _iris(ordered.items) == ["b", "a", "c"]


def test_a_yes_no_puts_the_node_it_asks_about_first() -> None:
    shape = FormShape(Form.BOOLEAN, True, query_order=("a", "b"), first=("b",))
    assert _iris(order_answer(_ranking("f:a", "f:b"), shape=shape).items) == ["b", "a"]


def test_the_form_shape_is_read_from_the_candidates() -> None:
    candidates = Candidates(target="?x", items=[Candidate("b", 0, 1, Evidence()), Candidate("a", 0, 1, Evidence())],
                            form="count", value=2, ordered=True)
    shape = FormShape.of(candidates)
    assert shape == FormShape(Form.COUNT, 2, ("b", "a"), True, ())
    assert FormShape.of(None) is None
    assert FormShape.of(Candidates(target=None, form="")) == FormShape()  # no form: a list


def test_a_rerank_that_was_not_applied_has_no_order() -> None:
    assert RerankOrder.of(RerankResult("listwise", [1, 0], applied=False)) is None
    assert RerankOrder.of(RerankResult("listwise", [1, 0], applied=True)) == RerankOrder((1, 0))


@pytest.mark.parametrize("result", [FormShape, RerankOrder])
def test_the_stage_results_the_step_reads_are_frozen(result: type) -> None:
    assert result.__dataclass_params__.frozen  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.__new__(result).positions = ()


def test_only_the_answer_builder_uses_the_ordering_step() -> None:
    """The one place: nothing but build_answer (strategies/pipeline.py) imports the ordering rules."""
    users = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "ordering.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "sparqlqa.stages.ordering":
                users.append((path.relative_to(PACKAGE).as_posix(), sorted(a.name for a in node.names)))
    assert users == [("strategies/pipeline.py", ["FormShape", "RerankOrder", "order_answer"])]
