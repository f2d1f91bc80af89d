"""The offline strategy's answer to an analytical question over a graph mapped from tables.

:func:`table_answer` reads the question (:func:`~sparqlqa.strategies.offline.tables.forms.read_table_question`),
runs the query and hands its table to :func:`~sparqlqa.strategies.pipeline.build_answer`: a count is a
count, one cell a value, one column a list, several columns a table.  It returns ``None`` when the KB is
not of that shape or no reading of the question holds; the strategy then reads the question as a path
and, when that too finds nothing, says so (:data:`NO_READING_NOTE`) instead of presenting vector-similar
nodes as answers.
"""

from __future__ import annotations

__all__ = ["NO_READING_NOTE", "honest", "table_answer", "table_form"]

from typing import TYPE_CHECKING

from sparqlqa.query.built_query import BuiltQuery
from sparqlqa.stages.table import Table
from sparqlqa.strategies.offline.tables.forms import read_table_question
from sparqlqa.strategies.offline.tables.mentions import find_mentions, tokens
from sparqlqa.strategies.offline.tables.model_file import table_model

if TYPE_CHECKING:
    from sparqlqa.stages.answer import Answer
    from sparqlqa.strategies.pipeline import AskContext

NO_READING_NOTE = ("offline: no reading of the question holds over this graph's tables (nearest reading: {nearest}); "
                   "no answer is given rather than nodes that are only similar to the question — ask with an LLM "
                   "strategy (--strategy text2sparql) for this question")


def table_form(table: Table) -> tuple[str, int | str | None]:
    """The answer form of a query's table (:meth:`~sparqlqa.stages.table.Table.form`)."""
    return table.form()


def table_answer(ctx: AskContext) -> Answer | None:
    """The answer from the question's analytical reading, or None when there is none."""
    from sparqlqa.strategies.pipeline import build_answer, run_table_query, table_rows_ranking

    model = table_model(ctx.kb)
    if model is None:
        return None
    reading = read_table_question(ctx.question, model, ctx.kb.schema.type_predicate)
    if reading is None:
        return None
    table = run_table_query(ctx, BuiltQuery.select(reading.sparql), reading.columns, aggregates=reading.aggregates,
                            ordered=reading.ordered, failure="offline: the table reading's query failed ({why})")
    if table is None:
        return None
    form, value = table_form(table)
    ranking, candidates = table_rows_ranking(ctx, table, form=form, ordered=reading.ordered,
                                             value=value if not isinstance(value, str) else None)
    ctx.note(f"offline: read as a question about the graph's tables (what it names: {reading.reading})")
    answer = build_answer(ctx, ranking, candidates=candidates, table=table)
    if form == "value":
        answer.value = value
    return answer


def honest(ctx: AskContext, answer: Answer) -> Answer:
    """On a graph mapped from tables, an answer with no matched item is no answer: its vector fill-in is
    dropped and a note says so, with the nearest reading and a hint (issue 35 item 4)."""
    from sparqlqa.stages.table import Table as AnswerTable

    if table_model(ctx.kb) is None or any(item.matched for item in answer.items) \
            or answer.form in ("count", "boolean"):
        return answer
    triplets = answer.triplets
    model = table_model(ctx.kb)
    named = ", ".join(m.text for m in find_mentions(model, tokens(ctx.question))) if model is not None else ""
    nearest = "; ".join(f"{t.head.text} {t.relation} {t.tail.text}" for t in triplets.triplets) \
        if triplets is not None and triplets.triplets else f"it names {named}" if named else "none"
    answer.items = []
    answer.notes.append(NO_READING_NOTE.format(nearest=nearest))
    answer.table = AnswerTable.of_keys("answer", [], matched=False)
    return answer
