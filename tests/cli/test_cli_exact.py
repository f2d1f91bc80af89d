"""``sparqlqa ask --exact / --topic`` through click's runner (issue 26, items 4-5)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from sparqlqa.cli import main
from sparqlqa.kb.knowledge_base import KnowledgeBase

QUESTION = "Which films did Ridley Scott direct?"
DIRECTED = {"Alien", "Blade Runner", "Gladiator"}


def _items(*extra: str) -> list[dict[str, object]]:
    result = CliRunner().invoke(main, ["ask", "movies", QUESTION, "--strategy", "offline", "--k", "5", "--json",
                                       "-q", *extra])
    assert result.exit_code == 0, result.output
    return list(json.loads(result.stdout)["items"])


def test_exact_prints_only_matched_answers(movies_kb: KnowledgeBase) -> None:
    every = _items()
    assert [item["matched"] for item in every] == [True, True, True, False, False]
    assert {item["source"] for item in every[3:]} == {"vector"}
    exact = _items("--exact")
    assert {item["label"] for item in exact} == DIRECTED and all(item["matched"] for item in exact)


def test_the_table_marks_fill_in_and_topic_choices_are_checked(movies_kb: KnowledgeBase) -> None:
    runner = CliRunner()
    shown = runner.invoke(main, ["ask", "movies", QUESTION, "--strategy", "offline", "--k", "5", "--plain", "-q"])
    assert shown.exit_code == 0, shown.output
    rows = shown.stdout.strip().splitlines()[1:]
    assert sum("similar, not matched" in row for row in rows) == 2
    bad = runner.invoke(main, ["ask", "movies", QUESTION, "--topic", "maybe"])
    assert bad.exit_code == 2 and "auto" in bad.output and "Traceback" not in bad.output
    kept = _items("--topic", "keep", "--exact")
    assert {item["label"] for item in kept} == DIRECTED  # Ridley Scott is no film: nothing to keep here
