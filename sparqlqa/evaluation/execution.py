"""Execution accuracy (Spider, Spider4SPARQL): an answer is right when its rows are the gold rows.

The benchmark's rule: the answer's rows equal the gold query's rows as a multiset — in order when the
gold has ORDER BY —, columns matched up to their order; numbers compare as numbers (``6`` = ``6.0``),
other cells by their lexical form with surrounding spaces ignored.  A table with another number of
columns than the gold is wrong.

>>> rows_match([["6"]], [["6.0"]])
True
>>> rows_match([["Joe", "52"], ["Ann", "41"]], [["41", "Ann"], ["52", "Joe"]])
True
>>> rows_match([["Joe", "52"], ["Ann", "41"]], [["41", "Ann"], ["52", "Joe"]], ordered=True)
False
>>> rows_match([["Joe"], ["Joe"]], [["Joe"]])
False
>>> rows_match([["a", "b"]], [["a"]])
False
"""

from __future__ import annotations

__all__ = ["MAX_PERMUTED_COLUMNS", "ExecutionScore", "cell_value", "rows_match", "score_rows"]

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import permutations
from typing import Any

from sparqlqa.kb.records import JsonRecord

#: tables wider than this are matched column by column in the gold's order only (no permutations)
MAX_PERMUTED_COLUMNS = 6

Cell = str | None


def cell_value(cell: Cell) -> object:
    """What a cell compares as: a number (rounded to 6 significant digits past the point), else its text."""
    if cell is None:
        return None
    text = str(cell).strip()
    try:
        number = float(text)
    except ValueError:
        return text
    if math.isnan(number) or math.isinf(number):
        return text
    return round(number, 6) if number != int(number) else float(int(number))


def rows_match(answer: Sequence[Sequence[Cell]], gold: Sequence[Sequence[Cell]], *, ordered: bool = False) -> bool:
    """Whether ``answer``'s rows are ``gold``'s (see the module's rule)."""
    if len(answer) != len(gold):
        return False
    if not gold:
        return True
    width = len(gold[0])
    if any(len(row) != width for row in [*answer, *gold]):
        return False
    want = [tuple(cell_value(c) for c in row) for row in gold]
    have = [tuple(cell_value(c) for c in row) for row in answer]
    orders = permutations(range(width)) if width <= MAX_PERMUTED_COLUMNS else [tuple(range(width))]
    for order in orders:
        moved = [tuple(row[n] for n in order) for row in have]
        if (moved == want) if ordered else (Counter(moved) == Counter(want)):
            return True
    return False


Row = list[Cell]


@dataclass
class ExecutionScore(JsonRecord):
    """One answer scored by execution accuracy: its rows, the gold's, and whether they match
    (``form``: the benchmark's class of the question; ``apart``: why it is reported apart from the main
    figure — an empty gold, vocabulary no mapping produces —, else None)."""

    right: bool
    answer_rows: list[Row] = field(default_factory=list)
    gold_rows: list[Row] = field(default_factory=list)
    ordered: bool = False
    form: str = "other"
    apart: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"right": self.right, "form": self.form, "apart": self.apart, "ordered": self.ordered,
                "answer_rows": [list(r) for r in self.answer_rows], "gold_rows": [list(r) for r in self.gold_rows]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ExecutionScore:
        return cls(right=bool(data.get("right")), answer_rows=[list(r) for r in data.get("answer_rows") or []],
                   gold_rows=[list(r) for r in data.get("gold_rows") or []], ordered=bool(data.get("ordered")),
                   form=str(data.get("form") or "other"), apart=data.get("apart"))


def score_rows(answer: Sequence[Sequence[Cell]], gold: Sequence[Sequence[Cell]], *, ordered: bool = False,
               form: str = "other", apart: str | None = None) -> ExecutionScore:
    """The :class:`ExecutionScore` of ``answer``'s rows against ``gold``'s (:func:`rows_match`).

    >>> score_rows([["52", "Joe"]], [["Joe", "52.0"]], form="other").right
    True
    """
    return ExecutionScore(rows_match(answer, gold, ordered=ordered), [list(r) for r in answer],
                          [list(r) for r in gold], ordered, form, apart)
