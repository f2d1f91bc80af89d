"""Spider4SPARQL in `eval`: questions per graph, one KB per graph, execution accuracy per form, empty gold apart.

The fixture is a two-graph folder in the benchmark's format (``questions_dev.json`` + ``kg/<db>.nt``, rows
mapped from tables, no ``rdfs:label``), written by the test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sparqlqa.errors import DatasetError, KBNotFound
from sparqlqa.evaluation import evaluate, ingest_graphs, load_questions
from sparqlqa.evaluation.datasets import APART_EMPTY, APART_VOCABULARY, graph_files
from sparqlqa.evaluation.runner import RESULTS_FILE
from sparqlqa.stages.answer import Answer
from sparqlqa.stages.table import Table

BASE = "http://valuenet/ontop/"
INT = "<http://www.w3.org/2001/XMLSchema#integer>"

SINGERS = [(1, "Joe Sharp", "Netherlands", 52), (2, "Rose White", "France", 41), (3, "John Nizinik", "France", 43)]
STADIUMS = [(1, "Balmoor", 2000), (2, "Glebe Park", 4125)]
PETS = [(1, "cat", 3), (2, "dog", 2)]


def _row(table: str, key: int, cells: dict[str, Any]) -> list[str]:
    node = f"<{BASE}{table}/{table}_id={key}>"
    lines = [f"{node} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{BASE}{table}> ."]
    for column, value in cells.items():
        term = f'"{value}"^^{INT}' if isinstance(value, int) else json.dumps(value)
        lines.append(f"{node} <{BASE}{table}#{column}> {term} .")
    return lines


def _concert_graph() -> str:
    lines = [line for k, name, country, age in SINGERS
             for line in _row("singer", k, {"singer_id": k, "name": name, "country": country, "age": age})]
    lines += [line for k, name, capacity in STADIUMS
              for line in _row("stadium", k, {"stadium_id": k, "name": name, "capacity": capacity})]
    return "\n".join(lines) + "\n"


def _pets_graph() -> str:
    return "\n".join(line for k, kind, age in PETS
                     for line in _row("pets", k, {"pet_id": k, "pettype": kind, "pet_age": age})) + "\n"


#: each question's gold, and the query the stand-in strategy runs for it (on the question's own KB)
QUESTIONS: list[dict[str, Any]] = [
    {"id": "q-count", "db": "concert", "question": "How many singers are there?", "form": "count",
     "gold_rows": [["3"]], "answer": f"SELECT (COUNT(*) AS ?n) WHERE {{ ?s a <{BASE}singer> }}"},
    {"id": "q-columns", "db": "concert", "question": "Names and ages of singers from France?", "form": "other",
     "gold_rows": [["Rose White", "41"], ["John Nizinik", "43"]],  # the answer's columns come the other way
     "answer": f"SELECT ?a ?n WHERE {{ ?s <{BASE}singer#name> ?n ; <{BASE}singer#age> ?a ; "
               f"<{BASE}singer#country> \"France\" }}"},
    {"id": "q-ordered", "db": "concert", "question": "Singers by age, oldest first?", "form": "list",
     "gold_rows": [["Joe Sharp"], ["John Nizinik"], ["Rose White"]], "gold_ordered": True,
     "answer": f"SELECT ?n WHERE {{ ?s <{BASE}singer#name> ?n ; <{BASE}singer#age> ?a }} ORDER BY ?a"},
    {"id": "q-number", "db": "pets", "question": "Average pet age?", "form": "aggregate",
     "gold_rows": [["2.5000000000000000"]],
     "answer": f"SELECT (AVG(?a) AS ?avg) WHERE {{ ?p <{BASE}pets#pet_age> ?a }}"},
    {"id": "q-empty", "db": "concert", "question": "Stadiums with a capacity over 9000?", "form": "list",
     "gold_rows": [], "answer": f"SELECT ?n WHERE {{ ?s <{BASE}stadium#name> ?n }}"},
    {"id": "q-vocab", "db": "pets", "question": "Which airlines fly there?", "form": "list",
     "gold_rows": [], "gold_vocab_missing": ["airlines"], "answer": None},
]


@pytest.fixture
def s4s_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "spider4sparql"
    (folder / "kg").mkdir(parents=True)
    (folder / "kg" / "concert.nt").write_text(_concert_graph())
    (folder / "kg" / "pets.nt").write_text(_pets_graph())
    entries = [{key: value for key, value in q.items() if key != "answer"} | {"gold_sparql": "…"} for q in QUESTIONS]
    (folder / "questions_dev.json").write_text(json.dumps(entries))
    return folder


class TableAsk:
    """A stand-in strategy: runs the question's query on the KB it is given (so a wrong KB gives no rows)."""

    def __init__(self) -> None:
        self.kbs: dict[str, str] = {}

    def __call__(self, kb: Any, question: str, **_: Any) -> Answer:
        entry = next(q for q in QUESTIONS if q["question"] == question)
        self.kbs[entry["id"]] = kb.name
        answer = Answer(question=question, kb=kb.name, strategy="table", form="table")
        if entry["answer"] is not None:
            result = kb.query(entry["answer"])
            answer.table = Table.from_result(result, ordered="ORDER BY" in entry["answer"])
        return answer


def test_loads_questions_with_their_graph_gold_rows_and_apart_reasons(s4s_folder: Path) -> None:
    questions = {q.id: q for q in load_questions("spider4sparql", s4s_folder)}
    assert [q.id for q in load_questions("spider4sparql", s4s_folder / "questions_dev.json")] == list(questions)
    columns = questions["q-columns"]
    assert (columns.db, columns.gold_rows, columns.gold_ordered) == ("concert", (("Rose White", "41"),
                                                                                 ("John Nizinik", "43")), False)
    assert questions["q-ordered"].gold_ordered is True
    assert questions["q-empty"].meta["apart"] == APART_EMPTY
    assert questions["q-vocab"].meta["apart"] == APART_VOCABULARY
    assert "apart" not in questions["q-count"].meta and questions["q-count"].meta["form"] == "count"


@pytest.mark.parametrize("entries, message", [
    ({"questions": []}, "JSON list"),
    ([{"id": "1", "db": "x", "question": "q"}], "needs the keys"),
    ([{"id": "1", "db": "x", "question": "q", "gold_rows": [[1]]}], "gold_rows must be"),
])
def test_a_malformed_question_file_is_a_located_error(tmp_path: Path, entries: object, message: str) -> None:
    path = tmp_path / "questions_dev.json"
    path.write_text(json.dumps(entries))
    with pytest.raises(DatasetError, match=message):
        load_questions("spider4sparql", path)


def test_ingest_graphs_builds_one_kb_per_graph_and_keeps_those_there(s4s_folder: Path) -> None:
    first = ingest_graphs(s4s_folder, "t_")
    assert [(g.db, g.kb, g.built) for g in first] == [("concert", "t_concert", True), ("pets", "t_pets", True)]
    assert first[1].triples >= 8  # the rows (ingest adds its own description of the schema)
    assert [g.built for g in ingest_graphs(s4s_folder, "t_")] == [False, False]


def test_each_question_asks_its_graphs_kb_and_is_scored_by_its_rows(s4s_folder: Path, tmp_path: Path) -> None:
    ingest_graphs(s4s_folder, "t_")
    ask = TableAsk()
    result = evaluate("spider4sparql", s4s_folder, kb_prefix="t_", strategies=["table"], out_dir=tmp_path / "out",
                      ask=ask, plots=False)
    assert ask.kbs == {"q-count": "t_concert", "q-columns": "t_concert", "q-ordered": "t_concert",
                       "q-number": "t_pets", "q-empty": "t_concert", "q-vocab": "t_pets"}
    rows = {json.loads(line)["id"]: json.loads(line) for line in (tmp_path / "out" / RESULTS_FILE).open()}
    scores = {qid: row["execution"] for qid, row in rows.items()}
    assert scores["q-count"]["right"] and scores["q-number"]["right"]  # 3 = "3"^^xsd:integer, 2.5 = 2.50…
    assert scores["q-columns"]["right"]  # the same rows with the columns the other way round
    assert scores["q-columns"]["answer_rows"] == [["41", "Rose White"], ["43", "John Nizinik"]]
    assert not scores["q-ordered"]["right"]  # the right names, in the wrong order for an ordered gold
    assert scores["q-empty"]["apart"] == APART_EMPTY and not scores["q-empty"]["right"]
    assert result.metrics.execution is not None
    figures = result.metrics.execution["table"]
    assert (figures.scored.right, figures.scored.questions) == (3, 4)  # the two apart are not in it
    assert {f: (t.right, t.questions) for f, t in figures.by_form.items()} == {
        "aggregate": (1, 1), "count": (1, 1), "list": (0, 1), "other": (1, 1)}
    assert {r: t.questions for r, t in figures.apart.items()} == {APART_EMPTY: 1, APART_VOCABULARY: 1}
    assert (figures.multi_column.right, figures.multi_column.questions) == (1, 1)
    assert "| **all scored** | **3/4 (0.750)** |" in result.markdown
    assert "| apart: empty gold | 0/1 (0.000) |" in result.markdown
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics["execution"]["table"]["accuracy"] == 0.75 and metrics["run"]["kb_prefix"] == "t_"


def test_a_missing_graph_kb_fails_before_the_first_question(s4s_folder: Path, tmp_path: Path) -> None:
    ask = TableAsk()
    with pytest.raises(KBNotFound, match="none_concert") as caught:
        evaluate("spider4sparql", s4s_folder, kb_prefix="none_", strategies=["table"], out_dir=tmp_path / "out",
                 ask=ask, plots=False)
    assert ask.kbs == {} and "--ingest" in (caught.value.hint or "")


def test_questions_without_a_graph_need_a_kb(tmp_path: Path) -> None:
    from sparqlqa.evaluation import EvalError

    path = tmp_path / "qa.jsonl"
    path.write_text('{"question": "who?", "answers": ["x"]}\n')
    with pytest.raises(EvalError, match="name no graph"):
        evaluate("jsonl", path, kb_prefix="t_", strategies=["table"], out_dir=tmp_path / "out", ask=TableAsk())


def test_cli_ingests_the_graphs_and_runs_offline_in_one_command(s4s_folder: Path, tmp_path: Path,
                                                                runner: Any) -> None:
    from sparqlqa.cli import main

    out = tmp_path / "out"
    result = runner.invoke(main, ["eval", "spider4sparql", str(s4s_folder), "--kb-prefix", "c_", "--ingest",
                                  "--strategy", "offline", "--out", str(out), "--no-plots", "--limit", "2"])
    assert result.exit_code == 0, result.output
    assert "ingested c_concert" in result.output and "Execution accuracy" in result.output
    rows = [json.loads(line) for line in (out / RESULTS_FILE).open()]
    assert [r["execution"]["gold_rows"] for r in rows] == [[["3"]], [["Rose White", "41"], ["John Nizinik", "43"]]]
    assert json.loads((out / "run.json").read_text())["settings"]["k"] == 1000
    missing = runner.invoke(main, ["eval", "spider4sparql", str(s4s_folder), "--strategy", "offline",
                                   "--out", str(out)])
    assert missing.exit_code != 0 and "--kb-prefix" in missing.output


def test_the_shared_dev_slice_loads(shared_data: Path) -> None:
    folder = shared_data / "spider4sparql"
    if not folder.is_dir():
        pytest.skip("no Spider4SPARQL slice in ../shared/data")
    questions = load_questions("spider4sparql", folder)
    assert len(questions) == 339 and {q.db for q in questions} == set(graph_files(folder))
    apart = [q.meta["apart"] for q in questions if "apart" in q.meta]
    assert apart.count(APART_VOCABULARY) == 1 and apart.count(APART_EMPTY) == 9


def test_rows_no_query_matched_are_no_rows() -> None:
    from sparqlqa.evaluation.datasets import Question
    from sparqlqa.evaluation.runner import execution_score

    question = Question(id="q", text="Which stadium holds no concert?", gold_rows=(), gold_ordered=False,
                        meta={"form": "list"})
    filled = Answer("q", "kb", "text2sparql", table=Table.of_keys("stadium", ["http://x/s1"], matched=False))
    found = Answer("q", "kb", "text2sparql", table=Table.of_keys("stadium", ["http://x/s1"]))
    assert execution_score(question, filled).right  # type: ignore[union-attr]
    assert not execution_score(question, found).right  # type: ignore[union-attr]
