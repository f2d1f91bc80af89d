"""The MCP stdio transport's line parser: every request line gets a message for the server or a reply."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

pytest.importorskip("mcp")

from sparqlqa.serve.mcp_stdio import MAX_LINE, _read_line, parse_line


def _reply(raw: bytes) -> dict[str, Any]:
    message, reply = parse_line(raw)
    assert message is None and reply is not None
    return json.loads(reply.model_dump_json(by_alias=True, exclude_none=True))  # type: ignore[no-any-return]


def test_a_good_line_goes_to_the_server() -> None:
    message, reply = parse_line(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
    assert reply is None and message is not None and message.root.id == 1  # type: ignore[union-attr]


@pytest.mark.parametrize(("raw", "expected"), [
    (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "ask", "arguments": '
     b'{"question": "a\\ud800"}}}', "the call's params.arguments.question holds a lone surrogate (U+D800)"),
    (b'{"jsonrpc": "2.0", "id": "x", "method": "tools/call", "params": {"name": "ask", "arguments": '
     b'{"question": "a\xff"}}}', "the MCP message is not valid UTF-8: byte 0xFF"),
])
def test_a_broken_tool_call_gets_an_error_result(raw: bytes, expected: str) -> None:
    answer = _reply(raw)
    assert answer["id"] in (7, "x")
    assert answer["result"]["isError"] is True and expected in answer["result"]["content"][0]["text"]


def test_other_requests_get_a_json_rpc_error_and_notifications_nothing() -> None:
    answer = _reply(b'{"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "\\udc00"}}')
    assert answer["error"]["code"] == -32602 and "lone surrogate" in answer["error"]["message"]
    truncated = _reply(b'{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "a')
    assert truncated["error"]["code"] == -32700  # not JSON at all; the id was found in its text
    assert parse_line(b'{"jsonrpc": "2.0", "method": "notifications/x", "params": {"a": "\\ud800"}}') == (None, None)
    assert parse_line(b"not json") == (None, None)


def test_an_overlong_line_is_cut_and_skipped() -> None:
    stream = io.BytesIO(b"x" * (MAX_LINE + 10) + b"\n" + b"next\n")
    first = _read_line(stream)
    assert len(first) == MAX_LINE + 1 and _read_line(stream) == b"next\n"
