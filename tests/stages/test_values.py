"""Questions whose answer is a value (a literal: a date, a postal code), and paths through unnamed
intermediate nodes (blank nodes), on a user-style schema.org KB."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sparqlqa.ingest import ingest
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.terms import term_from_key
from sparqlqa.kb.vocab import SCHEMA, XSD
from sparqlqa.llm import FakeLLM
from sparqlqa.strategies.ask import ask
from sparqlqa.strategies.offline.paths import enumerate_paths

KB_TTL = """\
@prefix ex: <http://example.org/> .
@prefix schema: <http://schema.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:alice a schema:Person ; schema:name "Alice Smith" ; schema:birthDate "1980-04-02"^^xsd:date ;
   schema:worksFor ex:acme ; schema:knows ex:bob .
ex:bob a schema:Person ; schema:name "Bob Jones" ; schema:birthDate "1975-11-30"^^xsd:date ;
   schema:worksFor ex:acme ;
   schema:address [ schema:addressLocality "Paris" ; schema:postalCode "75001" ] .
ex:carol a schema:Person ; schema:name "Carol King" ; schema:birthDate "1990-01-15"^^xsd:date ;
   schema:worksFor ex:globex .
ex:acme a schema:Organization ; schema:name "ACME Corp" ; schema:numberOfEmployees 250 .
ex:globex a schema:Organization ; schema:name "Globex" ; schema:numberOfEmployees 12 .
"""


def _chain(start: str, *relations: str) -> dict[str, Any]:
    """An LLM's triplets ``start -r1-> ?x1 -r2-> ?x2 ...``, the last variable the target."""
    triplets = []
    for n, relation in enumerate(relations, start=1):
        head = {"kind": "constant", "text": start} if n == 1 else {"kind": "variable", "text": f"?x{n - 1}"}
        triplets.append({"head": head, "relation": relation, "tail": {"kind": "variable", "text": f"?x{n}"}})
    return {"triplets": triplets, "target": f"?x{len(relations)}", "requirements": []}


@pytest.fixture
def people(tmp_path: Path) -> KnowledgeBase:
    (tmp_path / "people.ttl").write_text(KB_TTL, "utf-8")
    return ingest([tmp_path / "people.ttl"], kb="people")


def test_a_literal_relation_answers_with_its_value(people: KnowledgeBase) -> None:
    answer = ask(people, "When was Alice Smith born?", llm=FakeLLM([_chain("Alice Smith", "birth date")]),
                 rerank="none")
    top = answer.items[0]
    assert (top.kind, top.label, top.type, top.type_label, top.tier) == ("value", "1980-04-02", XSD.date.value,
                                                                         "date", 0)
    assert term_from_key(top.iri).value == "1980-04-02"
    assert top.evidence_text(answer.labels) == ["Alice Smith —schema:birthDate→ 1980-04-02"]
    assert [i.source for i in answer.items] == ["filtered"]  # no node top-up below a value
    assert "FILTER(!isBlank(?v_x1))" in answer.candidates.compiled[0].sparql  # type: ignore[union-attr]
    assert answer.to_dict()["items"][0]["kind"] == "value"


def test_values_two_hops_away_and_numbers(people: KnowledgeBase) -> None:
    answer = ask(people, "How many employees does Bob Jones's employer have?",
                 llm=FakeLLM([_chain("Bob Jones", "works for", "number of employees")]), rerank="none")
    assert [(i.label, i.kind, i.type_label) for i in answer.items] == [("250", "value", "integer")]
    assert answer.items[0].evidence_text(answer.labels) == [
        "Bob Jones —schema:worksFor→ ACME Corp", "ACME Corp —schema:numberOfEmployees→ 250"]


def test_a_path_through_a_blank_node(people: KnowledgeBase) -> None:
    answer = ask(people, "What is the postal code of Bob Jones?",
                 llm=FakeLLM([_chain("Bob Jones", "address", "postal code")]), rerank="none")
    top = answer.items[0]
    assert (top.label, top.kind, top.tier) == ("75001", "value", 0)
    assert top.evidence_text(answer.labels) == ["Bob Jones —schema:address→ (unnamed node)",
                                                "(unnamed node) —schema:postalCode→ 75001"]


def test_a_value_query_reruns_unchanged_on_the_kb(people: KnowledgeBase) -> None:
    answer = ask(people, "When was Carol King born?", llm=FakeLLM([_chain("Carol King", "birth date")]),
                 rerank="none")
    rerun = people.query(answer.candidates.compiled[0].sparql)  # type: ignore[union-attr]
    assert [str(row[0]) for row in rerun.rows] == [answer.items[0].iri]


def test_node_targets_still_exclude_values(people: KnowledgeBase) -> None:
    answer = ask(people, "Who works for ACME Corp?", llm=FakeLLM([{
        "triplets": [{"head": {"kind": "variable", "text": "?x1"}, "relation": "works for",
                      "tail": {"kind": "constant", "text": "ACME Corp"}}], "target": "?x1", "requirements": []}]),
        rerank="none")
    assert {i.label for i in answer.items if i.source == "filtered"} == {"Alice Smith", "Bob Jones"}
    assert all(i.kind == "node" for i in answer.items)


def test_offline_paths_may_end_on_a_value_forwards_only(people: KnowledgeBase) -> None:
    paths = enumerate_paths(people, "http://example.org/alice")
    arrows = {p.arrows() for p in paths}
    assert "-birthDate->" in arrows and "-worksFor->-numberOfEmployees->" in arrows
    assert not any("<-birthDate-" in a or "<-numberOfEmployees-" in a for a in arrows)
    assert not any(a.startswith("-birthDate->") and a != "-birthDate->" for a in arrows)  # a value ends a path


def test_offline_answers_a_value_question(people: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARQLQA_EMBEDDER", "onnx:all-MiniLM-L6-v2")
    answer = ask(people, "When was Carol King born?", strategy="offline", rerank="none")
    assert (answer.items[0].label, answer.items[0].kind) == ("1990-01-15", "value")
    assert SCHEMA.birthDate.value in answer.candidates.compiled[0].sparql  # type: ignore[union-attr]


def test_the_triplet_prompt_asks_for_values_only_where_relations_hold_them(people: KnowledgeBase,
                                                                           movies_kb: KnowledgeBase) -> None:
    from sparqlqa.stages.triplets import VALUE_RULE, VALUE_RULE_ASKED, build_prompt

    assert VALUE_RULE_ASKED in build_prompt("When was Alice Smith born?", people.schema)
    unchanged = build_prompt("Who directed Alien?", movies_kb.schema)  # no value relations: no "value" rule
    assert VALUE_RULE not in unchanged and VALUE_RULE_ASKED not in unchanged and 'tail is "value"' not in unchanged


def test_rerank_texts_state_a_node_s_values(people: KnowledgeBase) -> None:
    from sparqlqa.kb.node_text import node_texts

    text = node_texts(people, ["http://example.org/alice"], mode="full")["http://example.org/alice"]
    assert "Alice Smith birth date 1980-04-02" in text and "Alice Smith works for ACME Corp" in text
    value = '"1980-04-02"^^<http://www.w3.org/2001/XMLSchema#date>'
    assert node_texts(people, [value], mode="full")[value] == "1980-04-02. Alice Smith birth date 1980-04-02."
