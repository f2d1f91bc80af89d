"""``sparqlqa mcp``: the tools ``ask``, ``sparql`` (read-only) and ``schema`` for LLM agents (MCP, stdio).

Built on the official ``mcp`` SDK (``FastMCP``).  A tool's blocking work runs in a worker
thread bounded by the service's time limit (its queries are stopped then, see
:meth:`~sparqlqa.serve.service.Service.bounded_work`); our errors (an update sent to ``sparql``, an
unknown KB) come back as MCP tool errors (``isError``) with the hint, never as a crash.
``ask`` returns a compact answer for agents: ranked items with their evidence, the SPARQL
of each tier that narrowed them, the answer's table (at most :data:`TABLE_ROWS` rows), notes and
timings (``detail=true`` adds the whole ``Answer.to_dict()``).
"""

from __future__ import annotations

__all__ = ["TABLE_ROWS", "build_server", "compact", "run_stdio"]

import time
from collections.abc import Callable
from typing import Any

import anyio
from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError

from sparqlqa.errors import SparqlqaError
from sparqlqa.serve.service import Service
from sparqlqa.stages.answer import Answer
from sparqlqa.text_input import CODE, NAME, PROSE, TextKind, clean_text
from sparqlqa.version import __version__

INSTRUCTIONS = ("Answers natural-language questions over RDF knowledge graphs with audited, read-only SPARQL. "
                "Call schema(kb) to see a KB's types and relations, ask(kb, question) for ranked answers "
                "with evidence and the SPARQL that found them, sparql(kb, query) to run your own read query.")


async def _run(service: Service, work: Callable[[], Any]) -> Any:
    """``work`` in a thread, bounded by the time limit; our errors as tool errors."""
    deadline = time.monotonic() + service.settings.timeout_s  # the work's queries are stopped then
    try:
        with anyio.fail_after(service.settings.timeout_s):
            return await anyio.to_thread.run_sync(service.bounded_work(work, deadline), abandon_on_cancel=True)
    except TimeoutError:
        raise ToolError(f"timed out after {service.settings.timeout_s:g} s\n  hint: ask a narrower question, or "
                        "start 'sparqlqa mcp' with a larger --timeout") from None
    except SparqlqaError as exc:
        raise ToolError(exc.full_message()) from None


def _text(value: Any, kind: TextKind, field: str) -> str:
    """A tool argument checked once, here at the edge: bad text is a tool error, never a crash or a hang."""
    try:
        return clean_text(value, kind=kind, field=field)
    except SparqlqaError as exc:
        raise ToolError(exc.full_message()) from None


#: rows of an answer's table an agent gets at most (a longer one is cut: ``truncated``, ``total_rows``)
TABLE_ROWS = 200


def compact(answer: Answer, top: int) -> dict[str, Any]:
    """The parts of an answer an agent needs: items, evidence, the SPARQL of each tier, the table."""
    data = answer.to_dict()
    items = [{key: item[key] for key in ("rank", "iri", "label", "type_label", "score", "tier", "source",
                                         "matched", "evidence_text")} for item in data["items"][:top]]
    compiled = (data.get("candidates") or {}).get("compiled") or []
    sparql = [{"tier": q.get("tier"), "note": q.get("note", ""), "sparql": q.get("sparql", "")} for q in compiled]
    if not sparql:  # strategies without compiled tiers (fiske, vss): the queries that ran
        sparql = [{"tier": None, "note": q.get("stage", ""), "sparql": q.get("query", "")}
                  for q in data["queries"] if q.get("stage") in ("sparql", "explore")]
    return {"question": data["question"], "kb": data["kb"], "strategy": data["strategy"], "form": data["form"],
            "value": data["value"], "headline": data["headline"], "table": _table(data["table"]), "items": items,
            "sparql": sparql, "notes": data["notes"], "llm_calls": len(data["llm_calls"]),
            "timings_ms": data["timings_ms"], "lang": data["lang"]}


def _table(table: dict[str, Any]) -> dict[str, Any]:
    """The answer's table (``Answer.to_dict()["table"]``), its rows cut at :data:`TABLE_ROWS`."""
    rows = table["rows"]
    if len(rows) <= TABLE_ROWS:
        return {**table, "total_rows": len(rows)}
    kept = rows[:TABLE_ROWS]
    shown = {key for row in kept for key in row}
    names = {key: name for key, name in table["names"].items() if key in shown}
    return {**table, "rows": kept, "names": names, "truncated": True, "total_rows": len(rows)}


def build_server(service: Service, *, verbose: bool = False) -> FastMCP:
    """The MCP server with its tools bound to ``service``; it introduces itself as sparqlqa and its version
    (not the SDK's) and logs to stderr at WARNING (INFO with ``verbose``)."""
    server = FastMCP("sparqlqa", instructions=INSTRUCTIONS, log_level="INFO" if verbose else "WARNING")
    server._mcp_server.version = __version__  # what ``initialize`` reports as serverInfo.version

    @server.tool()
    async def ask(kb: str, question: str, strategy: str | None = None, k: int = 10,
                  detail: bool = False, exact: bool = False, lang: str | None = None) -> dict[str, Any]:
        """Answer a natural-language question over knowledge base `kb`.

        Returns ranked items (IRI, label, score, tier: 0 = satisfies every triplet pattern) with their
        evidence triples, the SPARQL query of each tier that narrowed them, and `table`: the answer as
        columns and rows (IRIs for nodes, named in `names`; lexical forms for values; a count is one cell).
        `strategy`: offline (no LLM), 4step, fiske, text2sparql, vss (default: the server's).  `detail`: add
        the whole answer record.
        `matched` is false for fill-in (similar to the question, but not satisfying the query); `exact`:
        return only matched items.  `lang`: the question's language (de, fr ...; default: detected); answers
        are named in it where the KB has a label in it.
        """
        payload: dict[str, Any] = {"kb": _text(kb, NAME, "kb"), "question": _text(question, PROSE, "question"),
                                   "k": k, "exact": exact}
        if strategy:
            payload["strategy"] = _text(strategy, NAME, "strategy")
        if lang:
            payload["lang"] = _text(lang, NAME, "lang")
        answer: Answer = await _run(service, lambda: service.ask(payload))
        out = compact(answer, k)
        if detail:
            out["answer"] = answer.to_dict()
        return out

    @server.tool()
    async def sparql(kb: str, query: str) -> dict[str, Any]:
        """Run a read-only SPARQL query (SELECT, ASK, CONSTRUCT, DESCRIBE) on knowledge base `kb`.

        Updates (INSERT, DELETE, LOAD, CLEAR, DROP, ...) are refused.  Common prefixes (rdf, rdfs, owl,
        xsd, skos, kb:) need no declaration.  Results use the SPARQL 1.1 JSON results format.
        """
        body = {"kb": _text(kb, NAME, "kb"), "query": _text(query, CODE, "query")}
        return await _run(service, lambda: service.sparql(body))

    @server.tool()
    async def schema(kb: str) -> dict[str, Any]:
        """The schema of knowledge base `kb`: node types, relations (IRI, label, domain → range, count)."""
        name = _text(kb, NAME, "kb")
        return await _run(service, lambda: service.schema(name))

    @server.tool()
    async def kbs() -> list[dict[str, Any]]:
        """The knowledge bases this server answers over (name, store kind, triple/node counts)."""
        return await _run(service, service.kbs)

    return server


def run_stdio(service: Service, *, verbose: bool = False) -> None:
    """Serve MCP on stdin/stdout until the client closes it (every request line gets an answer:
    :mod:`sparqlqa.serve.mcp_stdio`); logs at WARNING, or INFO when ``verbose``."""
    anyio.run(_serve_stdio, build_server(service, verbose=verbose))


async def _serve_stdio(server: FastMCP) -> None:
    from sparqlqa.serve.mcp_stdio import stdio_transport

    lowlevel = server._mcp_server  # what FastMCP.run_stdio_async runs, here over our transport
    async with stdio_transport() as (read_stream, write_stream):
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
