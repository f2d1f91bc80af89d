"""The Anthropic backend driven through the real anthropic SDK against a fake Messages API server."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from fake_servers import FAST_RETRY, FakeAnthropicServer, message_body

from sparqlqa.errors import (
    LLMAuthError,
    LLMBadRequest,
    LLMConnectionError,
    LLMError,
    LLMOverloaded,
    LLMParseError,
    LLMRateLimited,
    LLMTimeout,
)
from sparqlqa.llm import LLMCache, LLMOptions, Message, get_llm
from sparqlqa.llm.anthropic_backend import AnthropicLLM
from sparqlqa.llm.keys import set_key
from sparqlqa.llm.retry import RetryPolicy

API_KEY = "sk-ant-test-secret-123"
pytest_plugins = ["llm_fixtures"]

SCHEMA = {
    "type": "object",
    "properties": {"entities": {"type": "array", "items": {"type": "string"}}},
    "required": ["entities"],
}


def make_llm(server: FakeAnthropicServer, **kwargs: object) -> AnthropicLLM:
    kwargs.setdefault("retry", FAST_RETRY)
    return AnthropicLLM("claude-test", api_key=API_KEY, base_url=server.url, **kwargs)  # type: ignore[arg-type]


def test_plain_text(anthropic_server: FakeAnthropicServer, llm_env: Path) -> None:
    anthropic_server.reply_text("Paris", input_tokens=11, output_tokens=1)
    llm = make_llm(anthropic_server)
    reply = llm.complete(
        "Capital of France?", system="Answer briefly.", options=LLMOptions(max_tokens=50, temperature=0.2)
    )
    assert reply.text == "Paris"
    assert reply.data is None
    call = reply.call
    assert (call.backend, call.model, call.input_tokens, call.output_tokens) == (
        "anthropic",
        "claude-test",
        11,
        1,
    )
    assert call.cache_hit is False and call.latency_ms > 0 and call.error is None
    sent = anthropic_server.requests[0]
    assert sent.path == "/v1/messages"
    assert sent.api_key() == API_KEY
    body = sent.json()
    assert body["model"] == "claude-test" and body["system"] == "Answer briefly."
    assert body["max_tokens"] == 50
    assert "temperature" not in body  # API 2026-10-21 rejects sampling parameters
    assert body["messages"] == [{"role": "user", "content": "Capital of France?"}]
    assert "tools" not in body


def test_multi_turn_messages_are_sent_in_order(anthropic_server: FakeAnthropicServer, llm_env: Path) -> None:
    anthropic_server.reply_text("42")
    make_llm(anthropic_server).complete(
        [Message("user", "a"), Message("assistant", "b"), Message("user", "c")]
    )
    assert [m["content"] for m in anthropic_server.requests[0].json()["messages"]] == ["a", "b", "c"]


def test_structured_output_uses_a_forced_tool(anthropic_server: FakeAnthropicServer, llm_env: Path) -> None:
    anthropic_server.reply_tool({"entities": ["Paris", "France"]}, name="triplets")
    reply = make_llm(anthropic_server).complete("Extract", schema=SCHEMA, schema_name="triplets")
    assert reply.data == {"entities": ["Paris", "France"]}
    assert json.loads(reply.text) == reply.data
    body = anthropic_server.requests[0].json()
    assert body["tools"][0]["name"] == "triplets"
    assert body["tools"][0]["input_schema"] == SCHEMA
    assert body["tool_choice"] == {"type": "tool", "name": "triplets"}


def test_structured_output_with_a_non_object_schema_is_wrapped(
    anthropic_server: FakeAnthropicServer, llm_env: Path
) -> None:
    schema = {"type": "array", "items": {"type": "integer"}}
    anthropic_server.reply_tool({"value": [3, 1, 2]})
    reply = make_llm(anthropic_server).complete("Rank", schema=schema)
    assert reply.data == [3, 1, 2]
    assert anthropic_server.requests[0].json()["tools"][0]["input_schema"]["properties"]["value"] == schema


def test_structured_output_given_as_text_is_parsed(
    anthropic_server: FakeAnthropicServer, llm_env: Path
) -> None:
    anthropic_server.reply_text('Here you go:\n```json\n{"entities": ["Rome"]}\n```')
    assert make_llm(anthropic_server).complete("Extract", schema=SCHEMA).data == {"entities": ["Rome"]}


def test_tool_input_not_matching_the_schema_is_a_parse_error(
    anthropic_server: FakeAnthropicServer, llm_env: Path
) -> None:
    anthropic_server.reply_tool({"entities": "Paris"})
    with pytest.raises(LLMParseError) as info:
        make_llm(anthropic_server).complete("Extract", schema=SCHEMA)
    assert "entities" in str(info.value) and "Paris" in info.value.raw


def test_garbage_text_for_a_schema_is_a_parse_error_with_the_raw_text(
    anthropic_server: FakeAnthropicServer, llm_env: Path
) -> None:
    anthropic_server.reply_text("I cannot do that, Dave.")
    with pytest.raises(LLMParseError) as info:
        make_llm(anthropic_server).complete("Extract", schema=SCHEMA)
    assert info.value.raw == "I cannot do that, Dave."


def test_429_then_success_retries_honouring_retry_after(
    anthropic_server: FakeAnthropicServer, llm_env: Path
) -> None:
    anthropic_server.rate_limited(retry_after=30).reply_text("ok")
    reply = make_llm(anthropic_server).complete("hi")  # retry-after 30 s is capped to 0.01 s
    assert reply.text == "ok"
    assert len(anthropic_server.requests) == 2


def test_429_exhausted_is_rate_limited(anthropic_server: FakeAnthropicServer, llm_env: Path) -> None:
    for _ in range(3):
        anthropic_server.rate_limited()
    with pytest.raises(LLMRateLimited, match="gave up after 3 attempts"):
        make_llm(anthropic_server).complete("hi", options=LLMOptions(max_retries=2))


def test_500_then_success(anthropic_server: FakeAnthropicServer, llm_env: Path) -> None:
    anthropic_server.reply_error(500, "api_error", "boom").reply_text("ok")
    assert make_llm(anthropic_server).complete("hi").text == "ok"


def test_529_overloaded_exhausted_is_a_clear_error(
    anthropic_server: FakeAnthropicServer, llm_env: Path
) -> None:
    anthropic_server.overloaded(times=5)
    with pytest.raises(LLMOverloaded) as info:
        make_llm(anthropic_server).complete("hi")
    message = info.value.full_message()
    assert "overloaded" in message and "529" in message and "gave up after 5 attempts" in message
    assert "try again" in message
    assert len(anthropic_server.requests) == 5  # max_retries=4 → 5 attempts, bounded


def test_backoff_waits_grow_and_are_bounded(anthropic_server: FakeAnthropicServer, llm_env: Path) -> None:
    waits: list[float] = []
    policy = RetryPolicy(backoff_base=0.5, backoff_max=1.5, jitter=False)
    assert [policy.delay(n, None) for n in range(4)] == [0.5, 1.0, 1.5, 1.5]
    assert policy.delay(0, 1000.0) == policy.retry_after_cap
    from sparqlqa.llm.retry import RetryableFailure, call_with_retries

    def always_fails() -> str:
        raise RetryableFailure(LLMOverloaded("busy"))

    with pytest.raises(LLMOverloaded):
        call_with_retries(always_fails, max_retries=3, policy=policy, sleep=waits.append)
    assert waits == [0.5, 1.0, 1.5]


def test_401_names_the_environment_variable(anthropic_server: FakeAnthropicServer, llm_env: Path) -> None:
    anthropic_server.reply_error(401, "authentication_error", "invalid x-api-key")
    with pytest.raises(LLMAuthError) as info:
        make_llm(anthropic_server).complete("hi")
    message = info.value.full_message()
    assert "ANTHROPIC_API_KEY" in message and "sparqlqa llm keys set anthropic" in message
    assert "401" in message
    assert API_KEY not in message
    assert len(anthropic_server.requests) == 1  # not retried


def test_missing_key_is_an_auth_error_before_any_request(
    anthropic_server: FakeAnthropicServer, llm_env: Path
) -> None:
    llm = AnthropicLLM("claude-test", base_url=anthropic_server.url, retry=FAST_RETRY)
    with pytest.raises(LLMAuthError, match="ANTHROPIC_API_KEY"):
        llm.complete("hi")
    assert anthropic_server.requests == []


def test_400_shows_which_request(anthropic_server: FakeAnthropicServer, llm_env: Path) -> None:
    anthropic_server.reply_error(400, "invalid_request_error", "max_tokens: too large")
    with pytest.raises(LLMBadRequest) as info:
        make_llm(anthropic_server).complete("Which films did Kubrick direct?", schema=SCHEMA)
    message = str(info.value)
    assert "max_tokens: too large" in message and "claude-test" in message
    assert "Which films did Kubrick direct?" in message and "/v1/messages" in message
    assert "req_test" in message  # the request id, for support tickets
    assert len(anthropic_server.requests) == 1


@pytest.mark.parametrize("body", [b"this is not json", b'{"foo": 1}', b'{"content": "x"}', b"[1, 2]"])
def test_malformed_body_is_a_parse_error(
    anthropic_server: FakeAnthropicServer, llm_env: Path, body: bytes
) -> None:
    anthropic_server.reply(200, body)
    with pytest.raises(LLMParseError, match="malformed response") as info:
        make_llm(anthropic_server).complete("hi")
    assert info.value.raw == body.decode()


def test_missing_usage_counts_zero_tokens(anthropic_server: FakeAnthropicServer, llm_env: Path) -> None:
    body = message_body([{"type": "text", "text": "hi"}])
    del body["usage"]
    anthropic_server.reply(200, body)
    call = make_llm(anthropic_server).complete("hi").call
    assert (call.input_tokens, call.output_tokens) == (0, 0)


def test_timeout(anthropic_server: FakeAnthropicServer, llm_env: Path) -> None:
    anthropic_server.reply(200, message_body([{"type": "text", "text": "late"}]), delay=1.0)
    with pytest.raises(LLMTimeout, match=r"within 0\.2 s"):
        make_llm(anthropic_server).complete("hi", options=LLMOptions(timeout=0.2))


def test_a_call_for_a_bounded_request_ends_with_the_request(anthropic_server: FakeAnthropicServer,
                                                            llm_env: Path) -> None:
    """Inside a bounded scope (a served ask) the call gets the scope's time left, not its own 30 s."""
    from sparqlqa.query.limits import QueryLimits, bounded

    anthropic_server.reply(200, message_body([{"type": "text", "text": "late"}]), delay=1.5)
    with bounded(QueryLimits(timeout_s=0.3)), pytest.raises(LLMTimeout, match=r"within 0\.3 s"):
        make_llm(anthropic_server).complete("hi", options=LLMOptions(timeout=30))


def test_connection_refused_is_retried_then_a_connection_error(llm_env: Path) -> None:
    server = FakeAnthropicServer()
    url = server.url
    server.stop()  # nothing listens there any more
    llm = AnthropicLLM("claude-test", api_key=API_KEY, base_url=url, retry=FAST_RETRY)
    with pytest.raises(LLMConnectionError, match="cannot reach the Anthropic API"):
        llm.complete("hi", options=LLMOptions(max_retries=1))


def test_base_url_from_environment_and_key_from_keys_file(
    anthropic_server: FakeAnthropicServer, llm_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.url)
    set_key("anthropic", "sk-from-file")
    anthropic_server.reply_text("via env")
    llm = get_llm("anthropic:claude-test", cache_mode="off")
    assert llm.complete("hi").text == "via env"
    assert anthropic_server.requests[0].api_key() == "sk-from-file"


def test_base_url_option_wins(
    anthropic_server: FakeAnthropicServer, llm_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # would fail
    anthropic_server.reply_text("via option")
    llm = AnthropicLLM("claude-test", api_key=API_KEY, retry=FAST_RETRY)
    reply = llm.complete("hi", options=LLMOptions(base_url=anthropic_server.url))
    assert reply.text == "via option"


def test_env_key_wins_over_keys_file(
    anthropic_server: FakeAnthropicServer, llm_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_key("anthropic", "sk-from-file")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-env")
    anthropic_server.reply_text("ok")
    AnthropicLLM("claude-test", base_url=anthropic_server.url).complete("hi")
    assert anthropic_server.requests[0].api_key() == "sk-from-env"


def test_keys_never_reach_records_or_cache(
    anthropic_server: FakeAnthropicServer, llm_cache: LLMCache
) -> None:
    anthropic_server.reply_text("secret-free")
    llm = make_llm(anthropic_server, cache=llm_cache)
    record = llm.complete("hi").call.to_dict()
    assert API_KEY not in json.dumps(record) and API_KEY not in repr(llm)
    assert API_KEY.encode() not in llm_cache.path.read_bytes()
    assert record["cost_usd"] is None  # claude-test has no known price


def test_cost_is_estimated_for_known_models(anthropic_server: FakeAnthropicServer, llm_env: Path) -> None:
    anthropic_server.reply_text("ok", input_tokens=1000, output_tokens=100)
    llm = AnthropicLLM("claude-sonnet-5-5", api_key=API_KEY, base_url=anthropic_server.url)
    assert llm.complete("hi").call.cost_usd == pytest.approx(0.002 + 0.001)


def test_failed_calls_are_recorded_as_usage(
    anthropic_server: FakeAnthropicServer, llm_cache: LLMCache
) -> None:
    anthropic_server.reply_error(400, "invalid_request_error", "nope")
    with pytest.raises(LLMError):
        make_llm(anthropic_server, cache=llm_cache).complete("hi")
    assert llm_cache.stats()["usage"]["errors"] == 1


def test_json_schema_mode_uses_output_config(anthropic_server: FakeAnthropicServer, llm_env: Path) -> None:
    anthropic_server.reply_text('{"entities": ["Oslo"]}')
    llm = make_llm(anthropic_server, structured_output="json_schema")
    assert llm.complete("Extract", schema=SCHEMA).data == {"entities": ["Oslo"]}
    body = anthropic_server.requests[0].json()
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": SCHEMA}}
    assert "tools" not in body


def test_json_schema_mode_unwraps_non_object_schemas(
    anthropic_server: FakeAnthropicServer, llm_env: Path
) -> None:
    anthropic_server.reply_text('{"value": ["a", "b"]}')
    llm = make_llm(anthropic_server, structured_output="json_schema")
    assert llm.complete("List", schema={"type": "array", "items": {"type": "string"}}).data == ["a", "b"]


def test_refused_forced_tool_falls_back_to_json_schema(
    anthropic_server: FakeAnthropicServer, llm_env: Path
) -> None:
    anthropic_server.reply_error(
        400, "invalid_request_error", "Thinking may not be enabled when tool_choice forces tool use."
    )
    anthropic_server.reply_text('{"entities": []}')
    assert make_llm(anthropic_server).complete("Extract", schema=SCHEMA).data == {"entities": []}
    assert "output_config" in anthropic_server.requests[1].json()


def test_a_retry_after_past_the_deadline_gives_up_at_once(anthropic_server: FakeAnthropicServer,
                                                          llm_env: Path) -> None:
    anthropic_server.rate_limited(retry_after=30)
    anthropic_server.reply_text("too late")
    llm = make_llm(anthropic_server, retry=RetryPolicy(retry_after_cap=None))
    started = time.monotonic()
    with pytest.raises(LLMRateLimited, match="another try in 30 s would pass the 2 s timeout"):
        llm.complete("hi", options=LLMOptions(timeout=2.0))
    assert time.monotonic() - started < 1.5 and len(anthropic_server.requests) == 1


def test_sdk_clients_belong_to_the_backend(anthropic_server: FakeAnthropicServer, llm_env: Path) -> None:
    """No process-wide client map: two backends never share an SDK client, one backend reuses its own."""
    first, second = make_llm(anthropic_server), make_llm(anthropic_server)
    assert first._client(anthropic_server.url) is first._client(anthropic_server.url)
    assert first._client(anthropic_server.url) is not second._client(anthropic_server.url)
