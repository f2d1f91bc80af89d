"""Answer forms (issue 26): count / yes-no / order / filter / choices compile to real SPARQL, the answer
carries form, value and a headline, and the offline step reads the forms from English on a DBpedia-style
KB (tests/fixtures/dbpedia_films.ttl)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sparqlqa.ingest import ingest
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.stages.answer import Answer, AnswerItem
from sparqlqa.stages.execute import find_candidates
from sparqlqa.stages.forms import XSD, ValueFilter, filter_expression, form_from_data
from sparqlqa.stages.linking import link_constants
from sparqlqa.stages.triplets import TRIPLETS_SCHEMA, parse_arrow_triplets, triplets_from_data
from sparqlqa.strategies.ask import ask
from sparqlqa.strategies.offline.forms import detect_form

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DBO = "http://dbpedia.org/ontology/"


@pytest.fixture
def films() -> KnowledgeBase:
    return ingest([FIXTURES / "dbpedia_films.ttl"], kb="films")


@pytest.fixture
def onnx(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARQLQA_EMBEDDER", "onnx:all-MiniLM-L6-v2")


def _run(kb: KnowledgeBase, arrow: str):  # type: ignore[no-untyped-def]
    triplets = parse_arrow_triplets(arrow, "q", kb.schema)
    return find_candidates(triplets, link_constants(triplets, kb), kb)


# -- compile ---------------------------------------------------------------------------------------------


def test_count_compiles_to_count_distinct(films: KnowledgeBase) -> None:
    found = _run(films, "|?x| -> director -> 'Christopher Nolan'\nform: count")
    query = found.compiled[-1].sparql
    assert query.startswith("SELECT (COUNT(DISTINCT ?v_x) AS ?count) WHERE {")
    assert (found.form, found.value, len(found.items)) == ("count", 4, 4)
    assert query in [q.query for q in found.queries]  # it ran, so --save-sparql writes it


@pytest.mark.parametrize(("director", "value"), [("Christopher Nolan", True), ("James Cameron", False)])
def test_boolean_compiles_to_ask_with_the_choice(films: KnowledgeBase, director: str, value: bool) -> None:
    found = _run(films, f"|?x| -> director -> '{director}'\nform: boolean\nchoices: Inception")
    query = found.compiled[-1].sparql
    assert query.startswith("ASK {") and "VALUES ?v_x { <http://dbpedia.org/resource/Inception> }" in query
    assert found.value is value and found.items  # the items say what does hold


def test_a_yes_no_on_a_node_s_own_value_filters_in_the_ask_and_shows_the_value(films: KnowledgeBase) -> None:
    found = _run(films, "|?x| -> release date -> |?d|\nform: boolean\nchoices: Inception\nfilter: ?d > 2012")
    ask_query = found.compiled[-1].sparql
    assert ask_query.startswith("ASK {") and f'FILTER(?v_d > "2012-12-31"^^<{XSD}date>)' in ask_query
    assert "FILTER(?v_d" not in found.compiled[0].sparql  # the listing shows the value the ASK compared
    assert found.value is False and [c.iri for c in found.items] == ["http://dbpedia.org/resource/Inception"]


def test_superlative_orders_by_the_value_and_keeps_the_first(films: KnowledgeBase) -> None:
    found = _run(films, "|?x| -> director -> 'Christopher Nolan'; |?x| -> budget -> |?v|\n"
                        "order by: ?v desc\nlimit: 1")
    query = found.compiled[0].sparql
    assert "ORDER BY DESC(?v_v) ?v_x\nLIMIT 1" in query and query.startswith("SELECT DISTINCT ?v_x ?v_v")
    assert [c.iri for c in found.items] == ["http://dbpedia.org/resource/The_Dark_Knight"] and found.ordered


def test_comparison_restricts_the_target_to_the_choices(films: KnowledgeBase) -> None:
    found = _run(films, "|?x| -> runtime -> |?v|\norder by: ?v desc\nlimit: 1\nchoices: Inception; Interstellar")
    assert "VALUES ?v_x {" in found.compiled[0].sparql
    assert [c.iri for c in found.items] == ["http://dbpedia.org/resource/Interstellar"]


def test_filters_compare_dates_as_dates_and_numbers_as_numbers(films: KnowledgeBase) -> None:
    dated = _run(films, "|?x| -> director -> 'Christopher Nolan'; |?x| -> release date -> |?d|\nfilter: ?d > 2009")
    assert f'FILTER(?v_d > "2009-12-31"^^<{XSD}date>)' in dated.compiled[0].sparql
    assert sorted(c.iri.rsplit("/", 1)[1] for c in dated.items) == ["Inception", "Interstellar"]
    costly = _run(films, "|?x| -> director -> 'James Cameron'; |?x| -> budget -> |?b|\nfilter: ?b >= 200000000")
    assert f'FILTER(?v_b >= "200000000"^^<{XSD}integer>)' in costly.compiled[0].sparql
    assert len(costly.items) == 2  # Titanic 200 M, Avatar 237 M (xsd:double values, an integer bound)


def test_filter_values_are_typed_literals_never_pasted_text() -> None:
    assert filter_expression("v", ValueFilter("?v", ">", "1 || true"), XSD + "integer") is None
    assert filter_expression("v", ValueFilter("?v", ">", '2000"^^x) } #'), XSD + "date") is None
    assert filter_expression("v", ValueFilter("?v", "; DROP", "2000"), XSD + "integer") is None
    assert filter_expression("v", ValueFilter("?v", "<", "2000"), XSD + "dateTime") == \
        f'FILTER(?v < "2000-01-01T00:00:00"^^<{XSD}dateTime>)'


def test_the_llm_schema_and_parser_carry_the_form() -> None:
    assert {"form", "order_by", "filters", "limit", "choices"} <= set(TRIPLETS_SCHEMA["properties"])
    data = {"triplets": [{"head": "?x1", "relation": "directed by", "tail": "Nolan"}], "target": "?x1",
            "form": "count", "filters": [{"variable": "?x9", "op": "~", "value": "1"}]}
    triplets = triplets_from_data(data, "q", None)
    assert triplets.form.form == "count" and not triplets.form.filters
    assert any("filters" in note for note in triplets.notes)  # the malformed filter is said, not kept
    assert triplets.from_dict(triplets.to_dict()).form == triplets.form
    assert form_from_data({"form": "sum"})[0].form == "list"


# -- the answer contract -----------------------------------------------------------------------------------


def _item(label: str, **kw: object) -> AnswerItem:
    fields: dict[str, object] = {"type": None, "score": 1.0, "tier": 0, "source": "filtered", "evidence": None,
                                 "snippet": "", "type_label": "film"}
    fields.update(kw)
    return AnswerItem(f"http://x/{label}", label, **fields)  # type: ignore[arg-type]


def test_headlines_say_the_form() -> None:
    items = [_item("A"), _item("B"), _item("C")]
    assert Answer("q", "kb", "offline", items=items).headline == "3 films: A, B, C"
    assert Answer("q", "kb", "offline", items=items, form="count", value=3).headline == "3 films: A, B, C"
    assert Answer("q", "kb", "offline", items=items[:1], form="boolean", value=False).headline == "no — A"
    assert Answer("q", "kb", "offline", items=[], form="count", value=0).headline == "0 answers"
    data = Answer("q", "kb", "offline", items=items, form="boolean", value=True).to_dict()
    assert (data["form"], data["value"], data["headline"]) == ("boolean", True, "yes — A")


def test_cli_prints_the_headline(films: KnowledgeBase, onnx: None) -> None:
    from click.testing import CliRunner

    from sparqlqa.cli import main

    result = CliRunner().invoke(main, ["ask", "films", "How many films did Christopher Nolan direct?",
                                       "--strategy", "offline", "-q"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == \
        "4 films: Inception, Interstellar, Memento, The Dark Knight" or result.output.startswith("4 films: ")
    data = json.loads(CliRunner().invoke(main, ["ask", "films", "Did James Cameron direct Titanic?",
                                                "--strategy", "offline", "--json"]).stdout)
    assert (data["form"], data["value"]) == ("boolean", True) and data["headline"].startswith("yes — ")


# -- offline: forms from English -------------------------------------------------------------------------


def test_english_cues() -> None:
    assert detect_form("How many films did X direct?", []).form == "count"
    assert detect_form("Did X direct Y?", []).form == "boolean"
    assert detect_form("Which films were released in 1999?", []).filters[0].op == "="
    assert detect_form("Who played in the first episode?", []).order is None  # "first episode" orders nothing
    assert detect_form("Which film has more than 3 sequels?", []).filters[0].value == "3"
    assert detect_form("Which films are longer than 2 hours?", []).order is None  # a filter, not an order


CASES = json.loads((FIXTURES / "dbpedia_films_questions.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] != "list"], ids=lambda c: c["question"])
def test_offline_answers_every_form(films: KnowledgeBase, onnx: None, case: dict[str, object]) -> None:
    answer = ask(films, str(case["question"]), strategy="offline", rerank="none", k=10)
    gold = [str(a) for a in case["answers"]]  # type: ignore[attr-defined]
    assert answer.form == case["form"]
    if case["form"] != "list":
        assert answer.value == case["value"]
    elif case["kind"] in ("superlative", "comparison"):
        assert answer.items[0].label == gold[0]
    else:
        assert {i.label for i in answer.items[: len(gold)]} == set(gold)


def test_inverse_questions_are_not_read_out_and_back(films: KnowledgeBase, onnx: None) -> None:
    answer = ask(films, "Who was born in New York City?", strategy="offline", rerank="none")
    chosen = answer.meta.offline.chosen[0].reading
    assert chosen == "'New York City' <-birth place-" and answer.items[0].tier == 0
    assert "New York City" not in [i.label for i in answer.items if i.source == "filtered"]


# -- 4step: the LLM's structured output carries the form ------------------------------------------------


def test_4step_answers_a_comparison_and_a_yes_no_from_the_llm_form(films: KnowledgeBase) -> None:
    from sparqlqa.llm import FakeLLM

    x1, v1 = {"kind": "variable", "text": "?x1"}, {"kind": "variable", "text": "?v1"}
    comparison = {"triplets": [{"head": x1, "relation": "budget", "tail": v1}], "target": "?x1",
                  "form": "list", "order_by": [{"variable": "?v1", "direction": "desc"}], "limit": 1,
                  "choices": ["Avatar", "Titanic"]}
    answer = ask(films, "Which has the bigger budget, Avatar or Titanic?", llm=FakeLLM([comparison]), rerank="none")
    assert (answer.form, answer.items[0].label, answer.items[0].tier) == ("list", "Avatar", 0)
    kate = {"kind": "constant", "text": "Kate Winslet"}
    yes_no = {"triplets": [{"head": x1, "relation": "starring", "tail": kate}], "target": "?x1",
              "form": "boolean", "choices": ["Titanic"]}
    answer = ask(films, "Does Titanic star Kate Winslet?", llm=FakeLLM([yes_no]), rerank="none")
    assert (answer.form, answer.value, answer.items[0].label) == ("boolean", True, "Titanic")
    assert answer.headline == "yes — Titanic —dbo:starring→ Kate Winslet"
    saved = [q.query for q in answer.queries if q.stage == "sparql"]
    assert saved[-1].startswith("ASK {")  # the .rq files hold the ASK that decided it


def test_auxiliaries_that_open_no_yes_no_question(films: KnowledgeBase, onnx: None) -> None:
    """MetaQA's "can you name a film directed by X", PathQuestion's "is X's husband a man or a woman", and a
    yes/no with one name and nothing to compare are lists, never a guessed yes."""
    assert detect_form("can you name a film directed by X", []).form == "list"
    assert detect_form("is X 's husband a man or a woman ?", []).form == "list"
    answer = ask(films, "Can you name a film directed by Damien Chazelle?", strategy="offline", rerank="none")
    assert answer.form == "list" and answer.value is None and answer.headline.startswith("2 films: ")
    assert {i.label for i in answer.items[:2]} == {"La La Land", "Whiplash"}
    assert ask(films, "Is Heath Ledger famous?", strategy="offline", rerank="none").form == "list"
    assert ask(films, "Count the films starring Emma Stone.", strategy="offline", rerank="none").value == 2
