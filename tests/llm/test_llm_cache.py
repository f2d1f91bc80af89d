"""The response cache: modes, the only → export → import round trip, concurrency, CLI."""

from __future__ import annotations

import json
import multiprocessing
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_servers import FakeAnthropicServer

from sparqlqa.cli.llm_commands import llm as llm_group
from sparqlqa.errors import LLMError, NotInCache
from sparqlqa.llm import FakeLLM, LLMCache, LLMOptions, get_llm
from sparqlqa.llm.keys import file_mode, keys_path

pytest_plugins = ["llm_fixtures"]

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def run_cli(*args: str, input: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(llm_group, list(args), input=input, catch_exceptions=False)
    return result.exit_code, result.output


def test_use_mode_reads_then_writes(llm_cache: LLMCache) -> None:
    fake = FakeLLM(["first"], cache=llm_cache, cache_mode="use")
    assert fake.complete("q").call.cache_hit is False
    again = fake.complete("q")  # the queue is empty: only the cache can answer
    assert (again.text, again.call.cache_hit, again.call.cost_usd) == ("first", True, 0.0)
    assert again.call.input_tokens == 1 and again.call.key == fake.complete("q").call.key


def test_off_mode_neither_reads_nor_writes(llm_cache: LLMCache) -> None:
    FakeLLM(["cached"], cache=llm_cache).complete("q")
    fake = FakeLLM(["fresh"], cache=llm_cache, cache_mode="off")
    assert fake.complete("q").text == "fresh"
    assert llm_cache.stats()["responses"] == 1


def test_cache_mode_from_environment(llm_cache: LLMCache, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARQLQA_LLM_CACHE", "only")
    with pytest.raises(NotInCache):
        FakeLLM(["never used"], cache=llm_cache).complete("q")
    assert FakeLLM(cache=llm_cache, cache_mode="use").cache_mode == "use"  # the argument wins


def test_key_depends_on_what_changes_the_answer(llm_cache: LLMCache) -> None:
    fake = FakeLLM(["a", "b", "c", "d", {"e": 1}], cache=llm_cache)
    first = fake.complete("q").call.key
    assert fake.complete("q", options=LLMOptions(timeout=5, max_retries=0)).call.key == first  # a hit
    assert fake.complete("q", options=LLMOptions(temperature=0.7)).call.key != first
    assert fake.complete("q", options=LLMOptions(model="other")).call.key != first
    assert fake.complete("q", system="be brief").call.key != first
    assert fake.complete("q", schema={"type": "object"}).call.key != first


def test_structured_answers_are_cached_with_their_data(llm_cache: LLMCache) -> None:
    FakeLLM([{"answer": "x"}], cache=llm_cache).complete("q", schema=SCHEMA)
    hit = FakeLLM(cache=llm_cache).complete("q", schema=SCHEMA)
    assert hit.data == {"answer": "x"} and hit.call.cache_hit


def test_parse_errors_are_not_cached(llm_cache: LLMCache) -> None:
    fake = FakeLLM(["garbage", '{"answer": "ok"}'], cache=llm_cache)
    with pytest.raises(LLMError):
        fake.complete("q", schema=SCHEMA)
    assert fake.complete("q", schema=SCHEMA).data == {"answer": "ok"}


def test_round_trip_only_export_import(anthropic_server: FakeAnthropicServer, llm_env: Path,
                                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.url)  # nothing is queued there
    llm = get_llm("anthropic:claude-test", cache_mode="only")  # no API key needed in this mode
    with pytest.raises(NotInCache) as info:
        llm.complete("Who directed Alien?", system="Be brief.", schema=SCHEMA, schema_name="who")
    assert "export-pending" in info.value.full_message()

    exported = tmp_path / "pending.jsonl"
    code, output = run_cli("export-pending", str(exported))
    assert code == 0 and "1 pending" in output
    [record] = [json.loads(line) for line in exported.read_text().splitlines()]
    assert record["id"] == info.value.key and record["schema"] == SCHEMA
    assert record["messages"] == [{"role": "user", "content": "Who directed Alien?"}]
    assert record["system"] == "Be brief." and record["options"]["model"] == "claude-test"

    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"id": record["id"], "response": {"answer": "Ridley Scott"}}) + "\n")
    code, output = run_cli("import", str(answers), "--json")
    assert code == 0 and json.loads(output)["imported"] == 1

    reply = get_llm("anthropic:claude-test", cache_mode="only").complete(
        "Who directed Alien?", system="Be brief.", schema=SCHEMA, schema_name="who")
    assert reply.data == {"answer": "Ridley Scott"} and reply.call.cache_hit is True
    assert anthropic_server.requests == []  # zero network, from start to end
    assert LLMCache().pending() == []


def test_import_validates_against_the_schema(llm_cache: LLMCache, tmp_path: Path) -> None:
    fake = FakeLLM(cache=llm_cache, cache_mode="only")
    keys = []
    for prompt, schema in (("a", SCHEMA), ("b", SCHEMA), ("c", None)):
        with pytest.raises(NotInCache) as info:
            fake.complete(prompt, schema=schema)
        keys.append(info.value.key)
    lines = [
        {"id": keys[0], "response": "I think {\"answer\": \"fine\"}"},  # text answers are parsed
        {"id": keys[1], "response": {"answer": 3}},  # wrong type
        {"id": keys[2], "response": "plain text"},
        {"id": "f" * 64, "response": "who?"},
        {"id": keys[1], "response": None},
    ]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("\n".join(json.dumps(line) for line in lines) + "\nnot json\n")
    code, output = run_cli("import", str(answers))
    assert code == 1
    assert "imported 2, invalid 2, unknown id 1, unanswered 1" in output
    assert "answers.jsonl:2" in output and "not of type 'string'" in output
    assert "answers.jsonl:6: not JSON" in output
    assert fake.complete("a", schema=SCHEMA).data == {"answer": "fine"}
    assert fake.complete("c").text == "plain text"
    assert [p["id"] for p in llm_cache.pending()] == [keys[1]]


def test_the_import_report_json_is_its_counters_and_problems(llm_cache: LLMCache, tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"id": "f" * 64, "response": "who?"}) + "\n" + json.dumps({"id": "e" * 64}) + "\n")
    report = llm_cache.import_answers(answers).to_dict()
    assert list(report) == ["imported", "invalid", "unknown", "unanswered", "errors"]
    assert [report[k] for k in ("imported", "invalid", "unknown", "unanswered")] == [0, 0, 1, 1]
    assert report["errors"] == [f"{answers}:1: id ffffffffffff is not a pending prompt (already imported, or "
                                "exported from another cache)"]


def test_stats(llm_cache: LLMCache) -> None:
    fake = FakeLLM(["one two", "three"], cache=llm_cache)
    fake.complete("hello world")
    fake.complete("hello world")  # a hit
    fake.complete("other")
    with pytest.raises(LLMError):
        fake.complete("no answer left")
    code, output = run_cli("stats", "--json")
    assert code == 0
    stats = json.loads(output)
    assert stats["responses"] == 2 and stats["pending"] == 0
    usage = stats["usage"]
    assert (usage["calls"], usage["cache_hits"], usage["errors"]) == (4, 1, 1)
    assert usage["output_tokens"] == 2 + 2 + 1
    code, text = run_cli("stats")
    assert code == 0 and "cache hits 1" in text and "fake:fake" in text


def _hammer(path: str, worker: int, count: int) -> None:
    cache = LLMCache(Path(path))
    for i in range(count):
        cache.put(f"{worker}-{i}", backend="fake", model="m", text=f"answer {worker} {i}", data={"i": i})
        cache.add_pending(f"p-{i}", backend="fake", model="m", request={"messages": []})
        assert cache.get(f"{worker}-{i}") is not None


def test_concurrent_writers_do_not_corrupt(llm_cache: LLMCache) -> None:
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_hammer, args=(str(llm_cache.path), w, 25)) for w in range(3)]
    threads = [threading.Thread(target=_hammer, args=(str(llm_cache.path), 10 + w, 25)) for w in range(3)]
    for job in [*procs, *threads]:
        job.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    for thread in threads:
        thread.join(60)
    assert llm_cache.stats()["responses"] == 6 * 25
    assert llm_cache.get("12-24").data == {"i": 24}  # type: ignore[union-attr]
    assert len(llm_cache.pending()) == 25


def test_keys_set_writes_a_private_file(llm_env: Path) -> None:
    code, output = run_cli("keys", "set", "anthropic", input="sk-ant-typed\n")
    assert code == 0 and "sk-ant-typed" not in output
    assert json.loads(keys_path().read_text()) == {"anthropic": "sk-ant-typed"}
    assert file_mode(keys_path()) == 0o600
    code, output = run_cli("keys", "list", "--json")
    assert json.loads(output)["anthropic"] == str(keys_path()) and "sk-ant" not in output
    code, output = run_cli("keys", "delete", "anthropic")
    assert code == 0 and json.loads(keys_path().read_text()) == {}


def test_export_with_nothing_pending(llm_env: Path, tmp_path: Path) -> None:
    code, output = run_cli("export-pending", str(tmp_path / "p.jsonl"), "--json")
    assert code == 0 and json.loads(output)["pending"] == 0
    assert (tmp_path / "p.jsonl").read_text() == ""
