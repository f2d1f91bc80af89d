"""One-round LLM replay: ``eval --llm-cache only`` → export → import → rerun, stage by stage.

The Anthropic SDK is pointed at the local fake Messages API server with no
reply queued: the whole round trip must run without one network request.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fake_servers import FakeAnthropicServer

from sparqlqa.cli import main
from sparqlqa.errors import NotInCache
from sparqlqa.llm import FakeLLM, LLMCache, llm_context
from sparqlqa.strategies.ask import ask
from sparqlqa.strategies.pipeline import WAITING_NOTE

pytest_plugins = ["llm_fixtures"]

QUESTIONS = [
    {"id": "ridley", "question": "Which films did Ridley Scott direct?", "answers": ["Alien"]},
    {"id": "cameron", "question": "Which films did James Cameron direct?", "answers": ["Avatar"]},
]
TRIPLETS = {
    "Ridley Scott": {"triplets": [{"head": {"kind": "variable", "text": "?x", "type": "movie"},
                                   "relation": "directed by",
                                   "tail": {"kind": "constant", "text": "Ridley Scott", "type": "person"}}],
                     "target": "?x"},
    "James Cameron": {"triplets": [{"head": {"kind": "variable", "text": "?x", "type": "movie"},
                                    "relation": "directed by",
                                    "tail": {"kind": "constant", "text": "James Cameron", "type": "person"}}],
                      "target": "?x"},
}


def cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def export(tmp_path: Path, name: str) -> list[dict[str, Any]]:
    path = tmp_path / name
    result = cli("llm", "export-pending", str(path), "--json")
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in path.read_text().splitlines()]


def answer_all(tmp_path: Path, name: str, records: list[dict[str, Any]]) -> None:
    lines = []
    for record in records:
        prompt = record["messages"][-1]["content"]
        if record["stage"] == "triplets":
            response: Any = next(v for k, v in TRIPLETS.items() if k in prompt.split("Question:")[-1])
        else:
            response = "[2] > [1]"
        lines.append(json.dumps({"id": record["id"], "response": response}))
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    result = cli("llm", "import", str(path), "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["imported"] == len(records), result.output


def test_replay_round_trip_one_stage_per_export(movies_kb: Any, anthropic_server: FakeAnthropicServer,
                                                tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.url)
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    args = ("eval", "jsonl", str(questions), "--kb", "movies", "--strategy", "4step", "--llm",
            "anthropic:claude-sonnet-5-5", "--llm-cache", "only", "--out", str(tmp_path / "out"), "--no-plots")

    assert cli(*args).exit_code == 3  # incomplete: the triplet prompts wait
    first = export(tmp_path, "1.jsonl")
    assert [(r["stage"], r["question_id"], r["kb"], r["strategy"]) for r in first] == [
        ("triplets", "ridley", "movies", "4step"), ("triplets", "cameron", "movies", "4step")]
    answer_all(tmp_path, "1.jsonl", first)

    assert cli(*args).exit_code == 3  # incomplete: the rerank prompts wait
    second = export(tmp_path, "2.jsonl")
    assert [(r["stage"], r["question_id"]) for r in second] == [("rerank", "ridley"), ("rerank", "cameron")]
    answer_all(tmp_path, "2.jsonl", second)

    done = cli(*args, "--json")
    assert done.exit_code == 0
    metrics = json.loads(done.stdout)
    assert metrics["complete"] and metrics["strategies"]["4step"]["questions"] == 2
    usage = metrics["strategies"]["4step"]["llm_per_question"]
    assert usage["calls"] == 2.0 and usage["input_tokens"] > 0 and usage["cost_usd"] > 0  # estimated
    for flag in ((), ("--stale",)):
        listed = cli("llm", "pending", *flag, "--json")
        assert listed.exit_code == 0 and json.loads(listed.stdout)["count"] == 0
    assert anthropic_server.requests == []


def test_a_triplet_miss_stops_the_question(movies_kb: Any, llm_cache: LLMCache) -> None:
    llm = FakeLLM(cache=llm_cache, cache_mode="only")
    answer = ask(movies_kb, "Which films did Ridley Scott direct?", strategy="4step", llm=llm)
    assert answer.items == [] and WAITING_NOTE in answer.notes
    [record] = llm_cache.pending()
    assert record["stage"] == "triplets" and answer.pending_llm == [record["id"]]


def test_prompts_a_rerun_no_longer_asks_become_stale(movies_kb: Any, llm_cache: LLMCache, tmp_path: Path) -> None:
    question = "Which films did Ridley Scott direct?"
    llm = FakeLLM(cache=llm_cache, cache_mode="only")
    with llm_context(question_id="q1"):
        ask(movies_kb, question, strategy="vss+rerank", llm=llm, k=3)
        first = llm_cache.pending()
        ask(movies_kb, question, strategy="vss+rerank", llm=llm, k=2)  # another prompt now
    [current] = llm_cache.pending()
    [stale] = llm_cache.pending(stale=True)
    assert stale["id"] == first[0]["id"] and current["id"] != stale["id"]
    assert (current["question_id"], current["stage"], current["question"]) == ("q1", "rerank", question)
    listed = CliRunner().invoke(main, ["llm", "pending", "--stale", "--clear"])
    assert listed.exit_code == 0 and "1 stale prompt(s); removed 1" in listed.output
    assert llm_cache.pending(stale=None) == [current]
    exported = CliRunner().invoke(main, ["llm", "export-pending", str(tmp_path / "p.jsonl")])
    assert "wrote 1 pending" in exported.output


def test_imported_answers_carry_estimated_tokens(llm_cache: LLMCache, tmp_path: Path) -> None:
    fake = FakeLLM(cache=llm_cache, cache_mode="only")
    with pytest.raises(NotInCache):
        fake.complete("x" * 400, system="be brief")
    [record] = llm_cache.pending()
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"id": record["id"], "response": "y" * 40}) + "\n")
    llm_cache.import_answers(answers)
    hit = fake.complete("x" * 400, system="be brief").call
    assert (hit.input_tokens, hit.output_tokens, hit.tokens_estimated) == (2 + 100, 10, True)
    assert llm_cache.stats()["usage"]["estimated_calls"] == 1


def test_a_cache_file_from_an_older_release_gets_the_new_columns(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE pending (key TEXT PRIMARY KEY, backend TEXT NOT NULL, model TEXT NOT NULL, "
                     "request TEXT NOT NULL, misses INTEGER NOT NULL DEFAULT 1, created REAL NOT NULL)")
        conn.execute("INSERT INTO pending VALUES ('k', 'fake', 'm', '{\"messages\": []}', 1, 0)")
    cache = LLMCache(path)
    assert cache.pending() == [{"id": "k", "backend": "fake", "model": "m", "question_id": None, "question": None,
                                "kb": None, "strategy": None, "stage": None, "stale": False, "messages": []}]
    assert cache.stats()["stale_pending"] == 0
