"""A test-only strategy whose answer is a table: films, their directors and budgets, by budget.

Until text2sparql writes multi-column queries, this is how the CLI, API, MCP and page tests get a table
answer through the real pipeline: one SELECT with three projected variables (a node, a node, a number),
its rows the answer's :class:`~sparqlqa.stages.table.Table` via the one answer builder, form ``table``.
Register it for a test with :func:`film_table_strategy` (a fixture's ``monkeypatch``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sparqlqa.stages.answer import Answer
from sparqlqa.stages.execute import Candidates
from sparqlqa.stages.table import Table
from sparqlqa.strategies.base import Strategy, strategies
from sparqlqa.strategies.pipeline import AskContext, build_answer

NAME = "film-table"
#: budgets in millions, chosen so that sorting them as text would give another order than as numbers
BUDGETS = {"alien": "11", "blade_runner": "28", "gladiator": "103", "avatar": "237", "aliens": "18.5",
           "witness": "12", "top_gun": "15"}
BUDGET_TTL = ("@prefix ex: <https://example.org/movies/> .\n@prefix rel: <https://example.org/movies/rel/> .\n"
              + "".join(f"ex:{film} rel:budget {amount} .\n" for film, amount in BUDGETS.items()))
QUERY = ("SELECT ?film ?director ?budget WHERE {\n"
         "  ?film <https://example.org/movies/rel/directed_by> ?director ;\n"
         "        <https://example.org/movies/rel/budget> ?budget .\n"
         "} ORDER BY DESC(?budget)")


class FilmTable(Strategy):
    """Answers every question with :data:`QUERY`'s rows, as text2sparql answers with its query's."""

    name = NAME

    def run(self, ctx: AskContext) -> Answer:
        with ctx.stage("sparql"):
            result = ctx.kb.query(QUERY)
        ctx.queries.append(result.history().at("sparql"))
        table = Table.from_result(result, ordered=True)
        return build_answer(ctx, candidates=Candidates(target=None, form="table"), table=table)


def film_table_strategy(monkeypatch: pytest.MonkeyPatch) -> str:
    """Register :class:`FilmTable` for this test (undone after it); returns its name."""
    strategies.names()  # the built-ins first, so a later lookup does not reload over ours
    monkeypatch.setitem(strategies._entries, NAME, FilmTable)
    return NAME


def ingest_movies_with_budgets(movies_ttl: Path, folder: Path, *extra: Path) -> Any:
    """The movie fixture plus :data:`BUDGETS`, ingested as the on-disk KB 'movies'."""
    from sparqlqa.ingest import ingest

    budgets = folder / "budgets.ttl"
    budgets.write_text(BUDGET_TTL, "utf-8")
    return ingest([movies_ttl, budgets, *extra], kb="movies")
