"""Output a user can copy: SPARQL and IRIs in full (never cropped), ``--plain``; vector-only answers
are flagged (exit 3)."""

from __future__ import annotations

import io
import json
import re

import pytest
from click.testing import CliRunner
from rich.console import Console

import sparqlqa.cli.output as output
from sparqlqa.cli import main
from sparqlqa.cli.ask_commands import NO_NODE_EXIT, print_sparql
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.records import QueryRecord

QUESTION = "Which films did Ridley Scott direct?"
LONG_QUERY = ("SELECT ?film WHERE {\n  VALUES ?c0 { <https://example.org/movies/a-very-long-name-of-a-director-"
              "that-no-80-column-terminal-could-hold-on-one-line> }\n  ?film <https://example.org/movies/rel/"
              "directed_by> ?c0 .\n}")


def _sparql_queries(runner: CliRunner, *args: str) -> list[str]:
    result = runner.invoke(main, ["ask", "movies", QUESTION, "--json", *args])
    return [q["query"].rstrip("\n") for q in json.loads(result.stdout)["queries"] if q["stage"] == "sparql"]


def test_sparql_is_printed_verbatim_when_not_a_terminal(runner: CliRunner, movies_kb: KnowledgeBase) -> None:
    queries = _sparql_queries(runner)
    assert queries
    shown = runner.invoke(main, ["ask", "movies", QUESTION], terminal_width=80).stdout
    for query in queries:
        assert query in shown


def test_sparql_on_a_terminal_is_highlighted_but_not_cropped(monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = io.StringIO()
    monkeypatch.setattr(output, "_stdout", Console(file=buffer, force_terminal=True, width=40, soft_wrap=True))
    print_sparql(QueryRecord(LONG_QUERY, rows=1, elapsed_ms=0.5, stage="sparql"))
    printed = buffer.getvalue()
    assert "\x1b[" in printed  # coloured
    assert LONG_QUERY in re.sub(r"\x1b\[[0-9;]*m", "", printed)


def test_plain_answers_are_tab_separated_with_full_iris(runner: CliRunner, movies_kb: KnowledgeBase) -> None:
    result = runner.invoke(main, ["ask", "movies", QUESTION, "--plain", "-q"])
    assert result.exit_code == 0, result.output
    header, *rows = result.stdout.splitlines()
    assert header.split("\t") == ["rank", "answer", "type", "score", "tier", "iri", "evidence"]
    iris = [row.split("\t")[5] for row in rows]
    assert "https://example.org/movies/alien" in iris and "│" not in result.stdout


def test_schema_plain_lists_full_iris(runner: CliRunner, movies_kb: KnowledgeBase) -> None:
    result = runner.invoke(main, ["schema", "movies", "--plain"])
    assert "relation\thttps://example.org/movies/rel/directed_by\t" in result.stdout


def test_a_question_naming_no_node_is_flagged_and_exits_3(runner: CliRunner, movies_kb: KnowledgeBase) -> None:
    result = runner.invoke(main, ["ask", "movies", "zzqq frobnicate", "--json"])
    assert result.exit_code == NO_NODE_EXIT == 3
    assert json.loads(result.stdout)["items"]  # the vector answers are still given
    assert "warning: the question names no node of movies" in result.stderr
    named = runner.invoke(main, ["ask", "movies", QUESTION, "-q"])
    assert named.exit_code == 0 and "warning" not in named.stderr


def test_vector_strategies_are_not_flagged(runner: CliRunner, movies_kb: KnowledgeBase) -> None:
    result = runner.invoke(main, ["ask", "movies", "zzqq frobnicate", "--strategy", "vss"])
    assert result.exit_code == 0, result.output
