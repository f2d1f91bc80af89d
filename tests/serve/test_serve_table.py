"""Table answers reach ``/api/ask`` and the MCP ``ask`` tool (the page: tests/serve/test_serve_page.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from serve_helpers import DIRECTED, QUESTION
from starlette.testclient import TestClient
from table_strategy import BUDGETS, NAME, QUERY, film_table_strategy, ingest_movies_with_budgets

from sparqlqa.serve.app import create_app
from sparqlqa.serve.mcp_server import TABLE_ROWS, build_server, compact
from sparqlqa.serve.service import ServeSettings, Service
from sparqlqa.stages.answer import Answer
from sparqlqa.stages.table import Column, Table

EX = "https://example.org/movies/"


@pytest.fixture
def service(movies_ttl: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Service:
    film_table_strategy(monkeypatch)
    ingest_movies_with_budgets(movies_ttl, tmp_path)
    return Service(ServeSettings(kbs=("movies",)))


def _check_film_table(table: dict[str, Any]) -> None:
    assert [(c["name"], c["kind"]) for c in table["columns"]] == [("film", "node"), ("director", "node"),
                                                                  ("budget", "value")]
    assert [row[2] for row in table["rows"]] == sorted(BUDGETS.values(), key=float, reverse=True)
    assert table["rows"][0][:2] == [EX + "avatar", EX + "james_cameron"]
    assert table["names"][EX + "james_cameron"] == "James Cameron"
    assert table["query"] == QUERY and table["ordered"] is True


def test_api_ask_returns_the_table(service: Service) -> None:
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    response = client.post("/api/ask", json={"kb": "movies", "question": "films by budget", "strategy": NAME})
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["form"] == "table" and data["headline"].startswith("7 rows: Avatar, James Cameron, 237")
    _check_film_table(data["table"])
    listed = client.post("/api/ask", json={"kb": "movies", "question": QUESTION, "strategy": "offline"}).json()
    assert {listed["table"]["names"][row[0]] for row in listed["table"]["rows"]} == DIRECTED


def _mcp_ask(service: Service, **arguments: Any) -> dict[str, Any]:
    async def main() -> Any:
        with anyio.fail_after(60):
            return await build_server(service).call_tool("ask", {"kb": "movies", **arguments})

    result = anyio.run(main)
    content = result[0] if isinstance(result, tuple) else result
    return dict(json.loads(content[0].text))


def test_mcp_ask_returns_the_table(service: Service) -> None:
    answer = _mcp_ask(service, question="films by budget", strategy=NAME)
    assert answer["form"] == "table" and answer["table"]["total_rows"] == len(BUDGETS)
    _check_film_table(answer["table"])
    counted = _mcp_ask(service, question="How many movies did Ridley Scott direct?", strategy="offline")
    assert counted["table"]["rows"] == [[str(len(DIRECTED))]] and counted["table"]["columns"][0]["name"] == "count"


def test_mcp_cuts_a_long_table_and_says_so() -> None:
    rows: list[list[str | None]] = [[f"{EX}n{n}", f'"{n}"^^<http://www.w3.org/2001/XMLSchema#integer>']
                                    for n in range(TABLE_ROWS + 50)]
    table = Table(columns=[Column("node", "node"), Column("n", "value")], rows=rows,
                  names={f"{EX}n{n}": f"node {n}" for n in range(TABLE_ROWS + 50)})
    out = compact(Answer("q", "kb", "test", form="table", table=table), top=10)["table"]
    assert len(out["rows"]) == TABLE_ROWS and out["truncated"] is True and out["total_rows"] == TABLE_ROWS + 50
    assert out["rows"][-1] == [f"{EX}n{TABLE_ROWS - 1}", str(TABLE_ROWS - 1)]
    assert len(out["names"]) == TABLE_ROWS  # only the names of the rows it kept

