"""MCP onboarding: ``mcp --print-config`` starts a working server in the real MCP client, which reports
sparqlqa's name and version; ``mcp --help`` lists every tool; quiet stderr; errors speak of MCP."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

import anyio
from click.testing import CliRunner
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from sparqlqa.cli import main
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.version import __version__

BAD_QUERY = "SELECT ?d WHERE {\n  ?f foaff:name ?d .\n}"


def printed_config(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["mcp", "--print-config", *args])
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout)["mcpServers"]["sparqlqa"])


def listed_tools() -> set[str]:
    text = CliRunner().invoke(main, ["mcp", "--help"]).stdout
    block = text.split("Tools:", 1)[1].split("\n\n", 1)[0]
    return set(re.findall(r"^\s+(\w+)\s{2,}\S", block, flags=re.MULTILINE))


def run_session(config: dict[str, Any], check: Any, extra: tuple[str, ...] = ()) -> tuple[Any, str]:
    """Start the server exactly as a client would from ``config``; returns ``check``'s result and stderr."""
    params = StdioServerParameters(command=config["command"], args=[*config["args"], *extra], env=config["env"])
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:

        async def session_main() -> Any:
            with anyio.fail_after(90):
                async with stdio_client(params, errlog=errlog) as (read, write), \
                        ClientSession(read, write) as session:
                    init = await session.initialize()
                    return init, await check(session)

        out = anyio.run(session_main)
        errlog.seek(0)
        return out, errlog.read()


def test_print_config_names_this_python_and_home(sparqlqa_home: Path) -> None:
    config = printed_config("--kb", "movies", "--strategy", "offline")
    assert config["args"] == ["-m", "sparqlqa", "mcp", "--kb", "movies", "--strategy", "offline"]
    assert config["env"]["SPARQLQA_HOME"] == str(sparqlqa_home)
    assert Path(config["command"]).is_file()


def test_the_printed_config_works_in_the_mcp_client(movies_kb: KnowledgeBase) -> None:
    async def check(session: ClientSession) -> dict[str, Any]:
        return {"tools": {tool.name for tool in (await session.list_tools()).tools},
                "bad": await session.call_tool("sparql", {"kb": "movies", "query": BAD_QUERY}),
                "other": await session.call_tool("schema", {"kb": "films"}),
                "kbs": await session.call_tool("kbs", {})}

    (init, out), stderr = run_session(printed_config("--kb", "movies"), check)
    assert init.serverInfo.name == "sparqlqa" and init.serverInfo.version == __version__
    assert out["tools"] == listed_tools() == {"kbs", "schema", "ask", "sparql"}
    bad = out["bad"]
    assert bad.isError
    text = bad.content[0].text
    assert "line 2, column 6: unknown prefix 'foaff:'" in text and "\n    |      ^" in text
    assert "did you mean foaf: (<http://xmlns.com/foaf/0.1/>)?" in text
    other = out["other"].content[0].text
    assert out["other"].isError and "the kbs tool lists them" in other and "/api/" not in other
    assert not out["kbs"].isError
    assert "Processing request" not in stderr and "INFO" not in stderr


def test_verbose_logs_requests(movies_kb: KnowledgeBase) -> None:
    async def check(session: ClientSession) -> None:
        await session.list_tools()

    _, stderr = run_session(printed_config("--kb", "movies"), check, extra=("-v",))
    assert "Processing request" in stderr
