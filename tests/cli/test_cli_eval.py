"""``sparqlqa eval`` end to end on the movie fixture KB with the real pipeline (fake embedder)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sparqlqa.cli import main

QUESTIONS = [
    {"id": "ridley", "question": "Which films did Ridley Scott direct?",
     "answers": ["Alien", "Blade Runner", "Gladiator"]},
    {"id": "pandora", "question": "science fiction film set on the moon Pandora",
     "answers": ["https://example.org/movies/avatar"]},
    {"id": "amish", "question": "thriller about a detective protecting an Amish boy", "answers": ["witness"]},
]


@pytest.fixture
def questions_file(tmp_path: Path) -> Path:
    path = tmp_path / "movies.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    return path


def run(*args: str) -> Any:
    return CliRunner().invoke(main, ["eval", *args], catch_exceptions=False)


def test_vss_run_writes_the_report_and_resumes(movies_kb: Any, questions_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run("jsonl", str(questions_file), "--kb", "movies", "--strategy", "vss", "--out", str(out),
                 "--no-plots", "--json")
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)
    assert metrics["questions"] == 3 and metrics["complete"] and metrics["kind"] == "kgqa"
    assert metrics["run"]["kb"] == "movies" and metrics["run"]["kb_generation"]
    rows = [json.loads(line) for line in (out / "questions.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["ridley", "pandora", "amish"]
    assert all(r["strategy"] == "vss" and r["items"] and r["error"] is None for r in rows)
    assert rows[1]["gold_iris"] == ["https://example.org/movies/avatar"]
    # the recorded rank is the rank of the first gold answer in the recorded ranking
    for row in rows:
        golds = {g.casefold() for g in row["gold_labels"]} | set(row["gold_iris"])
        ranked = [i["rank"] for i in row["items"] if i["iri"] in golds or i["label"].casefold() in golds]
        assert row["rank"] == (min(ranked) if ranked else None)
    again = run("jsonl", str(questions_file), "--kb", "movies", "--strategy", "vss", "--out", str(out),
                "--no-plots")
    assert again.exit_code == 0
    assert "0 of 3 (question, strategy) pairs to answer" in again.stderr
    assert "| metric | vss |" in again.stdout and "| questions | 3 |" in again.stdout
    assert len((out / "questions.jsonl").read_text().splitlines()) == 3


def test_llm_cache_only_leaves_pairs_pending_for_export(movies_kb: Any, questions_file: Path,
                                                        tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ("jsonl", str(questions_file), "--kb", "movies", "--strategy", "vss,vss+rerank", "--llm", "fake",
            "--llm-cache", "only", "--out", str(out), "--no-plots", "--limit", "2")
    result = run(*args)
    assert result.exit_code == 3, result.output  # incomplete: rerun after the import
    assert "2 pair(s) wait for LLM answers" in result.stderr
    assert "vss+rerank lacks 2 question(s)" in result.stdout
    pending = tmp_path / "pending.jsonl"
    exported = CliRunner().invoke(main, ["llm", "export-pending", str(pending), "--json"])
    assert json.loads(exported.stdout)["pending"] == 2
    answers = [{"id": json.loads(line)["id"], "response": "[2] > [1]"} for line in pending.read_text().splitlines()]
    pending.write_text("".join(json.dumps(a) + "\n" for a in answers))
    assert CliRunner().invoke(main, ["llm", "import", str(pending)]).exit_code == 0
    done = run(*args, "--json")
    metrics = json.loads(done.stdout)
    assert metrics["complete"] and metrics["strategies"]["vss+rerank"]["questions"] == 2
    assert metrics["strategies"]["vss+rerank"]["llm_per_question"]["calls"] == 1.0
    assert metrics["last_invocation"]["already_done"] == 2 and metrics["last_invocation"]["done"] == 2


def test_user_mistakes_get_clean_errors(movies_kb: Any, questions_file: Path, tmp_path: Path) -> None:
    out = str(tmp_path / "out")
    unknown = run("jsonl", str(questions_file), "--kb", "movies", "--strategy", "nope", "--out", out)
    assert unknown.exit_code == 2 and "unknown strategy 'nope'" in unknown.stderr
    no_llm = run("jsonl", str(questions_file), "--kb", "movies", "--strategy", "4step", "--out", out)
    assert no_llm.exit_code == 2 and "needs an LLM" in no_llm.stderr
    missing = run("jsonl", str(questions_file), "--kb", "nokb", "--strategy", "vss", "--out", out)
    assert missing.exit_code == 1 and "no knowledge base named 'nokb'" in missing.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    broken = run("jsonl", str(bad), "--kb", "movies", "--strategy", "vss", "--out", out)
    assert broken.exit_code == 1 and "bad.jsonl:1: not valid JSON" in broken.stderr
    assert "Traceback" not in broken.output
    bad_dataset = run("freebase", str(bad), "--kb", "movies", "--out", out)
    assert bad_dataset.exit_code == 2


def test_eval_help_lists_the_datasets() -> None:
    result = CliRunner().invoke(main, ["eval", "--help"])
    assert result.exit_code == 0
    for name in ("stark-prime", "metaqa", "pathquestion", "wc2014", "jsonl", "--test-ratio", "--workers"):
        assert name in result.output


def test_a_crash_on_one_question_is_an_error_and_a_failing_exit(movies_kb: Any, questions_file: Path,
                                                                 tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A deterministic exception inside a strategy: counted, listed with its message, exit status 1."""
    import sparqlqa.strategies.offline.strategy as offline

    real = offline.offline_triplets

    def crash_on_ridley(question: str, *args: Any, **kwargs: Any) -> Any:
        if "Ridley" in question:
            raise ValueError("zero-size array to reduction operation maximum which has no identity")
        return real(question, *args, **kwargs)

    monkeypatch.setattr(offline, "offline_triplets", crash_on_ridley)
    out = tmp_path / "out"
    result = run("jsonl", str(questions_file), "--kb", "movies", "--strategy", "offline", "--out", str(out),
                 "--no-plots")
    assert result.exit_code == 1, result.output
    assert "| errors | 1 |" in result.stdout
    assert "1 answer(s) failed" in result.stderr and "ridley/offline: ValueError: zero-size" in result.stderr
    report = (out / "report.md").read_text()
    assert "question ridley (offline): ValueError: zero-size array" in report
    rerun = run("jsonl", str(questions_file), "--kb", "movies", "--strategy", "offline", "--out", str(out),
                "--no-plots", "--json")
    assert rerun.exit_code == 1 and json.loads(rerun.stdout)["errors"][0]["id"] == "ridley"


def test_embedder_is_used_recorded_and_part_of_the_run(movies_kb: Any, questions_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run("jsonl", str(questions_file), "--kb", "movies", "--strategy", "vss", "--out", str(out),
                 "--no-plots", "--json", "--embedder", "fake:32")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["run"]["embedder"] == "fake:32"
    assert [p.name for p in movies_kb.artifacts_dir("embeddings").iterdir()] == ["fake-32"]  # its own index
    again = CliRunner().invoke(main, ["eval", "jsonl", str(questions_file), "--kb", "movies", "--strategy", "vss",
                                      "--out", str(out), "--no-plots"])  # the default embedder: another run
    assert again.exit_code != 0 and "embedder" in again.output


def test_an_offline_run_answers_as_ask_does_without_building_the_index(movies_kb: Any, questions_file: Path,
                                                                         tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 36: eval builds the node index first only for a strategy that answers from it alone (vss); the
    others answer without it (one note says so and names the command) or load it when it is finished."""
    import sparqlqa.vectors.index as node_index

    monkeypatch.setattr(node_index, "INDEX_ON_FIRST_USE", 0)  # the tiny fixture KB counts as a big one
    result = run("jsonl", str(questions_file), "--kb", "movies", "--strategy", "offline", "--out",
                 str(tmp_path / "out"), "--no-plots", "--json")
    assert result.exit_code == 0, result.output
    assert "the node index of movies" in result.stderr and "'sparqlqa index movies'" in result.stderr
    assert not (movies_kb.artifacts_dir("embeddings") / "fake").exists()
    with_vss = run("jsonl", str(questions_file), "--kb", "movies", "--strategy", "offline,vss", "--out",
                   str(tmp_path / "vss"), "--no-plots", "--json")
    assert with_vss.exit_code == 0 and "is not built" not in with_vss.stderr
    assert (movies_kb.artifacts_dir("embeddings") / "fake" / "progress.json").is_file()
