"""``exact`` on ``POST /api/ask`` and the MCP ``ask`` tool (issue 26, item 4)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from serve_helpers import DIRECTED, QUESTION
from starlette.testclient import TestClient

from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.serve.app import create_app
from sparqlqa.serve.service import ServeSettings, Service

REPO = Path(__file__).resolve().parents[2]


def test_api_ask_exact_returns_only_matched_items(movies_kb: KnowledgeBase) -> None:
    client = TestClient(create_app(Service(ServeSettings(kbs=("movies",)))), base_url="http://127.0.0.1")
    body = {"kb": "movies", "question": QUESTION, "strategy": "offline", "k": 5}
    every = client.post("/api/ask", json=body).json()["items"]
    assert [i["matched"] for i in every] == [True, True, True, False, False]
    exact = client.post("/api/ask", json={**body, "exact": True, "topic": "exclude"})
    assert exact.status_code == 200, exact.text
    items = exact.json()["items"]
    assert {i["label"] for i in items} == DIRECTED and all(i["matched"] for i in items)
    assert exact.json()["meta"]["topic"] == "exclude"
    for bad, said in (({"exact": "yes"}, "'exact' must be true or false"), ({"topic": "sometimes"}, "topic mode")):
        refused = client.post("/api/ask", json={**body, **bad})
        assert refused.status_code == 400 and said in refused.json()["error"], refused.text


def _json(result: Any) -> Any:
    return json.loads(result.content[0].text)


def test_mcp_ask_has_an_exact_flag_and_says_what_matched(movies_kb: KnowledgeBase) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    params = StdioServerParameters(command=sys.executable, args=["-m", "sparqlqa", "mcp"], env=env, cwd=str(REPO))

    async def main() -> Any:
        with anyio.fail_after(90):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                args = {"kb": "movies", "question": QUESTION, "strategy": "offline", "k": 5}
                every = await session.call_tool("ask", args)
                exact = await session.call_tool("ask", {**args, "exact": True})
                return _json(every), _json(exact)

    every, exact = anyio.run(main)
    assert [i["matched"] for i in every["items"]] == [True, True, True, False, False]
    assert {i["label"] for i in exact["items"]} == DIRECTED and all(i["matched"] for i in exact["items"])
