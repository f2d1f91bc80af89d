"""The stdio transport of ``sparqlqa mcp``: every request line gets an answer, even one the SDK cannot read.

The SDK's own stdio transport decodes stdin with ``errors="replace"`` (invalid UTF-8 silently becomes
U+FFFD) and drops a line its JSON parser refuses, such as one holding ``"\\ud800"`` (a lone surrogate is
valid JSON but not valid Unicode): the client then waits for an answer that never comes.  Here stdin is
read as bytes, one line at most :data:`MAX_LINE` bytes; a line that is not valid UTF-8, not valid
JSON-RPC or too long is answered by its ``id`` — a ``tools/call`` with an error result (``isError``),
anything else with a JSON-RPC error — and one warning line goes to stderr.  The server keeps running.
"""

from __future__ import annotations

__all__ = ["MAX_LINE", "parse_line", "stdio_transport"]

import json
import logging
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from io import TextIOWrapper
from typing import Any

import anyio
import mcp.types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from sparqlqa.errors import InvalidText
from sparqlqa.text_input import CODE, clean_json, decode_utf8

log = logging.getLogger("sparqlqa.mcp")
#: the longest message line read; a longer one is refused (and skipped to its end)
MAX_LINE = 4 * 1024 * 1024
#: the ``id`` of a message too long or too broken to parse, found by its text
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,200}")')


def parse_line(raw: bytes) -> tuple[types.JSONRPCMessage | None, types.JSONRPCMessage | None]:
    """(the message to hand to the server, or the reply to send back instead); both ``None``: drop it."""
    try:
        return types.JSONRPCMessage.model_validate_json(decode_utf8(raw, "the MCP message")), None
    except InvalidText as exc:
        problem = exc.full_message()
    except ValidationError:
        problem = ""
    try:
        data = json.loads(raw.decode("utf-8", "surrogateescape"))
    except (ValueError, RecursionError):
        data = None
    if not problem and isinstance(data, dict):
        problem = _text_problem(data)
    return None, refusal(_request_id(data, raw), data, problem or "the message is not a valid MCP request")


def _text_problem(data: dict[str, Any]) -> str:
    """What is wrong with the text of a message Python's JSON parser read ("" if nothing)."""
    try:
        clean_json(data.get("params"), {}, field="the call's params", default=CODE)
    except InvalidText as exc:
        return exc.full_message()
    return ""


def _request_id(data: Any, raw: bytes) -> str | int | None:
    if isinstance(data, dict):
        found = data.get("id")
        return found if isinstance(found, (str, int)) and not isinstance(found, bool) else None
    match = _ID.search(raw[:4096])
    if match is None:
        return None
    value = json.loads(match.group(1).decode("utf-8", "replace"))
    return value if isinstance(value, (str, int)) else None


def refusal(request_id: str | int | None, data: Any, problem: str) -> types.JSONRPCMessage | None:
    """The answer to a refused request: an error result for ``tools/call``, a JSON-RPC error otherwise."""
    log.warning("refused an MCP message: %s", problem.splitlines()[0])
    if request_id is None:
        return None  # a notification, or no id to answer to
    method = data.get("method") if isinstance(data, dict) else None
    if method == "tools/call":
        result = types.CallToolResult(content=[types.TextContent(type="text", text=problem)], isError=True)
        return types.JSONRPCMessage(types.JSONRPCResponse(
            jsonrpc="2.0", id=request_id, result=result.model_dump(by_alias=True, exclude_none=True)))
    code = types.PARSE_ERROR if data is None else types.INVALID_PARAMS
    return types.JSONRPCMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id,
                                                   error=types.ErrorData(code=code, message=problem)))


def _read_line(stream: Any) -> bytes:
    """One line of ``stream`` (bytes), at most :data:`MAX_LINE` bytes kept; b"" at the end."""
    line: bytes = stream.readline(MAX_LINE + 1)
    if len(line) > MAX_LINE and not line.endswith(b"\n"):
        rest = line
        while rest and not rest.endswith(b"\n"):  # skip the remainder without keeping it
            rest = stream.readline(MAX_LINE)
    return line


async def _reader(stdin: Any, to_server: MemoryObjectSendStream[SessionMessage | Exception],
                  to_client: MemoryObjectSendStream[SessionMessage]) -> None:
    async with to_server, to_client:
        while True:
            raw = await anyio.to_thread.run_sync(_read_line, stdin, abandon_on_cancel=True)
            if not raw:
                return
            if not raw.strip():
                continue
            if len(raw) > MAX_LINE:
                reply = refusal(_request_id(None, raw), None,
                                f"the MCP message is over {MAX_LINE:,} bytes; send a shorter one")
                message = None
            else:
                message, reply = parse_line(raw)
            if message is not None:
                await to_server.send(SessionMessage(message))
            elif reply is not None:
                await to_client.send(SessionMessage(reply))


async def _writer(stdout: Any, from_server: MemoryObjectReceiveStream[SessionMessage]) -> None:
    async with from_server:
        async for session_message in from_server:
            await stdout.write(session_message.message.model_dump_json(by_alias=True, exclude_none=True) + "\n")
            await stdout.flush()


@asynccontextmanager
async def stdio_transport() -> AsyncIterator[tuple[MemoryObjectReceiveStream[SessionMessage | Exception],
                                                   MemoryObjectSendStream[SessionMessage]]]:
    """(read stream, write stream) for ``mcp.server.lowlevel.Server.run`` over this process's stdin/stdout."""
    stdout = anyio.wrap_file(TextIOWrapper(sys.stdout.buffer, encoding="utf-8"))
    to_server, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_server = anyio.create_memory_object_stream[SessionMessage](0)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_reader, sys.stdin.buffer, to_server, write_stream.clone())
        tasks.start_soon(_writer, stdout, from_server)
        yield read_stream, write_stream
        tasks.cancel_scope.cancel()
