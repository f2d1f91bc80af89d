"""Long work shows progress: plain periodic lines when stderr is no terminal, and an index build is
announced before it starts (index, ask, eval)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from sparqlqa.cli import main
from sparqlqa.cli.output import PlainProgress
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


def test_plain_progress_line_has_rate_and_eta() -> None:
    line = PlainProgress("indexed", "nodes", every=0).line(12_288, 42_718, elapsed=76.8)
    assert line == "indexed 12,288/42,718 nodes (28%), 160 nodes/s, ETA 3m"


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
