"""4step on a graph mapped from tables (issue 34 item 3): the triplet JSON's columns, aggregates, groups, negated
triplets, order and limit, compiled from terms into one query and answered as a table.  Scripted with the
FakeLLM over the tiny library database; the triplet prompt of a KB with no data names is pinned byte for byte."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparqlqa.evaluation.execution import rows_match
from sparqlqa.ingest import ingest
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.llm import FakeLLM
from sparqlqa.stages.forms import TABLE_RULE
from sparqlqa.stages.triplets import build_prompt, generate_triplets
from sparqlqa.strategies.ask import ask

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    mp = pytest.MonkeyPatch()
    mp.setenv("SPARQLQA_HOME", str(tmp_path_factory.mktemp("home")))
    try:
        yield ingest([FIXTURES / "library_db.nt"], kb="library")
    finally:
        mp.undo()


def var(text: str, type_: str | None = None) -> dict[str, Any]:
    return {"kind": "variable", "text": text, "type": type_}


def const(text: str) -> dict[str, Any]:
    return {"kind": "constant", "text": text}


def edge(head: Any, relation: str, tail: Any, **extra: Any) -> dict[str, Any]:
    return {"head": head, "relation": relation, "tail": tail, **extra}


BOOK_OF = edge(var("?x1", "book"), "ref library id", var("?x2", "library"))
NAMED = edge(var("?x2", "library"), "name", var("?n"))
CASES = [
    ("What are the names and cities of the libraries?", {
        "triplets": [NAMED, edge(var("?x2"), "city", var("?c"))], "target": "?x2", "select": ["?n", "?c"]},
     "table", [["Central Library", "Oslo"], ["Harbour Library", "Bergen"], ["North Branch", "Oslo"],
               ["Hill Library", "Tromso"]], False),
    ("How many libraries are in Oslo?", {
        "triplets": [edge(var("?x1", "library"), "city", const("oslo"))], "target": "?x1", "form": "count"},
     "count", [["2"]], False),
    ("How many books does each library have?", {
        "triplets": [BOOK_OF, NAMED], "target": "?x2", "select": ["?n", "?x1"],
        "aggregates": [{"function": "count", "variable": "?x1"}], "group_by": ["?x2"]},
     "table", [["Central Library", "3"], ["Harbour Library", "2"]], False),
    ("What is the average and maximum capacity of all libraries?", {
        "triplets": [edge(var("?x1", "library"), "capacity", var("?v"))], "target": "?v",
        "aggregates": [{"function": "avg", "variable": "?v"}, {"function": "max", "variable": "?v"}]},
     "table", [["50750", "120000"]], False),
    ("Which library has the most books?", {
        "triplets": [BOOK_OF, NAMED], "target": "?x2", "select": ["?n"],
        "aggregates": [{"function": "count", "variable": "?x1"}], "group_by": ["?x2"],
        "order_by": [{"variable": "?x1", "direction": "desc"}], "limit": 1},
     "table", [["Central Library", "3"]], True),
    ("Which library holds the most books?", {  # the count is implied by the order; the ranking's figure is shown
        "triplets": [BOOK_OF, NAMED], "target": "?x2", "select": ["?n"], "group_by": ["?x2"],
        "order_by": [{"variable": "?x1", "direction": "desc"}], "limit": 1},
     "table", [["Central Library", "3"]], True),
    ("Which library has the least capacity?", {
        "triplets": [NAMED, edge(var("?x2"), "capacity", var("?v"))], "target": "?n", "select": ["?n"],
        "order_by": [{"variable": "?v", "direction": "asc"}], "limit": 1},
     "value", [["North Branch"]], True),
    ("Show the names of libraries without any book.", {
        "triplets": [NAMED, edge(var("?x1", "book"), "ref library id", var("?x2"), negated=True)],
        "target": "?n", "select": ["?n"]},
     "list", [["North Branch"], ["Hill Library"]], False),
    ("Which cities have libraries?", {  # on a graph of tables a row per match, as SQL gives them
        "triplets": [edge(var("?x1", "library"), "city", var("?c"))], "target": "?c"},
     "list", [["Oslo"], ["Bergen"], ["Oslo"], ["Tromso"]], False),
    ("Which different cities have libraries?", {
        "triplets": [edge(var("?x1", "library"), "city", var("?c"))], "target": "?c", "distinct": True},
     "list", [["Oslo"], ["Bergen"], ["Tromso"]], False),
    ("What is the capacity of Central Library?", {
        "triplets": [edge(var("?x1", "library"), "name", const("Central Library")),
                     edge(var("?x1"), "capacity", var("?v"))], "target": "?v"},
     "value", [["120000"]], False),
]


@pytest.mark.parametrize(("question", "reply", "form", "rows", "ordered"), CASES, ids=[c[0] for c in CASES])
def test_analytical_triplets_are_answered_as_tables(library: KnowledgeBase, question: str, reply: dict[str, Any],
                                                   form: str, rows: list[list[str]], ordered: bool) -> None:
    llm = FakeLLM([reply])
    answer = ask(library, question, strategy="4step", llm=llm)  # the rerank is on: it must not run here
    assert answer.table is not None
    assert answer.form == form, (answer.form, answer.table.lexical_rows(), answer.notes)
    assert rows_match(answer.table.lexical_rows(), rows, ordered=ordered), answer.table.lexical_rows()
    assert len(llm.requests) == 1, "stage 4 reranks only a list of nodes"
    query = next(q.query for q in answer.queries if q.stage == "sparql")
    assert "SELECT" in query and ("GROUP BY" in query) == bool(reply.get("group_by"))


def test_a_list_of_nodes_still_goes_through_the_rerank(library: KnowledgeBase) -> None:
    reply = {"triplets": [edge(var("?x1", "library"), "city", const("Oslo"))], "target": "?x1", "select": ["?x1"]}
    llm = FakeLLM([reply])
    answer = ask(library, "Which libraries are in Oslo?", strategy="4step", llm=llm)
    assert answer.form == "list" and {i.label for i in answer.items} == {"Central Library", "North Branch"}
    assert len(llm.requests) == 2  # the triplets, then the rerank (its unanswered call keeps the order)


def test_the_table_prompt_section_is_only_for_graphs_with_data_names(library: KnowledgeBase,
                                                                     movies_kb: KnowledgeBase) -> None:
    llm = FakeLLM([{"triplets": [], "target": "?x1"}, {"triplets": [], "target": "?x1"}])
    generate_triplets("Which films did Ridley Scott direct?", movies_kb, llm)
    pinned = (FIXTURES / "movies_triplet_prompt.txt").read_text(encoding="utf-8")
    assert llm.requests[0].messages[-1].content == pinned  # recorded answers key on this text
    assert build_prompt("Which films did Ridley Scott direct?", movies_kb.schema) == pinned
    generate_triplets("How many books does each library have?", library, llm)
    table_prompt = llm.requests[1].messages[-1].content
    assert TABLE_RULE in table_prompt and '"negated": true' in table_prompt
