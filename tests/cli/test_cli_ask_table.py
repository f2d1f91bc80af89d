"""``sparqlqa ask`` with table answers: the terminal's table, ``--format csv|tsv``, ``--json``, ``--save-sparql``."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console
from table_strategy import BUDGETS, QUERY, film_table_strategy, ingest_movies_with_budgets

from sparqlqa.cli import main
from sparqlqa.cli.ask_commands import delimited, show_answer, table_view
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.vocab import XSD_INTEGER
from sparqlqa.stages.answer import Answer
from sparqlqa.stages.table import Column, Table

EX = "https://example.org/movies/"
DECIMAL = "http://www.w3.org/2001/XMLSchema#decimal"
#: the films by budget, most first, as the film-table strategy answers (names, directors' names, budgets)
BY_BUDGET = [("Avatar", "James Cameron", "237"), ("Gladiator", "Ridley Scott", "103"),
             ("Blade Runner", "Ridley Scott", "28"), ("Aliens", "James Cameron", "18.5"),
             ("Top Gun", "Tony Scott", "15"), ("Witness", "Peter Weir", "12"), ("Alien", "Ridley Scott", "11")]


@pytest.fixture
def table_kb(movies_ttl: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> KnowledgeBase:
    film_table_strategy(monkeypatch)
    return ingest_movies_with_budgets(movies_ttl, tmp_path)


def _ask(runner: CliRunner, *args: str) -> tuple[str, str]:
    result = runner.invoke(main, ["ask", "movies", "films by budget", "--strategy", "film-table", *args])
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr


def _answer(table: Table, form: str = "table") -> Answer:
    return Answer("the question", "kb", "test", form=form, table=table)


def _text(renderable: object, width: int = 100) -> str:
    out = Console(file=io.StringIO(), width=width, record=True)
    out.print(renderable)
    return out.export_text()


def _people() -> Table:
    """Two people (one unnamed), their ages (one unbound), and a note with a comma, a quote and a line break."""
    table = Table(columns=[Column("person", "node"), Column("age", "aggregate"), Column("note", "value")],
                  rows=[[EX + "joe", f'"52"^^<{XSD_INTEGER}>', '"says \\"hi\\", twice\\nthen leaves"'],
                        [EX + "ann_lee", None, '"tab\\there"'],
                        [EX + "max", f'"9.5"^^<{DECIMAL}>', None]])
    return table.named({EX + "joe": "Joe", EX + "max": "Max"})


# --- the terminal -----------------------------------------------------------------------------------


def test_a_table_answer_prints_headings_names_and_right_aligned_numbers() -> None:
    text = _text(table_view(_answer(_people()), top=10))
    lines = text.splitlines()
    heading = next(line for line in lines if "person" in line)
    assert "age" in heading and "note" in heading
    joe = next(line for line in lines if "Joe" in line)
    ann = next(line for line in lines if "ann lee" in line)  # no name: its IRI's last segment
    age_end = heading.index("age") + len("age")
    assert joe[age_end - 2:age_end] == "52"  # numbers flush right under their heading
    assert "9.5" in next(line for line in lines if "Max" in line)
    assert EX not in text and "^^" not in text  # names and lexical forms, never IRIs or datatypes
    assert ann.split("│")[2].strip() == ""  # unbound: empty
    assert "3 rows" in text


def test_long_cells_fold_and_top_cuts_rows_with_a_caption() -> None:
    table = Table(columns=[Column("name", "value")], rows=[[f'"{"x" * 150}"'], ['"b"'], ['"c"']])
    text = _text(table_view(_answer(table), top=2), width=60)
    assert sum(line.count("x") for line in text.splitlines()) == 150  # folded over lines, never cropped
    assert "3 rows" in text and "first 2 shown" in text and "--format csv" in text and "│ c" not in text


def test_a_value_answer_prints_its_value(capsys: pytest.CaptureFixture[str]) -> None:
    value = _answer(Table.single("average_age", '"41.5"^^<http://www.w3.org/2001/XMLSchema#decimal>'), "value")
    show_answer(value, quiet=True)
    assert capsys.readouterr().out.strip() == "41.5"


def test_the_film_table_strategy_prints_a_table_and_its_query(runner: CliRunner, table_kb: KnowledgeBase) -> None:
    out, _ = _ask(runner)
    rows = [line for line in out.splitlines() if line.startswith("│")]
    assert [[cell.strip() for cell in row.strip("│").split("│")] for row in rows] == [list(r) for r in BY_BUDGET]
    assert "│    237 │" in out and "│   18.5 │" in out  # right-aligned
    assert "7 rows (in the query's order)" in out and QUERY in out
    plain, _ = _ask(runner, "--plain")  # the rows tab-separated with full IRIs, then the bare SPARQL
    lines = plain.splitlines()
    assert lines[0] == "film\tfilm_name\tdirector\tdirector_name\tbudget"
    assert lines[1] == f"{EX}avatar\tAvatar\t{EX}james_cameron\tJames Cameron\t237" and QUERY in plain


# --- --format csv|tsv --------------------------------------------------------------------------------


def test_csv_writes_iris_with_name_columns_and_quotes_what_needs_it() -> None:
    rows = list(csv.reader(io.StringIO(delimited(_people(), ","))))
    assert rows == [["person", "person_name", "age", "note"],
                    [EX + "joe", "Joe", "52", 'says "hi", twice\nthen leaves'],
                    [EX + "ann_lee", "ann lee", "", "tab\there"],
                    [EX + "max", "Max", "9.5", ""]]


def test_tsv_has_one_line_per_row_and_a_name_column_never_collides() -> None:
    table = Table(columns=[Column("singer", "node"), Column("singer_name", "value")],
                  rows=[[EX + "s1", '"Joe\\tSmith\\u001b[31m"']]).named({EX + "s1": "Joe"})
    lines = delimited(table, "\t").splitlines()
    assert lines[0].split("\t") == ["singer", "singer_name_2", "singer_name"]
    assert lines[1].split("\t") == [EX + "s1", "Joe", "Joe Smith␛[31m"]  # tab made a space, ESC shown
    assert len(lines) == 2


def test_format_writes_only_rows_on_stdout(runner: CliRunner, table_kb: KnowledgeBase) -> None:
    out, _ = _ask(runner, "--format", "csv")
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["film", "film_name", "director", "director_name", "budget"]
    assert [(r[1], r[3], r[4]) for r in rows[1:]] == BY_BUDGET
    assert rows[1][0] == EX + "avatar" and rows[1][2] == EX + "james_cameron"
    assert "SELECT" not in out
    tsv, _ = _ask(runner, "--format", "tsv", "--top", "2")  # every row, whatever --top says
    assert [line.split("\t") for line in tsv.splitlines()] == rows


def test_format_works_for_every_form(runner: CliRunner, table_kb: KnowledgeBase) -> None:
    def rows(question: str) -> list[list[str]]:
        result = runner.invoke(main, ["ask", "movies", question, "--format", "csv"])
        assert result.exit_code == 0, result.output
        return list(csv.reader(io.StringIO(result.stdout)))

    assert rows("How many films did Ridley Scott direct?") == [["count"], ["3"]]
    assert rows("Did Ridley Scott direct Alien?") == [["answer"], ["true"]]
    listed = rows("Which films did Ridley Scott direct?")
    assert listed[0][1] == listed[0][0] + "_name"
    assert {row[1] for row in listed[1:]} == {"Alien", "Blade Runner", "Gladiator"}


def test_format_goes_with_no_other_output(runner: CliRunner, table_kb: KnowledgeBase) -> None:
    for other in ("--json", "--plain", "--explain"):
        result = runner.invoke(main, ["ask", "movies", "films", "--format", "tsv", other])
        assert result.exit_code == 2 and f"cannot go with {other}" in result.output


# --- --json and --save-sparql keep the table and its query -------------------------------------------------


def test_json_carries_the_table_and_save_sparql_keeps_its_query(runner: CliRunner, table_kb: KnowledgeBase,
                                                                tmp_path: Path) -> None:
    out, _ = _ask(runner, "--json", "--save-sparql", str(tmp_path / "rq"))
    data = json.loads(out)
    table = data["table"]
    assert data["form"] == "table" and table["query"] == QUERY and table["ordered"] is True
    assert [c["name"] for c in table["columns"]] == ["film", "director", "budget"]
    assert [row[2] for row in table["rows"]] == sorted(BUDGETS.values(), key=float, reverse=True)
    assert table["names"][EX + "avatar"] == "Avatar"
    saved = [path.read_text() for path in sorted((tmp_path / "rq").glob("*.rq"))]
    assert any("ORDER BY DESC(?budget)" in text and "?film ?director ?budget" in text for text in saved)
