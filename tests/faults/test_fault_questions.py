"""Fault suite, hostile questions: ``sparqlqa ask KB QUESTION --json`` with text built to break queries.

The offline strategy and the fake embedder answer (no LLM); each question must give exit code 0,
one JSON document on stdout whose queries are all read queries, and leave the store unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from faults.helpers import assert_clean_failure, build_template, cli, count
from sparqlqa.errors import ConfigError, InvalidText
from sparqlqa.query.sparql_guard import query_form

HOSTILE = [
    'Who directed "Alien"?',
    "Who directed 'Alien' ''' \"\"\" ?",
    "Who directed { Alien } } } {{",
    "Alien } ; DROP ALL ; SELECT * WHERE { ?s ?p ?o",
    "Alien\" } ; DROP ALL ; SELECT ?x { \"",
    "Alien' . } INSERT DATA { <http://e/a> <http://e/b> <http://e/c> } #",
    "<http://evil/> ?x $y \\u0049NSERT \\\\ ^^ @en",
    "Ridley Scott directed " * 455 + "what?",  # ~10K characters
    "x" * 10_000,
    "\u202eAlien\u202c \ufeff directed by whom? 🎬",
]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    home = tmp_path_factory.mktemp("home")
    return home, build_template(home, "movies", [Path(__file__).parents[1] / "fixtures" / "movies.ttl"])


@pytest.mark.parametrize("question", HOSTILE)
def test_hostile_question_text(kb: int, question: str) -> None:
    code, output = cli("ask", "movies", question, "--strategy", "offline", "--json")
    unnarrowed = "the question names no node" in output  # answered by vectors only: exit 3 (README, exit codes)
    assert code == (3 if unnarrowed else 0), output
    assert "Traceback" not in output
    start = output.index("{")
    data, _ = json.JSONDecoder().raw_decode(output[start:])
    assert data["question"] == question
    for query in data["queries"]:
        assert query_form(query["query"]) in ("SELECT", "ASK")
    assert count("movies") == kb


@pytest.mark.parametrize(("question", "problem"), [
    ("Who directed Alien\x00 and Avatar?", "holds a NUL character (U+0000) at character 19"),
    ("\x00\x01\x02\x1b[31m", "holds a NUL character (U+0000) at character 1"),
    ("Who \x1b[31mdirected Alien?", "holds a control character (U+001B) at character 5"),
    ("Who directed \udcffAlien?", "invalid UTF-8 byte 0xFF"),
    ("x" * 20_000, "is 20,000 characters long"),
])
def test_bad_question_text_is_refused_at_the_edge(kb: int, question: str, problem: str) -> None:
    """NUL, control characters, undecodable bytes and megabyte questions: exit 2 with where and what to do."""
    code, output = cli("ask", "movies", question, "--strategy", "offline", "--json")
    assert_clean_failure(code, output, InvalidText.exit_code, "the question (QUESTION)", problem)
    assert json.loads(output)["hint"]
    assert count("movies") == kb


@pytest.mark.parametrize("question", ["   ", "\n\t "])
def test_a_blank_question_is_a_clean_error(kb: int, question: str) -> None:
    code, output = cli("ask", "movies", question, "--strategy", "offline", "--json")
    assert_clean_failure(code, output, ConfigError.exit_code, "the question is empty")
    assert count("movies") == kb
