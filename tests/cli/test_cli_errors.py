"""Exit codes, ``--json`` errors and hints that list the real choices (README: "Exit codes")."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from sparqlqa.cli import main
from sparqlqa.kb.knowledge_base import KnowledgeBase


def test_json_error_is_one_object_on_stdout(runner: CliRunner) -> None:
    result = runner.invoke(main, ["ask", "nosuchkb", "x", "--json"])
    assert result.exit_code == 1
    error = json.loads(result.stdout)
    assert error["error"] == "no knowledge base named 'nosuchkb'"
    assert "sparqlqa ingest FILE --kb nosuchkb" in error["hint"]


def test_plain_error_goes_to_stderr(runner: CliRunner) -> None:
    result = runner.invoke(main, ["ask", "nosuchkb", "x"])
    assert result.exit_code == 1 and result.stdout == ""
    assert "error: no knowledge base named 'nosuchkb'" in result.stderr


def test_usage_error_under_json_is_json_with_exit_2(runner: CliRunner) -> None:
    result = runner.invoke(main, ["ask", "nosuchkb", "x", "--bogus", "--json"], prog_name="sparqlqa")
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {"error": "No such option '--bogus'.", "hint": "see 'sparqlqa ask --help'"}


def test_configuration_errors_exit_2(runner: CliRunner, movies_kb: KnowledgeBase) -> None:
    result = runner.invoke(main, ["ask", "movies", "who directed Alien", "--llm", "gpt4", "--json"])
    assert result.exit_code == 2, result.output
    assert json.loads(result.stdout)["error"] == "unknown llm 'gpt4'"


def _hint(result_stderr: str) -> list[str]:
    hint = re.search(r"hint: (?:choose one of: |pass --format \(one of: )([^)\n]*)", result_stderr)
    assert hint is not None, result_stderr
    return [name.strip() for name in hint.group(1).split(",")]


def test_llm_hint_offers_offline_not_the_test_fake(runner: CliRunner, movies_kb: KnowledgeBase) -> None:
    result = runner.invoke(main, ["ask", "movies", "who directed Alien", "--llm", "gpt4"])
    assert _hint(result.stderr) == ["anthropic", "offline", "openai"]
    assert "node index" not in result.stderr  # failed before any work


def _help_formats(runner: CliRunner) -> set[str]:
    help_text = " ".join(runner.invoke(main, ["ingest", "--help"], terminal_width=400).stdout.split())
    listed = re.search(r"--format TEXT (.*?) \(default", help_text)
    assert listed is not None, help_text
    return set(re.split(r", | or ", listed.group(1)))


def test_format_hints_list_what_help_lists(runner: CliRunner, tmp_path) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "data.ttl"
    source.write_text("")
    unknown = runner.invoke(main, ["ingest", str(source), "--kb", "x", "--format", "ttlx"])
    assert unknown.exit_code == 2
    assert set(_hint(unknown.stderr)) == _help_formats(runner)
    unguessable = tmp_path / "data.foo"
    unguessable.write_text("")
    guessed = runner.invoke(main, ["ingest", str(unguessable), "--kb", "x"])
    assert guessed.exit_code == 1
    assert set(_hint(guessed.stderr)) == _help_formats(runner)


def test_a_mistyped_command_is_told_the_nearest(runner: CliRunner) -> None:
    result = runner.invoke(main, ["akk", "movies", "x"], prog_name="sparqlqa")
    assert result.exit_code == 2
    assert "No such command 'akk'. Did you mean 'ask'?" in result.stderr
