"""Long work shows progress: plain periodic lines when stderr is no terminal, and an index build is
announced before it starts (index, ask, eval)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from sparqlqa.cli import main
from sparqlqa.cli.output import EtaEstimator, PlainProgress
from sparqlqa.kb.knowledge_base import KnowledgeBase


@pytest.fixture(autouse=True)
def progress_every_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARQLQA_PROGRESS_EVERY", "0")


def test_plain_progress_prints_first_last_and_no_more_than_every(capsys: pytest.CaptureFixture[str]) -> None:
    progress = PlainProgress("indexed", "nodes", every=3600)
    for done in range(0, 42_719, 1024):
        progress.update(done, 42_718)
    progress.update(42_718, 42_718)
    progress.update(42_718, 42_718)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "indexed 0/42,718 nodes (0%)"
    assert re.fullmatch(r"indexed 42,718/42,718 nodes \(100%\)(, [\d,]+ nodes/s, \d+s)?", lines[1]), lines
    assert len(lines) == 2


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_plain_progress_line_has_rate_and_eta(capsys: pytest.CaptureFixture[str]) -> None:
    clock = FakeClock()
    progress = PlainProgress("indexed", "nodes", every=0, clock=clock)
    for clock.now, done in [(0.0, 0), (70.0, 1_024), (73.2, 1_536), (76.8, 12_288 - 6_144), (108.8, 12_288)]:
        progress.update(done, 42_718)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "indexed 0/42,718 nodes (0%)"
    assert lines[1] == "indexed 1,024/42,718 nodes (2%)"  # the first batch (after loading the model) is no measure
    assert lines[2] == "indexed 1,536/42,718 nodes (3%), 160 nodes/s, ETA 4m"
    assert lines[-1] == "indexed 12,288/42,718 nodes (28%), 290 nodes/s, ETA 2m"


def test_a_slow_run_of_few_steps_shows_no_rate_below_one_a_second(capsys: pytest.CaptureFixture[str]) -> None:
    clock = FakeClock()
    progress = PlainProgress("prepared", "indexes", every=0, clock=clock)
    for clock.now, done in [(0.0, 0), (2.7, 1), (6.8, 2), (6.9, 3)]:
        progress.update(done, 3)
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1] == "prepared 3/3 indexes (100%), 7s", lines
    assert not any("0 indexes/s" in line for line in lines)


def test_the_eta_ignores_the_warm_up_and_follows_the_measured_rate() -> None:
    clock = FakeClock()
    estimator = EtaEstimator(clock=clock)
    clock.now = 1500.0  # 25 minutes of model loading and a slow first batch of 100 items
    estimator.update(100)
    assert estimator.seconds_left(10_100) is None  # nothing measured yet
    for step in range(1, 11):
        clock.now = 1500.0 + step
        estimator.update(100 + 50 * step)
    assert estimator.rate() == 50.0 and estimator.seconds_left(10_100) == 190.0
    # the naive estimate, from the start and the first batch, would have said hours:
    assert (10_100 - 600) / (600 / 1510.0) > 60 * 60 * 6


def test_the_rate_follows_a_change_of_pace_within_the_window() -> None:
    clock = FakeClock()
    estimator = EtaEstimator(clock=clock, window_s=10)
    done = 0
    for second in range(1, 41):
        clock.now = float(second)
        done += 10 if second <= 20 else 100
        estimator.update(done)
    assert estimator.rate() == 100.0


def test_index_announces_and_logs_progress_when_not_a_terminal(runner: CliRunner, movies_kb: KnowledgeBase) -> None:
    result = runner.invoke(main, ["index", "movies"])
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert lines[0].startswith("building the node index of movies (fake") and lines[0].endswith("resumable")
    assert re.fullmatch(r"indexed 19/19 nodes \(100%\).*", lines[-1]), lines


def test_ask_announces_the_index_build_unless_quiet(runner: CliRunner, movies_kb: KnowledgeBase) -> None:
    quiet = runner.invoke(main, ["ask", "movies", "Which films did Ridley Scott direct?", "-q"])
    assert quiet.exit_code == 0 and "node index" not in quiet.stderr and "indexed" not in quiet.stderr


def test_ask_announces_a_build(runner: CliRunner, movies_kb: KnowledgeBase) -> None:
    result = runner.invoke(main, ["ask", "movies", "Which films did Ridley Scott direct?"])
    assert result.exit_code == 0, result.output
    assert "building the node index of movies" in result.stderr and "sparqlqa index movies" in result.stderr
    again = runner.invoke(main, ["ask", "movies", "Which films did Ridley Scott direct?"])
    assert "node index" not in again.stderr


def test_ingest_logs_progress_when_not_a_terminal(runner: CliRunner, movies_ttl: Path) -> None:
    result = runner.invoke(main, ["ingest", str(movies_ttl), "--kb", "m"])
    assert result.exit_code == 0, result.output
    assert re.search(r"^loading movies\.ttl: [\d.]+/[\d.]+ MB \(100%\)", result.stderr, re.M), result.stderr


def test_eval_announces_the_index_before_the_first_question(runner: CliRunner, movies_kb: KnowledgeBase,
                                                            tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "1", "question": "Which films did Ridley Scott direct?",
                                     "answers": ["Alien"]}) + "\n")
    result = runner.invoke(main, ["eval", "jsonl", str(questions), "--kb", "movies", "--strategy", "vss",
                                  "--out", str(tmp_path / "out"), "--no-plots"])
    assert result.stderr.index("building the node index of movies") < result.stderr.index("pairs to answer")
    assert re.search(r"^answered 1/1 pairs \(100%\)", result.stderr, re.M), result.stderr


def test_a_long_note_stays_one_line_in_a_log(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from rich.console import Console

    import sparqlqa.cli.output as output

    buffer = io.StringIO()
    monkeypatch.setattr(output, "_stderr", Console(file=buffer, width=40))
    output.note("building the node index of metaqa (st-all-MiniLM-L6-v2): once per KB and embedder, resumable")
    assert buffer.getvalue().count("\n") == 1


def test_a_bar_says_it_is_still_measuring_before_it_gives_an_eta() -> None:
    from sparqlqa.cli.output import eta_text

    clock = FakeClock()
    estimator = EtaEstimator(clock=clock)
    clock.now = 600.0
    estimator.update(10)
    assert eta_text(estimator, 1_000) == "ETA …"
    clock.now = 603.0
    estimator.update(40)
    assert eta_text(estimator, 1_000) == "ETA 2m"  # 960 left at 10 per second: 96 s
