"""A real ``sparqlqa serve`` app on a free loopback port (uvicorn in a thread), for API and browser tests."""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sparqlqa.serve.app import create_app
from sparqlqa.serve.service import Service

QUESTION = "Which films did Ridley Scott direct?"
#: what the offline strategy finds for QUESTION on tests/fixtures/movies.ttl (tier 0)
DIRECTED = {"Alien", "Blade Runner", "Gladiator"}
REPO = Path(__file__).resolve().parents[1]


def mcp_server_params(*args: str) -> Any:
    """How the MCP SDK's stdio client starts ``python -m sparqlqa mcp ARGS`` from this checkout."""
    from mcp import StdioServerParameters

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return StdioServerParameters(command=sys.executable, args=["-m", "sparqlqa", "mcp", *args], env=env,
                                 cwd=str(REPO))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running(service: Service, *, token: str | None = None) -> Iterator[str]:
    """Serve ``service`` on 127.0.0.1 until the block ends; yields the base URL."""
    import uvicorn

    port = free_port()
    config = uvicorn.Config(create_app(service, token=token), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
