"""The LLM interface: specs, registry, resolution, FakeLLM, call records, laziness."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from sparqlqa.cli.llm_commands import llm_from_options, llm_options
from sparqlqa.errors import ConfigError, LLMError, MissingExtraError, UnknownNameError
from sparqlqa.llm import (
    DEFAULT_ANTHROPIC_MODEL,
    FakeLLM,
    LLMCache,
    LLMRequest,
    Message,
    get_llm,
    llms,
    resolve_llm_spec,
)
from sparqlqa.llm.keys import set_key

pytest_plugins = ["llm_fixtures"]


def test_registry_lists_builtins() -> None:
    assert {"anthropic", "openai", "fake"} <= set(llms.names())


def test_importing_the_package_does_not_import_the_sdk() -> None:
    code = ("import sys, sparqlqa.llm as m; m.llms.names(); m.get_llm('fake', cache_mode='off'); "
            "print('anthropic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_asking_for_a_name_imports_no_backend() -> None:
    """The registry knows built-ins by module path: ``name in llms`` imports nothing, ``get`` that one module."""
    code = ("import sys, sparqlqa.llm as m\n"
            "backends = ('sparqlqa.llm.anthropic_backend', 'sparqlqa.llm.openai_backend')\n"
            "known = ['anthropic' in m.llms, 'openai' in m.llms, 'nope' in m.llms]\n"
            "before = [b for b in backends if b in sys.modules]\n"
            "m.get_llm('openai:http://127.0.0.1:9/v1#m', cache_mode='off')\n"
            "print(known, before, [b for b in backends if b in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[True, True, False] [] ['sparqlqa.llm.openai_backend']"


def test_missing_sdk_is_a_missing_extra(llm_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(MissingExtraError) as info:
        get_llm("anthropic", cache_mode="off")
    assert "pip install 'sparqlqa[anthropic]'" in info.value.full_message()


def test_spec_parsing(llm_env: Path) -> None:
    assert get_llm("anthropic", cache_mode="off").model == DEFAULT_ANTHROPIC_MODEL
    assert get_llm("anthropic:claude-haiku-4-5", cache_mode="off").model == "claude-haiku-4-5"
    assert get_llm("fake:tiny", cache_mode="off").model == "tiny"
    assert get_llm("fake", cache_mode="off").cache is None
    assert isinstance(get_llm("fake").cache, LLMCache)  # default: the cache under $SPARQLQA_HOME
    with pytest.raises(UnknownNameError):
        get_llm("gpt5")
    with pytest.raises(ConfigError, match="no LLM"):
        get_llm("offline")
    with pytest.raises(ConfigError, match="cache mode"):
        get_llm("fake", cache_mode="sometimes")


def test_resolve_llm_spec(llm_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_llm_spec(None) is None
    set_key("anthropic", "sk-file")
    assert resolve_llm_spec(None) == f"anthropic:{DEFAULT_ANTHROPIC_MODEL}"
    monkeypatch.setenv("SPARQLQA_LLM", "openai:http://localhost:11434/v1#llama3.1")
    assert resolve_llm_spec(None) == "openai:http://localhost:11434/v1#llama3.1"
    assert resolve_llm_spec("fake") == "fake"
    assert resolve_llm_spec("offline") is None
    monkeypatch.setenv("SPARQLQA_LLM", "offline")
    assert resolve_llm_spec(None) is None


def test_resolve_llm_spec_from_env_key(llm_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    assert resolve_llm_spec("") == f"anthropic:{DEFAULT_ANTHROPIC_MODEL}"


def test_fake_llm_queue_callables_and_errors() -> None:
    seen: list[LLMRequest] = []

    def echo(request: LLMRequest) -> str:
        seen.append(request)
        return request.messages[-1].content[::-1]

    fake = FakeLLM(["plain", {"answer": 1}, echo, RuntimeError("boom")])
    assert fake.complete("one two three", system="sys word").call.input_tokens == 5
    reply = fake.complete("q")
    assert (reply.data, reply.text) == ({"answer": 1}, '{"answer": 1}')
    assert fake.complete([Message("user", "abc")]).text == "cba"
    with pytest.raises(RuntimeError):
        fake.complete("q")
    with pytest.raises(LLMError, match="no answer queued") as info:
        fake.complete("what now?")
    assert "push" in (info.value.hint or "")
    assert len(fake.requests) == 5 and seen[0].messages == [Message("user", "abc")]
    fake.push("later")
    assert fake.complete("x").text == "later" and fake.remaining == 0


def test_call_record_is_json_ready() -> None:
    reply = FakeLLM(['{"a": 1}']).complete([{"role": "user", "content": "hi"}], schema={"type": "object"})
    record = reply.call.to_dict()
    assert json.loads(json.dumps(record)) == record
    assert record["messages"] == [{"role": "user", "content": "hi"}]
    assert record["response_data"] == {"a": 1} and record["schema"] == {"type": "object"}
    assert record["cost_usd"] == 0.0 and record["cache_hit"] is False and len(record["key"]) == 64


def test_bad_prompts_are_config_errors() -> None:
    with pytest.raises(ConfigError):
        FakeLLM(["x"]).complete([])
    with pytest.raises(ConfigError):
        FakeLLM(["x"]).complete([{"role": "system", "content": "no"}])  # type: ignore[list-item]


def test_llm_options_decorator(llm_env: Path) -> None:
    @click.command()
    @llm_options
    def cmd(llm_spec: str | None, llm_cache: str | None) -> None:
        llm = llm_from_options(llm_spec, llm_cache)
        click.echo(f"{llm_spec} {llm_cache} {llm.spec if llm else 'offline'} {llm.cache_mode if llm else '-'}")

    runner = CliRunner()
    assert runner.invoke(cmd, []).output.strip() == "None None offline -"
    assert runner.invoke(cmd, ["--llm", "fake", "--llm-cache", "off"]).output.strip() == "fake off fake:fake off"
    result = runner.invoke(cmd, ["--llm", "fake"], env={"SPARQLQA_LLM_CACHE": "only"})
    assert result.output.strip() == "fake only fake:fake only"
    assert runner.invoke(cmd, ["--llm-cache", "bogus"]).exit_code == 2


def test_the_llm_errors_a_later_call_may_not_meet_are_llm_unavailable() -> None:
    """The error tree says which LLM failures are transient (the eval runner leaves those pairs for a rerun)."""
    from sparqlqa import errors

    def below(cls: type[LLMError]) -> set[type[LLMError]]:
        return {cls}.union(*(below(sub) for sub in cls.__subclasses__()))

    transient = {c.__name__ for c in below(LLMError) if issubclass(c, errors.LLMUnavailable)}
    assert transient == {"LLMUnavailable", "LLMRateLimited", "LLMOverloaded", "LLMTimeout", "LLMConnectionError"}
    assert not issubclass(errors.LLMAuthError, errors.LLMUnavailable)
