"""The eval runner: resumable JSONL (incl. a real SIGKILL), pending LLM answers, workers, reports."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sparqlqa.errors import (
    ConfigError,
    DatasetError,
    LLMConnectionError,
    LLMRateLimited,
    LLMTimeout,
    NotInCache,
    QueryError,
)
from sparqlqa.evaluation import EvalError, EvalRun, Question, RunSettings, evaluate, select_questions
from sparqlqa.evaluation.results import QuestionResult
from sparqlqa.evaluation.runner import RESULTS_FILE, ResultsFile
from sparqlqa.llm import LLMCall
from sparqlqa.stages.answer import Answer, AnswerItem

REPO = Path(__file__).resolve().parents[2]


def make_answer(question: str, strategy: str, labels: list[str], calls: int = 0) -> Answer:
    items = [AnswerItem(iri=f"urn:n:{label}", label=label, type=None, score=1.0 - i / 10, tier=None,
                        source="vector", evidence=None, snippet="") for i, label in enumerate(labels)]
    llm_calls = [LLMCall(backend="fake", model="m", input_tokens=100, output_tokens=10, cost_usd=0.001,
                         cache_hit=i % 2 == 1) for i in range(calls)]
    return Answer(question=question, kb="t", strategy=strategy, items=items, llm_calls=llm_calls,
                  timings_ms={"total": 5.0})


class StandIn:
    """A stand-in ``ask``: 'good' answers gold first, 'bad' answers it third; records every call."""

    def __init__(self, fail: dict[str, BaseException] | None = None, delay: float = 0.0) -> None:
        self.calls: list[tuple[str, str]] = []
        self.fail = fail or {}
        self.delay = delay
        self.active = 0
        self.max_active = 0
        self._lock = threading.Lock()

    def __call__(self, kb: Any, question: str, *, strategy: str, llm: Any, k: int,
                 llm_cache: str | None) -> Answer:
        with self._lock:
            self.calls.append((question, strategy))
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            time.sleep(self.delay)
            if question in self.fail:
                raise self.fail[question]
            gold = question.split()[-1]
            order = [gold, "x", "y"] if strategy == "good" else ["x", "y", gold]
            return make_answer(question, strategy, order, calls=2 if strategy == "good" else 0)
        finally:
            with self._lock:
                self.active -= 1


def questions(n: int) -> list[Question]:
    return [Question(str(i), f"question about g{i}", gold_labels=frozenset({f"g{i}"})) for i in range(n)]


def settings(**overrides: Any) -> RunSettings:
    values: dict[str, Any] = {"dataset": "jsonl", "source": "/q.jsonl", "kb": "t", "strategies": ["good", "bad"]}
    values.update(overrides)
    return RunSettings(**values)


def read_rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / RESULTS_FILE).read_text().splitlines()]


def test_rows_carry_metrics_llm_usage_and_latency(tmp_path: Path) -> None:
    ask = StandIn()
    run = EvalRun("kb", questions(2), settings(), tmp_path, ask=ask)
    stats = run.run()
    assert (stats.done, stats.already_done, stats.total_pairs) == (4, 0, 4)
    rows = {(r["id"], r["strategy"]): r for r in read_rows(tmp_path)}
    good, bad = rows[("1", "good")], rows[("1", "bad")]
    assert (good["rank"], good["hit@1"], good["mrr"]) == (1, 1.0, 1.0)
    assert (bad["rank"], bad["hit@1"], bad["hit@5"], bad["mrr"]) == (3, 0.0, 1.0, pytest.approx(1 / 3))
    assert good["llm"] == {"calls": 2, "input_tokens": 200, "output_tokens": 20, "cost_usd": 0.002,
                           "cache_hits": 1}
    assert good["latency_ms"] == 5.0 and good["items"][0]["label"] == "g1"
    assert rows[("0", "good")]["warmup"] is True and good["warmup"] is False


def test_resume_skips_written_pairs_and_never_asks_twice(tmp_path: Path) -> None:
    first = StandIn()
    EvalRun("kb", questions(3), settings(), tmp_path, ask=first).run()
    second = StandIn()
    stats = EvalRun("kb", questions(5), settings(), tmp_path, ask=second).run()
    assert stats.already_done == 6 and stats.done == 4
    assert {q for q, _ in second.calls} == {"question about g3", "question about g4"}
    pairs = [(r["id"], r["strategy"]) for r in read_rows(tmp_path)]
    assert len(pairs) == len(set(pairs)) == 10


def test_a_torn_last_line_is_cut_and_that_pair_answered_again(tmp_path: Path) -> None:
    EvalRun("kb", questions(2), settings(), tmp_path, ask=StandIn()).run()
    path = tmp_path / RESULTS_FILE
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])  # as a SIGKILL in the middle of the last write
    ask = StandIn()
    EvalRun("kb", questions(2), settings(), tmp_path, ask=ask).run()
    assert len(ask.calls) == 1
    pairs = [(r["id"], r["strategy"]) for r in read_rows(tmp_path)]
    assert sorted(pairs) == sorted({("0", "good"), ("0", "bad"), ("1", "good"), ("1", "bad")})


def test_a_complete_last_row_without_newline_is_kept(tmp_path: Path) -> None:
    results = ResultsFile(tmp_path / RESULTS_FILE)
    results.path.write_text('{"id": "1", "strategy": "s"}\n{"id": "2", "strategy": "s"}')
    assert set(results.load()) == {("1", "s"), ("2", "s")}
    results.append(QuestionResult("3", "s", "question 3"))
    assert [json.loads(x)["id"] for x in results.path.read_text().splitlines()] == ["1", "2", "3"]


def test_a_corrupt_middle_line_is_refused(tmp_path: Path) -> None:
    results = ResultsFile(tmp_path / RESULTS_FILE)
    results.path.write_text('{"id": "1", "strategy": "s"}\n{broken\n{"id": "2", "strategy": "s"}\n')
    with pytest.raises(DatasetError, match="corrupt line"):
        results.load()


def test_pending_llm_answers_are_not_written_until_available(tmp_path: Path) -> None:
    class Pending(StandIn):
        def __call__(self, kb: Any, question: str, **kwargs: Any) -> Answer:
            if question.endswith("g0"):
                raise NotInCache("k" * 20)
            answer = super().__call__(kb, question, **kwargs)
            if question.endswith("g1"):
                answer.pending_llm = ["key"]
            return answer

    stats = EvalRun("kb", questions(3), settings(strategies=["good"]), tmp_path, ask=Pending()).run()
    assert (stats.done, stats.pending) == (1, 2)
    assert [r["id"] for r in read_rows(tmp_path)] == ["2"]
    later = StandIn()
    EvalRun("kb", questions(3), settings(strategies=["good"]), tmp_path, ask=later).run()
    assert sorted(q for q, _ in later.calls) == ["question about g0", "question about g1"]


def test_strategy_errors_count_as_misses_transient_ones_are_retried(tmp_path: Path) -> None:
    ask = StandIn(fail={"question about g0": QueryError("bad SPARQL"),
                        "question about g1": LLMRateLimited("slow down"),
                        "question about g2": RuntimeError("bug"),
                        "question about g3": ConnectionResetError("peer gone")})
    stats = EvalRun("kb", questions(5), settings(strategies=["good"]), tmp_path, ask=ask).run()
    assert (stats.done, stats.errors, stats.crashes, stats.failed) == (1, 2, 1, 2)
    rows = {r["id"]: r for r in read_rows(tmp_path)}
    assert set(rows) == {"0", "2", "4"}
    assert rows["0"]["error"] == "QueryError: bad SPARQL" and rows["0"]["hit@5"] == 0.0
    assert rows["2"]["error"].startswith("RuntimeError: bug (at test_eval_runner.py:") and rows["2"]["crash"]
    assert ask.calls.count(("question about g2", "good")) == 2  # asked again before it counts
    assert any("RuntimeError: bug" in m for m in stats.messages)
    again = StandIn()
    EvalRun("kb", questions(5), settings(strategies=["good"]), tmp_path, ask=again).run()
    assert sorted(q for q, _ in again.calls) == ["question about g1", "question about g3"]


def test_every_llm_unavailable_error_leaves_the_pair_for_the_rerun(tmp_path: Path) -> None:
    ask = StandIn(fail={"question about g0": LLMTimeout("no answer in 60 s"),
                        "question about g1": LLMConnectionError("cannot reach the server")})
    stats = EvalRun("kb", questions(3), settings(strategies=["good"]), tmp_path, ask=ask).run()
    assert (stats.done, stats.errors, stats.failed) == (1, 0, 2)
    assert [r["id"] for r in read_rows(tmp_path)] == ["2"]


class Flaky(StandIn):
    """Raises an unexpected exception the first time each question is asked."""

    def __call__(self, kb: Any, question: str, **kwargs: Any) -> Answer:
        if question not in self.fail:
            self.fail[question] = RuntimeError("once")
            return super().__call__(kb, question, **kwargs)
        self.fail.pop(question)
        return super().__call__(kb, question, **kwargs)


def test_a_crash_that_does_not_repeat_is_no_error(tmp_path: Path) -> None:
    stats = EvalRun("kb", questions(2), settings(strategies=["good"]), tmp_path, ask=Flaky()).run()
    assert (stats.done, stats.errors) == (2, 0)


def test_a_repeated_crash_is_reported_with_its_message(tmp_path: Path) -> None:
    from sparqlqa.evaluation import evaluate

    ask = StandIn(fail={"question about g1": ValueError("zero-size array to reduction operation maximum")})
    result = evaluate("jsonl", _jsonl(tmp_path / "q.jsonl", 3), kb=memory_kb(), strategies=["good"],
                      out_dir=tmp_path / "out", ask=ask, plots=False)
    assert result.stats.errors == 1 and result.metrics.strategies["good"].errors == 1
    [error] = result.metrics.errors
    assert error.id == "q1" and error.error.startswith("ValueError: zero-size array") and error.crash
    report = (tmp_path / "out" / "report.md").read_text()
    assert "## Errors (1 answer(s) failed" in report and "question q1 (good): ValueError: zero-size" in report


def test_setup_errors_stop_the_run(tmp_path: Path) -> None:
    ask = StandIn(fail={"question about g0": ConfigError("no LLM configured")})
    with pytest.raises(ConfigError):
        EvalRun("kb", questions(2), settings(strategies=["good"]), tmp_path, ask=ask).run()


def test_a_strategy_that_always_crashes_trips_the_fuse(tmp_path: Path) -> None:
    ask = StandIn(fail={f"question about g{i}": RuntimeError("boom") for i in range(10)})
    with pytest.raises(EvalError, match="first 5 questions all failed"):
        EvalRun("kb", questions(10), settings(strategies=["good"]), tmp_path, ask=ask).run()
    assert len(ask.calls) == 10  # each asked twice
    assert not (tmp_path / RESULTS_FILE).exists() or not read_rows(tmp_path)  # asked again after a fix


def test_workers_bound_concurrency_and_answer_each_pair_once(tmp_path: Path) -> None:
    ask = StandIn(delay=0.03)
    run = EvalRun("kb", questions(12), settings(workers=3), tmp_path, ask=ask)
    stats = run.run()
    assert stats.done == 24
    assert 1 < ask.max_active <= 3
    pairs = [(r["id"], r["strategy"]) for r in read_rows(tmp_path)]
    assert len(pairs) == len(set(pairs)) == 24
    assert [r.id for r in run.rows()][:4] == ["0", "0", "1", "1"]  # reported in question order


def test_eval_workers_see_the_endpoint_timeout(tmp_path: Path) -> None:
    """``eval --timeout`` is a ContextVar: each worker thread runs in a copy of the caller's context."""
    from sparqlqa.remote.endpoint import effective_timeout, timeout_override

    seen: list[float] = []

    class Recording(StandIn):
        def __call__(self, kb: Any, question: str, **kwargs: Any) -> Answer:
            seen.append(effective_timeout(60.0))
            return super().__call__(kb, question, **kwargs)

    with timeout_override(7):
        EvalRun("kb", questions(4), settings(workers=2), tmp_path, ask=Recording()).run()
    assert seen == [7.0] * 8


def test_resuming_with_other_settings_is_refused(tmp_path: Path) -> None:
    EvalRun("kb", questions(1), settings(k=20), tmp_path, ask=StandIn()).run()
    with pytest.raises(EvalError, match=r"other settings \(k\)"):
        EvalRun("kb", questions(1), settings(k=10), tmp_path, ask=StandIn()).prepare()
    # more strategies or more questions are fine
    EvalRun("kb", questions(2), settings(strategies=["good", "bad", "new"]), tmp_path, ask=StandIn()).prepare()


def test_sample_is_seeded_and_kept_in_file_order() -> None:
    qs = questions(50)
    a = select_questions(qs, sample=10, seed=7)
    assert [q.id for q in a] == [q.id for q in select_questions(qs, sample=10, seed=7)]
    assert [q.id for q in a] != [q.id for q in select_questions(qs, sample=10, seed=8)]
    assert [int(q.id) for q in a] == sorted(int(q.id) for q in a)
    assert len(select_questions(qs, sample=10, seed=7, limit=3)) == 3


def memory_kb() -> Any:
    from sparqlqa.kb.knowledge_base import KnowledgeBase
    from sparqlqa.kb.store import OxigraphStore

    return KnowledgeBase.in_memory("t", OxigraphStore.in_memory())


def _jsonl(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"q{i}", "question": f"question about g{i}",
                                        "answers": [f"g{i}"]}) + "\n" for i in range(n)))
    return path


def test_evaluate_writes_metrics_table_and_plots(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "out"
    result = evaluate("jsonl", _jsonl(tmp_path / "q.jsonl", 4), kb=memory_kb(), strategies=["good", "bad"],
                      out_dir=out, ask=StandIn())
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["questions"] == 4 and metrics["complete"]
    assert metrics["strategies"]["good"]["metrics"]["hits@1"] == 1.0
    assert metrics["strategies"]["bad"]["metrics"]["mrr"] == pytest.approx(1 / 3)
    assert metrics["strategies"]["good"]["llm_per_question"]["calls"] == 2.0
    assert metrics["strategies"]["good"]["latency_ms"]["warmup_excluded"] == 1
    table = (out / "report.md").read_text()
    assert "| metric | good | bad |" in table and "| Hits@1 | 1.000 | 0.000 |" in table
    assert "| LLM calls / question | 2.00 | 0.00 |" in table and "latency p95 (ms)" in table
    for png in ("metrics.png", "latency.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert result.plot_error is None and result.markdown == table


def test_missing_matplotlib_keeps_the_other_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # import fails as if not installed
    out = tmp_path / "out"
    result = evaluate("jsonl", _jsonl(tmp_path / "q.jsonl", 2), kb=memory_kb(), strategies=["good"], out_dir=out,
                      ask=StandIn())
    assert result.plot_error is not None and "pip install 'sparqlqa[plots]'" in result.plot_error
    assert (out / "metrics.json").exists() and (out / "report.md").exists()
    assert not (out / "metrics.png").exists()


def test_an_incomplete_run_says_so(tmp_path: Path) -> None:
    ask = StandIn(fail={"question about g1": NotInCache("k" * 20)})
    result = evaluate("jsonl", _jsonl(tmp_path / "q.jsonl", 3), kb=memory_kb(), strategies=["good"],
                      out_dir=tmp_path / "out", ask=ask, plots=False)
    assert not result.metrics.complete
    assert "good lacks 1 question(s)" in result.markdown and "export-pending" in result.markdown


# --- a real SIGKILL in the middle of a CLI run, then a rerun -----------------------------------

#: the CLI with two test-only strategies registered like plugins, run by the real pipeline's ask()
STAND_IN_CLI = """
import sys, time
sys.path.insert(0, {tests!r})
from test_eval_runner import make_answer
from sparqlqa.strategies.base import Strategy, strategies

class Slow(Strategy):
    def run(self, ctx):
        with open({log!r}, "a") as log:
            log.write(self.name + " " + ctx.question + "\\n")
        time.sleep(0.04)
        gold = ctx.question.split()[-1]
        return make_answer(ctx.question, self.name, [gold, "x"] if self.name == "good" else ["x", gold])

strategies.add("good", type("Good", (Slow,), {{"name": "good"}}))
strategies.add("bad", type("Bad", (Slow,), {{"name": "bad"}}))
from sparqlqa.cli import main
main()
"""


def _cli(tmp_path: Path, source: Path, out: Path) -> list[str]:
    code = STAND_IN_CLI.format(tests=str(Path(__file__).resolve().parent), log=str(tmp_path / "asked.log"))
    return [sys.executable, "-c", code, "eval", "jsonl", str(source), "--kb", "tiny",
            "--strategy", "good,bad", "--out", str(out), "--no-plots"]


def test_sigkill_mid_run_then_rerun_finishes_with_each_pair_once(tmp_path: Path) -> None:
    from sparqlqa.ingest import ingest

    kb_file = tmp_path / "kb.txt"
    kb_file.write_text("a\tr\tb\n")
    ingest([kb_file], kb="tiny", format="triples")
    source, out = _jsonl(tmp_path / "q.jsonl", 60), tmp_path / "out"
    proc = subprocess.Popen(_cli(tmp_path, source, out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    results = out / RESULTS_FILE
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if results.exists() and results.read_bytes().count(b"\n") >= 20:
            break
        time.sleep(0.02)
    assert proc.poll() is None, f"run ended before the kill: {proc.stderr.read() if proc.stderr else ''}"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    written_before = results.read_bytes().count(b"\n")
    assert 20 <= written_before < 120
    rerun = subprocess.run(_cli(tmp_path, source, out), capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    rows = read_rows(out)
    pairs = [(r["id"], r["strategy"]) for r in rows]
    assert len(pairs) == len(set(pairs)) == 120
    asked = (tmp_path / "asked.log").read_text().splitlines()
    assert len(asked) <= 121  # at most the pair in flight at the kill is asked again
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["questions"] == 60 and metrics["complete"]
    assert metrics["strategies"]["good"]["metrics"]["hit@1"] == 1.0
    assert "| metric | good | bad |" in rerun.stdout and "| Hits@1 | 1.000 | 0.000 |" in rerun.stdout
