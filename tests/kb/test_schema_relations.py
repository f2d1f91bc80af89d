"""The schema tells relations apart (issue 34 item 4): a value relation's domain comes from the data, and
two relations with the same label are shown with their subjects' type, in `sparqlqa schema` and the prompts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyoxigraph import RdfFormat

from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.profile import DEFAULT_PROFILE
from sparqlqa.kb.schema import compute_schema, relation_names
from sparqlqa.kb.store import OxigraphStore
from sparqlqa.stages.schema_prompt import schema_prompt
from sparqlqa.stages.triplets import resolve_relation
from sparqlqa.strategies.text2sparql.prompts import vocabulary

#: a graph mapped from two tables: both have a "name" column; a foreign key; no rdfs:label
GRAPH = """
@prefix s: <http://db.example/singer#> . @prefix t: <http://db.example/stadium#> .
@prefix c: <http://db.example/concert#> . @prefix x: <http://db.example/> .
x:s1 a x:singer ; s:name "Joe Sharp" ; s:age 52 . x:s2 a x:singer ; s:name "Rose White" ; s:age 41 .
x:s3 a x:singer ; s:name "John Nizinik" ; s:age 43 .
x:t1 a x:stadium ; t:name "Balmoor" ; t:capacity 2000 . x:t2 a x:stadium ; t:name "Glebe Park" .
x:c1 a x:concert ; c:stadium x:t1 ; c:name "Auditions" .
x:u1 s:name "an untyped row" .
"""


@pytest.fixture(scope="module")
def store() -> OxigraphStore:
    store = OxigraphStore.in_memory()
    store.oxstore.load(GRAPH.encode(), format=RdfFormat.TURTLE)
    return store


def _by_local(schema: Any) -> dict[str, Any]:
    return {rel.iri.split("/")[-1]: rel for rel in schema.relations}


def test_value_relations_get_their_domains_from_the_data(store: OxigraphStore) -> None:
    relations = _by_local(compute_schema(store, DEFAULT_PROFILE))
    assert relations["singer#age"].kind == "literal"
    assert relations["singer#age"].pairs == [("http://db.example/singer", None, 3)]
    assert relations["stadium#capacity"].pairs == [("http://db.example/stadium", None, 1)]
    assert relations["singer#name"].pairs == [("http://db.example/singer", None, 3), (None, None, 1)]
    assert relations["concert#stadium"].pairs == [("http://db.example/concert", "http://db.example/stadium", 1)]


def test_relations_labelled_alike_are_named_by_their_class(store: OxigraphStore) -> None:
    schema = compute_schema(store, DEFAULT_PROFILE)
    names = {iri.split("/")[-1]: name for iri, name in relation_names(schema).items()}
    assert names["singer#name"] == "singer name" and names["stadium#name"] == "stadium name"
    assert names["concert#name"] == "concert name" and names["singer#age"] == "age"  # one "age": kept
    found = [schema.relation("stadium name"), resolve_relation(schema, "Singer Name"), schema.relation("age")]
    assert [rel.iri if rel else None for rel in found] == [
        "http://db.example/stadium#name", "http://db.example/singer#name", "http://db.example/singer#age"]


def test_every_schema_prompt_shows_the_class_and_the_value_domain(store: OxigraphStore) -> None:
    schema = compute_schema(store, DEFAULT_PROFILE)
    text = schema_prompt(schema)
    assert "- singer name: singer → value; any → value" in text.splitlines()  # the untyped row too
    assert "- stadium name: stadium → value" in text.splitlines()
    assert "- age: singer → value" in text.splitlines()
    assert "- capacity: stadium → value" in text.splitlines()
    words, _ = vocabulary(schema, text, {}, "http://www.w3.org/2000/01/rdf-schema#label")
    assert "- singer name: <http://db.example/singer#name>" in words.splitlines()
    assert "- stadium name: <http://db.example/stadium#name>" in words.splitlines()
    squeezed = schema_prompt(schema, "how old is Joe Sharp", budget_tokens=60)  # the budget still holds
    assert len(squeezed) <= 60 * 4 and squeezed.splitlines()[-1].endswith('(use "any" if none fits)')


def test_the_schema_command_shows_names_and_value_domains(tmp_path: Path, runner: Any) -> None:
    from sparqlqa.cli import main
    from sparqlqa.ingest import ingest

    source = tmp_path / "db.ttl"
    source.write_text(GRAPH)
    with ingest([source], kb="db") as kb:
        assert isinstance(kb, KnowledgeBase)
    plain = runner.invoke(main, ["schema", "db", "--plain"])
    assert plain.exit_code == 0, plain.output
    lines = {line.split("\t")[1]: line.split("\t") for line in plain.output.splitlines()[1:]}
    assert lines["http://db.example/singer#name"][2] == "singer name"
    assert lines["http://db.example/stadium#capacity"][5] == "stadium → value (1)"
    table = runner.invoke(main, ["schema", "db"], env={"COLUMNS": "200"})
    assert "stadium name" in table.output and "singer → value (3)" in table.output
