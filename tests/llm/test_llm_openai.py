"""The OpenAI-compatible backend (httpx) against a fake chat-completions server."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from fake_servers import FAST_RETRY, FakeOpenAIServer, completion_body

from sparqlqa.errors import (
    ConfigError,
    LLMAuthError,
    LLMBadRequest,
    LLMConnectionError,
    LLMOverloaded,
    LLMParseError,
    LLMRateLimited,
    LLMTimeout,
)
from sparqlqa.llm import LLMCache, LLMOptions, get_llm
from sparqlqa.llm.keys import set_key
from sparqlqa.llm.openai_backend import OpenAICompatibleLLM
from sparqlqa.llm.retry import RetryPolicy

pytest_plugins = ["llm_fixtures"]

SCHEMA = {"type": "object", "properties": {"ranking": {"type": "array", "items": {"type": "integer"}}},
          "required": ["ranking"]}


def make_llm(server: FakeOpenAIServer, **kwargs: object) -> OpenAICompatibleLLM:
    kwargs.setdefault("retry", FAST_RETRY)
    return OpenAICompatibleLLM("llama3.1", base_url=server.base_url, **kwargs)  # type: ignore[arg-type]


def test_plain_text(openai_server: FakeOpenAIServer, llm_env: Path) -> None:
    openai_server.reply_text("Paris", prompt_tokens=9, completion_tokens=1)
    reply = make_llm(openai_server).complete("Capital of France?", system="Be brief.",
                                             options=LLMOptions(max_tokens=20, temperature=0.3))
    assert reply.text == "Paris" and reply.data is None
    assert (reply.call.backend, reply.call.model) == ("openai", "llama3.1")
    assert (reply.call.input_tokens, reply.call.output_tokens) == (9, 1)
    sent = openai_server.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert "authorization" not in sent.headers  # local servers need no key
    body = sent.json()
    assert body["messages"] == [{"role": "system", "content": "Be brief."},
                                {"role": "user", "content": "Capital of France?"}]
    assert (body["model"], body["max_tokens"], body["temperature"]) == ("llama3.1", 20, 0.3)
    assert "response_format" not in body


def test_spec_with_base_url_and_model(openai_server: FakeOpenAIServer, llm_env: Path) -> None:
    llm = get_llm(f"openai:{openai_server.base_url}#qwen2.5:7b", cache_mode="off")
    assert isinstance(llm, OpenAICompatibleLLM)
    assert (llm.base_url, llm.model) == (openai_server.base_url, "qwen2.5:7b")
    openai_server.reply_text("ok")
    assert llm.complete("hi").text == "ok"
    assert openai_server.requests[0].json()["model"] == "qwen2.5:7b"


def test_structured_output(openai_server: FakeOpenAIServer, llm_env: Path) -> None:
    openai_server.reply_text('```json\n{"ranking": [2, 0, 1]}\n```')
    reply = make_llm(openai_server).complete("Rank", schema=SCHEMA, schema_name="ranking")
    assert reply.data == {"ranking": [2, 0, 1]}
    body = openai_server.requests[0].json()
    assert body["response_format"]["json_schema"] == {"name": "ranking", "schema": SCHEMA, "strict": False}
    assert json.dumps(SCHEMA) in body["messages"][0]["content"]  # the schema is also described


def test_server_rejecting_response_format_is_asked_again_without_it(openai_server: FakeOpenAIServer,
                                                                    llm_env: Path) -> None:
    openai_server.reply_error(400, "unsupported parameter: response_format")
    openai_server.reply_text('{"ranking": [1]}')
    assert make_llm(openai_server).complete("Rank", schema=SCHEMA).data == {"ranking": [1]}
    assert "response_format" not in openai_server.requests[1].json()


def test_garbage_for_a_schema_is_a_parse_error(openai_server: FakeOpenAIServer, llm_env: Path) -> None:
    openai_server.reply_text("ranking: first, then second")
    with pytest.raises(LLMParseError) as info:
        make_llm(openai_server).complete("Rank", schema=SCHEMA)
    assert info.value.raw == "ranking: first, then second"


def test_429_then_success(openai_server: FakeOpenAIServer, llm_env: Path) -> None:
    openai_server.reply_error(429, "slow down", error_type="rate_limit", headers={"retry-after": "20"})
    openai_server.reply_text("ok")
    assert make_llm(openai_server).complete("hi").text == "ok"
    assert len(openai_server.requests) == 2


def test_429_exhausted(openai_server: FakeOpenAIServer, llm_env: Path) -> None:
    for _ in range(2):
        openai_server.reply_error(429, "slow down")
    with pytest.raises(LLMRateLimited, match="gave up after 2 attempts"):
        make_llm(openai_server).complete("hi", options=LLMOptions(max_retries=1))


def test_503_overloaded_exhausted(openai_server: FakeOpenAIServer, llm_env: Path) -> None:
    for _ in range(5):
        openai_server.reply_error(503, "server busy", error_type="server_error")
    with pytest.raises(LLMOverloaded) as info:
        make_llm(openai_server).complete("hi")
    assert "gave up after 5 attempts" in str(info.value) and "server busy" in str(info.value)
    assert len(openai_server.requests) == 5


def test_a_server_error_that_lasts_is_unavailable_not_a_wrong_answer(openai_server: FakeOpenAIServer,
                                                                     llm_env: Path) -> None:
    """A 500 after every retry: a later call may succeed (eval leaves the pair for a rerun, not a miss)."""
    from sparqlqa.errors import LLMUnavailable

    for _ in range(2):
        openai_server.reply_error(500, "internal error", error_type="server_error")
    with pytest.raises(LLMUnavailable, match="server error"):
        make_llm(openai_server).complete("hi", options=LLMOptions(max_retries=1))


def test_401_names_the_environment_variable(openai_server: FakeOpenAIServer, llm_env: Path) -> None:
    openai_server.reply_error(401, "Incorrect API key provided", error_type="invalid_api_key")
    with pytest.raises(LLMAuthError) as info:
        make_llm(openai_server, api_key="sk-local-secret").complete("hi")
    message = info.value.full_message()
    assert "OPENAI_API_KEY" in message and "sparqlqa llm keys set openai" in message
    assert "sk-local-secret" not in message
    assert openai_server.requests[0].headers["authorization"] == "Bearer sk-local-secret"


def test_key_from_keys_file(openai_server: FakeOpenAIServer, llm_env: Path) -> None:
    set_key("openai", "sk-file")
    openai_server.reply_text("ok")
    make_llm(openai_server).complete("hi")
    assert openai_server.requests[0].headers["authorization"] == "Bearer sk-file"


def test_404_ollama_style_error_shows_the_request(openai_server: FakeOpenAIServer, llm_env: Path) -> None:
    openai_server.reply(404, {"error": "model 'llama3.1' not found, try pulling it first"})
    with pytest.raises(LLMBadRequest) as info:
        make_llm(openai_server).complete("Which films?")
    message = info.value.full_message()
    assert "not found" in message and "llama3.1" in message and "Which films?" in message
    assert "check the model name" in message


@pytest.mark.parametrize("body", [b"<html>oops</html>", b'{"choices": []}', b'{"choices": [{"text": 1}]}'])
def test_malformed_body(openai_server: FakeOpenAIServer, llm_env: Path, body: bytes) -> None:
    openai_server.reply(200, body)
    with pytest.raises(LLMParseError, match="malformed response") as info:
        make_llm(openai_server).complete("hi")
    assert info.value.raw == body.decode()


def test_content_as_parts_and_missing_usage(openai_server: FakeOpenAIServer, llm_env: Path) -> None:
    body = completion_body(None)
    body["choices"][0]["message"]["content"] = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    del body["usage"]
    openai_server.reply(200, body)
    reply = make_llm(openai_server).complete("hi")
    assert reply.text == "ab" and reply.call.input_tokens == 0


def test_timeout(openai_server: FakeOpenAIServer, llm_env: Path) -> None:
    openai_server.reply(200, completion_body("late"), delay=1.0)
    with pytest.raises(LLMTimeout):
        make_llm(openai_server).complete("hi", options=LLMOptions(timeout=0.2))


def test_server_not_running(llm_env: Path) -> None:
    server = FakeOpenAIServer()
    base_url = server.base_url
    server.stop()
    llm = OpenAICompatibleLLM("m", base_url=base_url, retry=FAST_RETRY)
    with pytest.raises(LLMConnectionError, match="cannot reach") as info:
        llm.complete("hi", options=LLMOptions(max_retries=1))
    assert "is the server running" in info.value.full_message()


def test_model_is_required(openai_server: FakeOpenAIServer, llm_env: Path) -> None:
    llm = get_llm(f"openai:{openai_server.base_url}", cache_mode="off")
    with pytest.raises(ConfigError, match="needs a model"):
        llm.complete("hi")


def test_base_url_from_environment(openai_server: FakeOpenAIServer, llm_env: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    openai_server.reply_text("ok")
    assert get_llm("openai:gpt-4o-mini", cache_mode="off").complete("hi").text == "ok"


def test_cached_second_call_makes_no_request(openai_server: FakeOpenAIServer, llm_cache: LLMCache) -> None:
    openai_server.reply_text("once")
    llm = make_llm(openai_server, cache=llm_cache)
    assert llm.complete("hi").call.cache_hit is False
    again = llm.complete("hi")
    assert (again.text, again.call.cache_hit) == ("once", True)
    assert len(openai_server.requests) == 1


def test_a_redirect_to_another_host_is_refused(openai_server: FakeOpenAIServer, llm_env: Path) -> None:
    with FakeOpenAIServer() as elsewhere:
        openai_server.reply(307, b"", {"Location": f"{elsewhere.base_url}/chat/completions"})
        with pytest.raises(LLMConnectionError, match="to another host") as info:
            make_llm(openai_server).complete("hi")
        assert elsewhere.requests == [] and len(openai_server.requests) == 1  # refused, not retried
        assert f"127.0.0.1:{elsewhere.port}" in str(info.value)


def test_a_same_host_redirect_is_followed(openai_server: FakeOpenAIServer, llm_env: Path) -> None:
    openai_server.reply(308, b"", {"Location": "/v2/chat/completions"})
    openai_server.reply_text("moved")
    assert make_llm(openai_server).complete("hi").text == "moved"
    assert [r.path for r in openai_server.requests] == ["/v1/chat/completions", "/v2/chat/completions"]


def test_a_retry_after_past_the_deadline_gives_up_at_once(openai_server: FakeOpenAIServer, llm_env: Path) -> None:
    openai_server.reply_error(429, "slow down", headers={"retry-after": "30"})
    openai_server.reply_text("too late")
    llm = make_llm(openai_server, retry=RetryPolicy(retry_after_cap=None))
    started = time.monotonic()
    with pytest.raises(LLMRateLimited, match="another try in 30 s would pass the 2 s timeout"):
        llm.complete("hi", options=LLMOptions(timeout=2.0))
    assert time.monotonic() - started < 1.5 and len(openai_server.requests) == 1
