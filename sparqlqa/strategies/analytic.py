"""4step's answer to an analytical question: the triplets' columns, aggregates, groups and negated
patterns as one query (:mod:`sparqlqa.stages.analytic`), its table handed to the one answer builder.

The form is the table's (:meth:`~sparqlqa.stages.table.Table.form`): a COUNT cell is a count, another single
cell a value, one column a list, several a table.  Stage 4 (the LLM rerank) runs only when the answer is a
list of nodes; a table, a count or a value keeps the query's rows in the query's order.
"""

from __future__ import annotations

__all__ = ["analytic_answer"]

from dataclasses import replace
from typing import TYPE_CHECKING

from sparqlqa.errors import QueryError
from sparqlqa.kb.data_names import stored_data_names
from sparqlqa.query.built_query import BuiltQuery
from sparqlqa.stages.analytic import compile_analytic, wants_analytic
from sparqlqa.stages.modes import ColumnKind

if TYPE_CHECKING:
    from sparqlqa.stages.answer import Answer
    from sparqlqa.stages.linking import LinkedConstants
    from sparqlqa.stages.triplets import Triplets
    from sparqlqa.strategies.pipeline import AskContext

#: the note when the analytical query cannot be built or run (the usual way answers then)
FAILED_NOTE = "the analytical query could not be run ({why}); answering from the triplets' target"


def _link_nodes(ctx: AskContext, triplets: Triplets) -> LinkedConstants:
    """Link the constants that name nodes (a constant at the value end of a literal relation is a value)."""
    from sparqlqa.stages.linking import link_constants

    literal = {r.iri for r in ctx.kb.schema.relations if r.kind == "literal"}
    nodes = [t for t in triplets.triplets if t.tail.is_variable or t.relation_iri not in literal]
    with ctx.stage("linking"):
        linked = link_constants(replace(triplets, triplets=nodes), ctx.kb, embedder=ctx.word_embedder)
    for note in linked.notes:
        ctx.note(note)
    return linked


def analytic_answer(ctx: AskContext, triplets: Triplets, *, rerank: bool) -> Answer | None:
    """The answer of an analytical form, or None (with a note) when the triplets ask for none or its query
    cannot be built or run: the caller then goes the usual way."""
    from sparqlqa.strategies.pipeline import build_answer, rerank_top, run_table_query, table_rows_ranking

    if not triplets.triplets or not wants_analytic(triplets, tables=bool(stored_data_names(ctx.kb))):
        return None
    linked = _link_nodes(ctx, triplets)
    try:
        compiled = compile_analytic(triplets, linked, ctx.kb.schema)
    except QueryError as exc:
        ctx.note(FAILED_NOTE.format(why=exc.message))
        return None
    table = run_table_query(ctx, BuiltQuery.select(compiled.sparql), compiled.columns,
                            aggregates=compiled.aggregates, ordered=compiled.ordered, failure=FAILED_NOTE)
    if table is None:
        return None
    form, value = table.form()
    if form == "value" and table.columns[0].kind == ColumnKind.NODE:  # one node ("the library with the most books")
        form, value = "list", None
    nodes = form == "list" and table.columns[0].kind == ColumnKind.NODE
    ranking, candidates = table_rows_ranking(ctx, table, form=form, value=value, ordered=compiled.ordered,
                                             target=compiled.columns[0])
    reranked = rerank_top(ctx, ranking, enabled=rerank and nodes)
    answer = build_answer(ctx, ranking, reranked, triplets=triplets, linked=linked, candidates=candidates,
                          table=None if nodes else table)
    if form == "value":
        answer.value = value
    return answer
