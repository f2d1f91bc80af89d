"""``sparqlqa ask`` and ``sparqlqa index`` through click's runner."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sparqlqa.cli import main
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.llm import FakeLLM

QUESTION = "Which films did Ridley Scott direct?"
TRIPLETS = {
    "triplets": [{"head": {"kind": "variable", "text": "?x1", "type": "movie"}, "relation": "directed by",
                  "tail": {"kind": "constant", "text": "Ridley Scott", "type": "person"}}],
    "target": "?x1",
    "requirements": [],
}


@pytest.fixture
def fake_llm(monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    """``--llm fake`` resolves to this scripted LLM (triplets, then a listwise ranking)."""
    llm = FakeLLM([TRIPLETS, "[2] > [1] > [3]"])
    import sparqlqa.strategies.ask as pipeline

    def resolve(spec: Any, cache: Any = None) -> Any:
        return llm if spec == "fake" else None

    monkeypatch.setattr(pipeline, "resolve_llm", resolve)
    return llm


def test_index_builds_then_reports_already_built(runner: CliRunner, movies_kb: KnowledgeBase) -> None:
    first = runner.invoke(main, ["index", "movies", "--json"])
    assert first.exit_code == 0, first.output
    summary = json.loads(first.stdout)
    assert summary["nodes"] == 19 and summary["already_built"] is False
    assert Path(summary["folder"], "progress.json").is_file()
    again = runner.invoke(main, ["index", "movies"])
    assert again.exit_code == 0 and "already built" in again.output


def test_ask_without_llm_notes_offline_once(runner: CliRunner, movies_kb: KnowledgeBase) -> None:
    result = runner.invoke(main, ["ask", "movies", QUESTION])
    assert result.exit_code == 0, result.output
    assert "ran offline" in result.output or "ran vector search only" in result.output
    assert result.output.count("no LLM configured") == 1
    assert "answer" in result.output and "score" in result.output  # the table header


def test_ask_json_dumps_the_whole_answer(runner: CliRunner, movies_kb: KnowledgeBase,
                                         fake_llm: FakeLLM) -> None:
    result = runner.invoke(main, ["ask", "movies", QUESTION, "--llm", "fake", "--k", "3", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["strategy"] == "4step" and len(data["llm_calls"]) == 2
    assert data["items"][0]["label"] == "Blade Runner"  # the fake reranker's choice: [2] first
    assert {i["label"] for i in data["items"]} == {"Alien", "Blade Runner", "Gladiator"}
    assert data["items"][0]["evidence"]["triples"]


def test_ask_table_shows_sparql_and_saves_rq_files(runner: CliRunner, movies_kb: KnowledgeBase,
                                                   fake_llm: FakeLLM, tmp_path: Path) -> None:
    out = tmp_path / "rq"
    result = runner.invoke(main, ["ask", "movies", QUESTION, "--llm", "fake", "--k", "3",
                                  "--save-sparql", str(out)])
    assert result.exit_code == 0, result.output
    assert "SELECT" in result.output and "directed by" in result.output
    files = sorted(out.glob("*.rq"))
    assert files and all(f.read_text().startswith("# sparqlqa audit") for f in files)
    assert "saved" in result.output


def test_ask_explain_prints_every_stage(runner: CliRunner, movies_kb: KnowledgeBase, fake_llm: FakeLLM) -> None:
    result = runner.invoke(main, ["ask", "movies", QUESTION, "--llm", "fake", "--k", "3", "--explain"])
    assert result.exit_code == 0, result.output
    for heading in ("1. triplets", "2. linked constants", "3. SPARQL", "4. vector ranking", "5. rerank",
                    "timings"):
        assert heading in result.output
    assert "'Ridley Scott' → Ridley Scott" in result.output and "call 2: fake:fake" in result.output


def test_ask_explain_offline_shows_mentions_paths_and_choice(runner: CliRunner, movies_kb: KnowledgeBase) -> None:
    """No LLM: --explain shows the mentions found, the paths considered with scores, the chosen reading."""
    result = runner.invoke(main, ["ask", "movies", "Which movies did Ridley Scott direct?", "--explain"])
    assert result.exit_code == 0, result.output
    assert "ran offline" in result.output and "1. triplets (source: offline)" in result.output
    assert "mentions: 'Ridley Scott' (exact" in result.output
    assert "paths from 'Ridley Scott':" in result.output and "directed_by" in result.output
    assert "chosen: 'Ridley Scott'" in result.output and "confidence" in result.output


def test_ask_quiet_shows_only_answers(runner: CliRunner, movies_kb: KnowledgeBase, fake_llm: FakeLLM) -> None:
    result = runner.invoke(main, ["ask", "movies", QUESTION, "--llm", "fake", "--k", "3", "--quiet",
                                  "--rerank", "none"])
    assert result.exit_code == 0, result.output
    assert "SELECT" not in result.output and "Alien" in result.output


def test_ask_user_errors_exit_cleanly(runner: CliRunner, movies_kb: KnowledgeBase) -> None:
    missing = runner.invoke(main, ["ask", "nope", QUESTION])
    assert missing.exit_code == 1 and "no knowledge base named 'nope'" in missing.output
    needs = runner.invoke(main, ["ask", "movies", QUESTION, "--strategy", "4step"])
    assert needs.exit_code == 2 and "needs an LLM" in needs.output and "Traceback" not in needs.output


def test_ask_json_without_llm_keeps_stdout_json_and_notes_on_stderr(runner: CliRunner,
                                                                     movies_kb: KnowledgeBase) -> None:
    result = runner.invoke(main, ["ask", "movies", QUESTION, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["meta"]["llm"] is None and data["items"]
    assert "no LLM configured" in result.stderr and result.stderr.count("no LLM configured") == 1


#: what a cold offline ``ask`` on a local KB must not import (issue 36): other commands, other strategies,
#: the LLM backends and cache, the HTTP and endpoint clients, the table reader of a KB not mapped from tables
NOT_FOR_A_LOCAL_ASK = ("sparqlqa.cli.kb_commands", "sparqlqa.cli.eval_commands", "sparqlqa.cli.serve_commands",
                       "sparqlqa.strategies.fiske.strategy", "sparqlqa.strategies.text2sparql.strategy",
                       "sparqlqa.llm.cache", "sparqlqa.net.transport", "sparqlqa.remote.endpoint",
                       "sparqlqa.strategies.offline.tables.answer", "importlib.metadata", "ssl", "rdflib")


def test_a_cold_offline_ask_imports_only_what_it_uses(movies_kb: KnowledgeBase) -> None:
    import subprocess
    import sys

    script = ("import runpy, sys\nsys.argv = ['sparqlqa', 'ask', 'movies', 'Which films did Ridley Scott direct?']\n"
              "try:\n    runpy.run_module('sparqlqa', run_name='__main__')\nexcept SystemExit:\n    pass\n"
              f"print([m for m in {NOT_FOR_A_LOCAL_ASK!r} if m in sys.modules], file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "SPARQLQA_LLM": "offline"})
    assert "Ridley Scott" in done.stdout, done.stderr[-2000:]
    imported = json.loads(done.stderr.strip().splitlines()[-1].replace("'", '"'))
    if "rdflib" in imported:  # until sparqlqa's own queries skip the parse: rdflib brings these two
        imported = [m for m in imported if m not in ("rdflib", "importlib.metadata", "ssl")]
    assert imported == []


def test_a_cold_ask_starts_one_blas_thread_and_skips_the_final_collection(movies_kb: KnowledgeBase) -> None:
    """A one-question process: OpenBLAS told to start one thread before numpy loads (a value the user set is
    kept), and the heap frozen at exit (no last whole-heap collection); both measured in RESULTS.md."""
    import subprocess
    import sys

    script = ("import atexit, gc, os, runpy, sys\n"
              "atexit.register(lambda: print('at exit', gc.get_freeze_count() > 0, 'numpy' in sys.modules,"
              " os.environ.get('OPENBLAS_NUM_THREADS'), file=sys.stderr))\n"
              f"sys.argv = ['sparqlqa', 'ask', 'movies', {QUESTION!r}]\n"
              "runpy.run_module('sparqlqa', run_name='__main__')\n")
    env = {key: value for key, value in os.environ.items() if key != "OPENBLAS_NUM_THREADS"}
    for given, expected in (({}, "1"), ({"OPENBLAS_NUM_THREADS": "2"}, "2")):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                              env={**env, "SPARQLQA_LLM": "offline", **given})
        assert "Ridley Scott" in done.stdout, done.stderr[-2000:]
        assert done.stderr.strip().splitlines()[-1] == f"at exit True True {expected}"


def test_one_blas_thread_keeps_what_the_user_set(monkeypatch: pytest.MonkeyPatch) -> None:
    from sparqlqa.cli.ask_commands import BLAS_THREADS_ENV, one_blas_thread

    monkeypatch.delenv(BLAS_THREADS_ENV, raising=False)
    one_blas_thread()
    assert os.environ[BLAS_THREADS_ENV] == "1"
    monkeypatch.setenv(BLAS_THREADS_ENV, "3")
    one_blas_thread()
    assert os.environ[BLAS_THREADS_ENV] == "3"
