"""``sparqlqa mcp`` driven by the official MCP SDK's own client over stdio (a real child process)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from serve_helpers import DIRECTED, QUESTION
from serve_helpers import mcp_server_params as _params

from sparqlqa.kb.knowledge_base import KnowledgeBase

REPO = Path(__file__).resolve().parents[2]
COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"


def _json(result: Any) -> Any:
    return json.loads(result.content[0].text)


def _session_run(check: Any, *args: str) -> Any:
    async def main() -> Any:
        with anyio.fail_after(90):
            async with stdio_client(_params(*args)) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                return await check(session)

    return anyio.run(main)


def test_tools_answer_with_sparql_and_refuse_updates(movies_kb: KnowledgeBase) -> None:
    async def check(session: ClientSession) -> dict[str, Any]:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        asked = await session.call_tool("ask", {"kb": "movies", "question": QUESTION, "strategy": "offline", "k": 5})
        update = await session.call_tool("sparql", {"kb": "movies", "query": "DELETE WHERE { ?s ?p ?o }"})
        count = await session.call_tool("sparql", {"kb": "movies", "query": COUNT})
        schema = await session.call_tool("schema", {"kb": "movies"})
        unknown = await session.call_tool("schema", {"kb": "films"})
        return {"tools": tools, "ask": asked, "update": update, "count": count, "schema": schema,
                "unknown": unknown}

    out = _session_run(check, "--kb", "movies")
    assert {"ask", "sparql", "schema"} <= set(out["tools"])
    assert "read-only" in (out["tools"]["sparql"].description or "")
    asked = out["ask"]
    assert not asked.isError
    answer = _json(asked)
    assert {item["label"] for item in answer["items"] if item["tier"] == 0} == DIRECTED
    assert (answer["form"], answer["value"]) == ("list", None) and answer["headline"]
    assert answer["sparql"] and answer["sparql"][0]["tier"] == 0
    assert "directed_by" in answer["sparql"][0]["sparql"] and answer["sparql"][0]["sparql"].startswith("SELECT")
    assert any("Ridley Scott" in line for line in answer["items"][0]["evidence_text"])
    update = out["update"]
    assert update.isError and "refused to send a SPARQL update" in update.content[0].text
    assert "hint:" in update.content[0].text
    assert not out["count"].isError
    bindings = _json(out["count"])["results"]["results"]["bindings"]
    assert int(bindings[0]["n"]["value"]) == int(movies_kb.query(COUNT).rows[0][0].value) > 0  # unchanged
    assert any(r["label"] == "directed by" for r in _json(out["schema"])["relations"])
    assert out["unknown"].isError and "not served" in out["unknown"].content[0].text


def test_missing_extra_is_our_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from sparqlqa.cli import main

    monkeypatch.setitem(sys.modules, "mcp", None)
    result = CliRunner().invoke(main, ["mcp"])
    assert result.exit_code == 1
    assert "pip install 'sparqlqa[serve]'" in result.output and "Traceback" not in result.output
