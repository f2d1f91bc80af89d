"""Identity and schema (issue 26, item 6) on the DBpedia-style fixture: one type per label with all its
IRIs, ``owl:sameAs`` groups answered as one node, paths through blank nodes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sparqlqa.ingest import ingest
from sparqlqa.kb.identity import identity_of
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.labels import LabelIndex
from sparqlqa.stages.execute import Candidates, find_candidates
from sparqlqa.stages.linking import link_constants
from sparqlqa.stages.schema_prompt import schema_prompt
from sparqlqa.stages.triplets import parse_arrow_triplets
from sparqlqa.vectors.index import index_nodes

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DBO, DBR, FOAF = "http://dbpedia.org/ontology/", "http://dbpedia.org/resource/", "http://xmlns.com/foaf/0.1/"
WIKIDATA_NOLAN = "http://www.wikidata.org/entity/Q25191"
#: the fixture's Wikidata alias of Nolan, given a name and a fact of its own; its blank node, a country
EXTRA = (f'\n<{WIKIDATA_NOLAN}> rdfs:label "Chris Nolan"@en ; dbo:spouse dbr:Emma_Thomas .\n'
         'dbr:Emma_Thomas a dbo:Person, foaf:Person ; rdfs:label "Emma Thomas"@en .\n')


@pytest.fixture
def films() -> KnowledgeBase:
    return ingest([FIXTURES / "dbpedia_films.ttl"], kb="films")


@pytest.fixture
def films_plus(tmp_path: Path) -> KnowledgeBase:
    text = (FIXTURES / "dbpedia_films.ttl").read_text(encoding="utf-8")
    blank = 'rdfs:label "a sound stage in Calgary"@en ]'
    assert blank in text
    text = text.replace(blank, 'rdfs:label "a sound stage in Calgary"@en ; dbo:country dbr:Canada ]') + EXTRA
    source = tmp_path / "films_plus.ttl"
    source.write_text(text, encoding="utf-8")
    return ingest([source], kb="films_plus")


def _run(kb: KnowledgeBase, arrow: str) -> Candidates:
    triplets = parse_arrow_triplets(arrow, "q", kb.schema)
    return find_candidates(triplets, link_constants(triplets, kb), kb)


# -- schema ------------------------------------------------------------------------------------------


def test_types_with_one_label_are_one_type_with_every_iri(films: KnowledgeBase) -> None:
    people = [t for t in films.schema.types if t.label == "person"]
    assert len(people) == 1
    assert people[0].iris == [f"{DBO}Person", f"{FOAF}Person"]
    assert people[0].count == 30  # each person counted once, not once per IRI
    assert films.schema.type(f"{FOAF}Person") is people[0]
    assert films.schema.type_alternatives(f"{DBO}Person") == [f"{DBO}Person", f"{FOAF}Person"]


def test_the_prompt_lists_each_type_and_relation_shape_once_and_no_same_as(films: KnowledgeBase) -> None:
    prompt = schema_prompt(films.schema)
    types_line = next(line for line in prompt.splitlines() if line.startswith("Node types:"))
    assert types_line.count("person") == 1
    assert "- birth place: person → city\n" in prompt
    assert "- starring: film → person\n" in prompt
    assert "same as" not in prompt
    assert films.schema.relation("http://www.w3.org/2002/07/owl#sameAs") is None


def test_a_relation_to_blank_nodes_has_its_types(films: KnowledgeBase) -> None:
    location = films.schema.relation(f"{DBO}filmingLocation")
    assert location is not None and location.kind == "object"
    assert [(d, r) for d, r, _ in location.pairs] == [(f"{DBO}Film", f"{DBO}Place")]


def test_a_typed_variable_matches_any_iri_of_its_type(films: KnowledgeBase) -> None:
    found = _run(films, "film 'Inception' -> starring -> person |?1|")
    assert f"VALUES ?v_1_type {{ <{DBO}Person> <{FOAF}Person> }}" in found.compiled[0].sparql
    assert sorted(found.iris()) == [f"{DBR}Joseph_Gordon-Levitt", f"{DBR}Leonardo_DiCaprio"]


# -- owl:sameAs --------------------------------------------------------------------------------------


def test_same_as_groups_pick_the_named_node_in_the_files_own_namespace(films: KnowledgeBase) -> None:
    identity = identity_of(films)
    assert identity.aliases == {WIKIDATA_NOLAN: f"{DBR}Christopher_Nolan"}
    assert identity.members(WIKIDATA_NOLAN) == [f"{DBR}Christopher_Nolan", WIKIDATA_NOLAN]


def test_an_alias_has_no_index_entry_of_its_own(films: KnowledgeBase, films_plus: KnowledgeBase) -> None:
    ids, types = index_nodes(films)
    assert WIKIDATA_NOLAN not in ids
    assert len(ids) == 15 + 30 + 8 + 5  # films, people, cities, countries: the blank node and the alias are not
    assert films.manifest.counts["nodes"] == len(ids) + 1  # ingest counts the blank node, not sparqlqa's vocabulary
    assert types[f"{DBR}Christopher_Nolan"] == [f"{DBO}Person"]  # a merged type by its first IRI
    plus_ids, _ = index_nodes(films_plus)
    assert WIKIDATA_NOLAN not in plus_ids and f"{DBR}Emma_Thomas" in plus_ids


def test_an_alias_s_names_link_to_the_canonical_node(films: KnowledgeBase, films_plus: KnowledgeBase) -> None:
    index = LabelIndex.for_kb(films_plus)
    assert [m.iri for m in index.exact("Chris Nolan")] == [f"{DBR}Christopher_Nolan"]
    assert index.label_of(WIKIDATA_NOLAN) is None  # no node of its own
    assert [m.iri for m in LabelIndex.for_kb(films).exact("Q25191")] == [f"{DBR}Christopher_Nolan"]


def test_questions_reach_an_alias_s_facts_and_answer_the_canonical_node(films_plus: KnowledgeBase) -> None:
    spouse = _run(films_plus, "person 'Christopher Nolan' -> spouse -> person |?1|")
    assert spouse.iris() == [f"{DBR}Emma_Thomas"]
    married = _run(films_plus, "person |?1| -> spouse -> person 'Emma Thomas'")
    assert married.iris() == [f"{DBR}Christopher_Nolan"]  # found through the (untyped) alias, answered as Nolan
    by_alias_name = _run(films_plus, "film |?1| -> director -> person 'Chris Nolan'")
    assert sorted(by_alias_name.iris()) == sorted(f"{DBR}{f}" for f in
                                                  ("Inception", "Interstellar", "Memento", "The_Dark_Knight"))


# -- blank nodes -------------------------------------------------------------------------------------


def test_a_path_through_a_blank_node_compiles_and_answers(films_plus: KnowledgeBase) -> None:
    found = _run(films_plus, "film |?1| -> filming location -> place ?2; ?2 -> country -> country 'Canada'")
    assert found.iris() == [f"{DBR}Inception"]
    assert found.items[0].tier == 0
    (film, location, place), (blank, country, canada) = found.items[0].evidence.triples
    assert (film, location, country, canada) == (f"{DBR}Inception", f"{DBO}filmingLocation", f"{DBO}country",
                                                 f"{DBR}Canada")
    assert place == blank and place.startswith("_:")


# -- names of things without a label ----------------------------------------------------------------


def test_evidence_names_unlabelled_relations_by_the_files_prefixes(films: KnowledgeBase) -> None:
    from sparqlqa.kb.node_text import fetch_labels

    labels, _ = fetch_labels(films, [f"{DBO}birthPlace", f"{DBR}London", "http://www.w3.org/2000/01/rdf-schema#label"])
    assert labels[f"{DBO}birthPlace"] == "dbo:birthPlace"  # not the raw local name "birthPlace"
    assert labels[f"{DBR}London"] == "London"
    found = _run(films, "person 'Christopher Nolan' -> birth place -> city |?1|")
    (edge,) = found.items[0].evidence.triples
    names, _ = fetch_labels(films, list(edge))
    assert [names[part] for part in edge] == ["Christopher Nolan", "dbo:birthPlace", "London"]


def test_the_schema_command_prints_prefixed_names(films: KnowledgeBase, runner: Any) -> None:
    from sparqlqa.cli import main

    result = runner.invoke(main, ["schema", "films"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "dbo:Person, foaf:Person" in result.output
    assert "labels: rdfs:label, foaf:name" in result.output
    assert "owl:sameAs" not in result.output


def test_a_schema_stored_before_the_merge_reads_back_merged() -> None:
    from sparqlqa.kb.schema import Schema

    stored = {"types": [{"iri": f"{DBO}Person", "label": "person", "count": 3},
                        {"iri": f"{FOAF}Person", "label": "person", "count": 3}],
              "relations": [{"iri": f"{DBO}birthPlace", "label": "birth place", "count": 3,
                             "pairs": [[f"{DBO}Person", f"{DBO}City", 3], [f"{FOAF}Person", f"{DBO}City", 3]]},
                            {"iri": "http://www.w3.org/2002/07/owl#sameAs", "label": "same as", "count": 1}]}
    schema = Schema.from_dict(stored)
    assert [(t.iri, t.also) for t in schema.types] == [(f"{DBO}Person", [f"{FOAF}Person"])]
    assert [(r.iri, r.pairs) for r in schema.relations] == [(f"{DBO}birthPlace", [(f"{DBO}Person", f"{DBO}City", 3)])]


def test_a_blank_node_answer_is_its_label(films: KnowledgeBase) -> None:
    found = _run(films, "film 'Inception' -> filming location -> place |?1|")
    assert found.iris() == ['"a sound stage in Calgary"@en']
    ((film, location, place),) = found.items[0].evidence.triples
    assert (film, location) == (f"{DBR}Inception", f"{DBO}filmingLocation") and place.startswith("_:")
    counted = _run(films, "film 'Inception' -> filming location -> |?1|\nform: count")
    assert counted.value == 1


def test_ask_answers_with_a_blank_node_s_label(films: KnowledgeBase) -> None:
    from sparqlqa.llm import FakeLLM
    from sparqlqa.strategies.ask import ask

    triplets = {"triplets": [{"head": {"kind": "constant", "text": "Inception"}, "relation": "filming location",
                              "tail": {"kind": "variable", "text": "?x1"}}], "target": "?x1"}
    answer = ask(films, "Where was Inception filmed?", llm=FakeLLM([triplets]), rerank="none")
    top = answer.items[0]
    assert (top.label, top.kind, top.matched) == ("a sound stage in Calgary", "value", True)
    assert top.evidence_text(answer.labels) == ["Inception —dbo:filmingLocation→ (unnamed node)"]
