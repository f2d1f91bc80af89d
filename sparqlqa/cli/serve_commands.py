"""``sparqlqa serve`` (HTTP API + page) and ``sparqlqa mcp`` (MCP tools over stdio).

Both keep one process warm: KBs, their indexes and the embedder are loaded once.  The
``serve`` extra's packages are imported only inside the commands.
"""

from __future__ import annotations

__all__ = ["mcp", "serve"]

import ipaddress
import os
import socket
import sys
from typing import TYPE_CHECKING, Any

import click

from sparqlqa.cli.output import KB_NAME, note, print_json
from sparqlqa.cli.remote_options import endpoint_timeout
from sparqlqa.errors import ConfigError
from sparqlqa.query.limits import DEFAULT_MAX_MEMORY_MB
from sparqlqa.serve.open_kbs import DEFAULT_MAX_OPEN_KBS

if TYPE_CHECKING:
    from sparqlqa.serve.service import ServeSettings, Service

TOKEN_ENV = "SPARQLQA_SERVE_TOKEN"
#: open connections one client address may hold (``--max-connections-per-client``)
DEFAULT_MAX_PER_CLIENT = 16
DEFAULT_TIMEOUT_S = 120.0
#: a remote KB's endpoint query may take this share of ``--timeout``: it ends (freeing its worker) just
#: before the request does, so the client hears which endpoint failed rather than a bare timeout
ENDPOINT_SHARE = 0.9


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) binds only the loopback interface.

    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("0.0.0.0"), is_loopback("::1")
    (True, True, False, True)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        try:
            return all(ipaddress.ip_address(info[4][0]).is_loopback
                       for info in socket.getaddrinfo(host, None))
        except (OSError, ValueError):
            return False


def check_binding(host: str, token: str | None) -> None:
    """Refuse to bind a non-loopback ``host`` without a token."""
    if not is_loopback(host) and not token:
        raise ConfigError(f"refusing to serve on {host} without a token: anyone who can reach it could use it",
                          hint=f"pass --token SECRET (or set ${TOKEN_ENV}); clients then send "
                          "'Authorization: Bearer SECRET'; or bind 127.0.0.1")


def _settings(kbs: tuple[str, ...], llms: tuple[str, ...], strategy: str | None, embedder: str | None,
              allow_service: tuple[str, ...] = (), **limits: Any) -> ServeSettings:
    from sparqlqa.query.service_guard import allowance
    from sparqlqa.serve.service import ServeSettings

    return ServeSettings(kbs=tuple(dict.fromkeys(kbs)), llms=tuple(dict.fromkeys(llms)), strategy=strategy,
                         embedder=embedder, allow_service=tuple(sorted(allowance(allow_service))), **limits)


def common_options(func: click.decorators.FC) -> click.decorators.FC:
    for option in reversed([
        click.option("--kb", "kbs", multiple=True, metavar="NAME", type=KB_NAME,
                     help="A KB to serve (repeatable; default: every KB, looked up per request)."),
        click.option("--llm", "llms", multiple=True, metavar="SPEC",
                     help="An LLM clients may choose (repeatable; the first is the default; default: "
                     "$SPARQLQA_LLM or offline)."),
        click.option("--strategy", metavar="NAME", help="Default strategy (as 'sparqlqa ask')."),
        click.option("--embedder", "embedder", metavar="SPEC", help="Embedder for the vector ranking."),
        click.option("--timeout", "timeout_s", type=click.FloatRange(min=0.1), default=DEFAULT_TIMEOUT_S,
                     show_default=True,
                     help="Seconds one request may take; its queries are stopped then (504 / a tool error), "
                     "and any query it sends to a remote endpoint gives up before."),
        click.option("--allow-service", "allow_service", multiple=True, metavar="HOST",
                     help="A host (HOST or HOST:PORT) a query's SERVICE may call (repeatable; default: SERVICE "
                     "is refused)."),
        click.option("--query-memory", "query_memory_mb", type=click.IntRange(min=16), default=DEFAULT_MAX_MEMORY_MB,
                     show_default=True, metavar="MB",
                     help="Memory one query may use; past it the query is stopped (413 / a tool error)."),
        click.option("--max-open-kbs", "max_open_kbs", type=click.IntRange(min=1), default=DEFAULT_MAX_OPEN_KBS,
                     show_default=True, metavar="N",
                     help="KBs (and KB groups) held open with their indexes and query workers; past it the "
                     "least recently used is closed (reopened on its next request)."),
    ]):
        func = option(func)
    return func


@click.command("serve")
@common_options
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (non-loopback needs --token).")
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True)
@click.option("--token", envvar=TOKEN_ENV, metavar="SECRET",
              help=f"Require 'Authorization: Bearer SECRET' on /api/* (${TOKEN_ENV}).")
@click.option("--max-body", type=click.IntRange(min=1024), default=64 * 1024, show_default=True,
              help="Largest request body in bytes (413 past it).")
@click.option("--workers", type=click.IntRange(min=1, max=64), default=4, show_default=True,
              help="Requests answered at once (threads).")
@click.option("--read-timeout", type=click.FloatRange(min=0.1), default=20.0, show_default=True,
              help="Seconds a client has to send a whole request (408 and closed past it).")
@click.option("--max-connections", type=click.IntRange(min=1), default=64, show_default=True,
              help="Open connections at most (a surplus client gets 503 and is closed).")
@click.option("--max-connections-per-client", "max_per_client", type=click.IntRange(min=1),
              default=DEFAULT_MAX_PER_CLIENT, show_default=True, metavar="N",
              help="Open connections from one client address at most (its surplus gets 429 and is closed; "
              "behind a proxy every client has the proxy's address).")
def serve(kbs: tuple[str, ...], llms: tuple[str, ...], strategy: str | None, embedder: str | None,
          timeout_s: float, allow_service: tuple[str, ...], query_memory_mb: int, max_open_kbs: int, host: str,
          port: int, token: str | None, max_body: int, workers: int, read_timeout: float, max_connections: int,
          max_per_client: int) -> None:
    """Serve KBs over HTTP: a JSON API (/api/ask, /api/sparql, /api/schema/KB, /api/kbs) and a page at /."""
    from sparqlqa.serve import require

    check_binding(host, token)
    uvicorn = require("uvicorn", "sparqlqa serve")
    require("starlette", "sparqlqa serve")
    from sparqlqa.serve.app import create_app
    from sparqlqa.serve.service import Service

    service = Service(_settings(kbs, llms, strategy, embedder, allow_service, timeout_s=timeout_s,
                                query_memory_mb=query_memory_mb, max_body=max_body, workers=workers,
                                max_open_kbs=max_open_kbs))
    with endpoint_timeout(ENDPOINT_SHARE * timeout_s, cap=True):  # no endpoint query outlives a request
        _warm(service)
        app = create_app(service, token=token or None, loopback=is_loopback(host))
        shown = f"[{host}]" if ":" in host else host
        note(f"serving on http://{shown}:{port}/ (Ctrl-C stops){' with a token' if token else ''}")
        uvicorn.run(app, host=host, port=port, log_level="warning", server_header=False, access_log=False,
                    http=_protocol(read_timeout, max_connections, max_per_client))


def _protocol(read_timeout: float, max_connections: int, max_per_client: int) -> Any:
    """Our h11 protocol class (read deadline, connection caps), its access log on stderr (one line per request:
    client, method, path, status, ms; uvicorn's own access log, which shows query strings, stays off)."""
    import logging
    import sys

    from sparqlqa.serve.connections import access_log, guarded_protocol

    if not access_log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        access_log.addHandler(handler)
    access_log.setLevel(logging.INFO)
    access_log.propagate = False
    return guarded_protocol(read_timeout=read_timeout, max_connections=max_connections,
                            max_per_client=max_per_client)


def _warm(service: Service) -> None:
    """Open and warm every served KB; a node index not at hand is built in the background (with a note), as
    ``sparqlqa index`` would, unless the served strategy answers from it alone (``vss``): then first, with
    progress.  Until then requests answer as a first ``ask`` does."""
    from sparqlqa.cli.ask_commands import prepare_index
    from sparqlqa.embed.embedders import get_embedder
    from sparqlqa.kb.knowledge_base import open_kb
    from sparqlqa.vectors.index import index_supported

    names = list(service.settings.kbs) or [kb["name"] for kb in service.kbs()]
    embedder = get_embedder(service.settings.embedder)
    unbuilt = []
    for name in names:
        with open_kb(name) as kb:
            if not prepare_index(kb, embedder, [service.settings.strategy], ahead=False) and index_supported(kb):
                unbuilt.append(name)
    note(f"warming {len(names)} KB(s): {', '.join(names) or '(none yet)'}")
    service.warm()
    if unbuilt:
        note(f"building the node index of {', '.join(unbuilt)} ({embedder.model_id}) in the background; until "
             "it is finished, answers have no 'similar, not matched' fill-in")
        service.build_indexes_behind(unbuilt, on_done=lambda name, outcome: note(
            f"the node index of {name} is built" if outcome == "built" else
            f"warning: the node index of {name} was not built: {outcome}"))


def mcp_args(kbs: tuple[str, ...], llms: tuple[str, ...], strategy: str | None, embedder: str | None,
             timeout_s: float, allow_service: tuple[str, ...],
             query_memory_mb: int = DEFAULT_MAX_MEMORY_MB, max_open_kbs: int = DEFAULT_MAX_OPEN_KBS) -> list[str]:
    """The ``sparqlqa mcp`` options that reproduce these settings (for ``--print-config``).

    >>> mcp_args(("movies",), (), "offline", None, 120.0, ())
    ['--kb', 'movies', '--strategy', 'offline']
    >>> mcp_args((), (), None, None, 30.0, (), 256, 3)
    ['--timeout', '30', '--query-memory', '256', '--max-open-kbs', '3']
    """
    args: list[str] = []
    for flag, values in (("--kb", kbs), ("--llm", llms), ("--allow-service", allow_service)):
        for value in values:
            args += [flag, value]
    for flag, chosen in (("--strategy", strategy), ("--embedder", embedder)):
        if chosen:
            args += [flag, chosen]
    if timeout_s != DEFAULT_TIMEOUT_S:
        args += ["--timeout", f"{timeout_s:g}"]
    if query_memory_mb != DEFAULT_MAX_MEMORY_MB:
        args += ["--query-memory", str(query_memory_mb)]
    if max_open_kbs != DEFAULT_MAX_OPEN_KBS:
        args += ["--max-open-kbs", str(max_open_kbs)]
    return args


def client_config(args: list[str]) -> dict[str, Any]:
    """The ``mcpServers`` entry an MCP client needs to start this server over stdio: this Python with
    ``-m sparqlqa mcp ARGS``, and the environment that finds the same KBs (and this code)."""
    from sparqlqa.paths import sparqlqa_home

    env = {"SPARQLQA_HOME": str(sparqlqa_home())}
    for name in ("PYTHONPATH", "SPARQLQA_LLM", "SPARQLQA_EMBEDDER", "SPARQLQA_DEVICE"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    return {"mcpServers": {"sparqlqa": {"command": sys.executable, "args": ["-m", "sparqlqa", "mcp", *args],
                                        "env": env}}}


@click.command("mcp")
@common_options
@click.option("--print-config", is_flag=True,
              help="Print the JSON block an MCP client needs to start this server (command, args, env) and exit.")
@click.option("-v", "--verbose", is_flag=True, help="Log every request (INFO) on stderr; default: warnings only.")
def mcp(kbs: tuple[str, ...], llms: tuple[str, ...], strategy: str | None, embedder: str | None,
        timeout_s: float, allow_service: tuple[str, ...], query_memory_mb: int, max_open_kbs: int,
        print_config: bool, verbose: bool) -> None:
    """Run an MCP server on stdio for LLM agents (Claude Desktop, Cursor, ...).

    \b
    Tools:
      kbs       the knowledge bases served (name, store, triple and node counts)
      schema    a KB's node types and relations (IRI, label, domain -> range, count)
      ask       answer a question: ranked items with evidence and the SPARQL that found them
      sparql    run a read-only SPARQL query (SELECT, ASK, CONSTRUCT, DESCRIBE)

    \b
    Set up a client: paste the output of
      sparqlqa mcp --print-config [--kb NAME ...]
    into its MCP configuration (e.g. claude_desktop_config.json). Keys for an
    LLM (ANTHROPIC_API_KEY, ...) go into that block's "env" by hand.
    """
    if print_config:
        print_json(client_config(mcp_args(kbs, llms, strategy, embedder, timeout_s, allow_service, query_memory_mb,
                                          max_open_kbs)))
        return
    from sparqlqa.serve import require

    require("mcp", "sparqlqa mcp")
    from sparqlqa.serve.mcp_server import run_stdio
    from sparqlqa.serve.service import Service

    os.environ.setdefault("SPARQLQA_PROGRESS_EVERY", "3600")  # stdout is the protocol; keep stderr quiet too
    settings = _settings(kbs, llms, strategy, embedder, allow_service, timeout_s=timeout_s,
                         query_memory_mb=query_memory_mb, kbs_listing="the kbs tool", max_open_kbs=max_open_kbs)
    with endpoint_timeout(ENDPOINT_SHARE * timeout_s, cap=True):  # no endpoint query outlives a tool call
        service = Service(settings)
        try:
            run_stdio(service, verbose=verbose)
        finally:
            service.close()  # the KBs' query workers stop with the server
