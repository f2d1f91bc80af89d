"""Execution-accuracy figures of a run (Spider4SPARQL): overall and per form, with the questions whose gold
says little (empty, or names no mapping produces) counted apart, outside the main figure.

>>> from sparqlqa.evaluation.execution import ExecutionScore
>>> from sparqlqa.evaluation.results import QuestionResult
>>> rows = [QuestionResult("1", "offline", "q", execution=ExecutionScore(True, form="count")),
...         QuestionResult("2", "offline", "q", execution=ExecutionScore(False, form="list")),
...         QuestionResult("3", "offline", "q", execution=ExecutionScore(True, form="list", apart="empty gold"))]
>>> figures = execution_figures(rows, ["offline"])["offline"]
>>> figures.scored.right, figures.scored.questions, figures.by_form["list"].right, figures.apart["empty gold"].questions
(1, 2, 0, 1)
"""

from __future__ import annotations

__all__ = ["EXECUTION_SEMANTICS", "ExecutionFigures", "Tally", "execution_figures", "execution_markdown"]

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sparqlqa.evaluation.results import QuestionResult
from sparqlqa.kb.records import JsonRecord

#: what the figures mean (``metrics.json`` ``semantics``)
EXECUTION_SEMANTICS = (
    "execution accuracy: right when the answer's table rows (lexical forms; IRIs for nodes) equal the gold "
    "query's rows as a multiset (in order when the gold has ORDER BY), columns matched up to order, numbers "
    "compared as numbers; a failed answer is wrong; questions whose gold is empty or uses vocabulary no "
    "mapping produces are counted apart, outside the main figure")


@dataclass
class Tally:
    """Right answers out of ``questions``."""

    questions: int = 0
    right: int = 0

    @property
    def accuracy(self) -> float | None:
        return self.right / self.questions if self.questions else None

    def add(self, right: bool) -> None:
        self.questions += 1
        self.right += right

    def to_dict(self) -> dict[str, Any]:
        return {"questions": self.questions, "right": self.right, "accuracy": self.accuracy}

    def cell(self) -> str:
        """``"12/40 (0.300)"``; ``"—"`` for no question."""
        return f"{self.right}/{self.questions} ({self.accuracy:.3f})" if self.questions else "—"


@dataclass
class ExecutionFigures(JsonRecord):
    """One strategy's execution accuracy: ``scored`` (the main figure), ``by_form`` (of the scored
    questions), ``apart`` (by reason: not in the main figure) and ``multi_column`` (scored questions whose
    gold has several columns)."""

    scored: Tally = field(default_factory=Tally)
    by_form: dict[str, Tally] = field(default_factory=dict)
    apart: dict[str, Tally] = field(default_factory=dict)
    multi_column: Tally = field(default_factory=Tally)

    def to_dict(self) -> dict[str, Any]:
        return {**self.scored.to_dict(), "by_form": {k: v.to_dict() for k, v in self.by_form.items()},
                "apart": {k: v.to_dict() for k, v in self.apart.items()}, "multi_column": self.multi_column.to_dict()}


def _figures(rows: Sequence[QuestionResult]) -> ExecutionFigures:
    figures = ExecutionFigures()
    for row in rows:
        score = row.execution
        if score is None:
            continue
        if score.apart:
            figures.apart.setdefault(score.apart, Tally()).add(score.right)
            continue
        figures.scored.add(score.right)
        figures.by_form.setdefault(score.form, Tally()).add(score.right)
        if score.gold_rows and len(score.gold_rows[0]) > 1:
            figures.multi_column.add(score.right)
    figures.by_form = dict(sorted(figures.by_form.items()))
    return figures


def execution_figures(rows: Sequence[QuestionResult], strategies: Sequence[str]) -> dict[str, ExecutionFigures]:
    """Per strategy, the figures of its rows that carry an execution score."""
    return {s: _figures([r for r in rows if r.strategy == s]) for s in strategies}


def execution_markdown(figures: dict[str, ExecutionFigures]) -> list[str]:
    """The report's execution-accuracy table: right/questions (accuracy), per form, then apart."""
    names = list(figures)
    lines = ["## Execution accuracy", "", "| form | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    forms = sorted({form for f in figures.values() for form in f.by_form})
    lines.append("| **all scored** | " + " | ".join(f"**{figures[n].scored.cell()}**" for n in names) + " |")
    for form in forms:
        lines.append(f"| {form} | " + " | ".join(figures[n].by_form.get(form, Tally()).cell() for n in names) + " |")
    lines.append("| several columns | " + " | ".join(figures[n].multi_column.cell() for n in names) + " |")
    for reason in sorted({r for f in figures.values() for r in f.apart}):
        lines.append(f"| apart: {reason} | " + " | ".join(figures[n].apart.get(reason, Tally()).cell()
                                                          for n in names) + " |")
    return [*lines, "", f"- {EXECUTION_SEMANTICS}", ""]
