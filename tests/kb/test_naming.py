"""KBs that name their nodes the way real data does: schema.org / FOAF / Dublin Core names, several
languages, or no names at all (nodes known only by their IRIs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sparqlqa.ingest import ingest
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.labels import LabelIndex
from sparqlqa.kb.naming import name_from_iri
from sparqlqa.kb.vocab import FOAF, RDFS, SCHEMA, SCHEMA_HTTPS
from sparqlqa.llm import FakeLLM
from sparqlqa.strategies.ask import ask
from sparqlqa.vectors.index import index_nodes

PEOPLE_TTL = """\
@prefix ex: <http://example.org/> .
@prefix schema: <http://schema.org/> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> .
@prefix dcterms: <http://purl.org/dc/terms/> .
ex:alice a schema:Person ; schema:name "Alice Schmidt"@de , "Alice Smith"@en ;
   schema:alternateName "Ally" ; schema:worksFor ex:acme ;
   schema:description "Alice is an engineer who likes climbing." .
ex:bob a schema:Person ; foaf:name "Bob Jones" ; schema:worksFor ex:globex .
ex:acme a schema:Organization ; schema:name "ACME Corp" ; schema:location ex:berlin .
ex:globex a schema:Organization ; schema:name "Globex" ; schema:location ex:paris .
ex:berlin a schema:City ; schema:name "Berlin" .
ex:paris a schema:City ; schema:name "Paris" .
ex:report dcterms:title "Annual Report 2025" ; schema:author ex:alice .
"""

RES, ONT = "http://dbpedia.org/resource/", "http://dbpedia.org/ontology/"
UNNAMED_NT = "".join(f"<{RES}{s}> <{ONT}{p}> <{RES}{o}> .\n" for s, p, o in [
    ("Alice_Smith", "employer", "ACME_Corp"), ("ACME_Corp", "headquarter", "Berlin"),
    ("Bob", "employer", "Globex"), ("Globex", "headquarter", "Paris")])
UNNAMED_NT += f'<{RES}Paris> <http://www.w3.org/2000/01/rdf-schema#label> "Paris, France" .\n'


def _triplets(start: str, *relations: str) -> dict[str, Any]:
    """An LLM's triplets for a chain ``start -r1-> ?x1 -r2-> ?x2 ...`` whose last variable is the target."""
    chain = [{"head": {"kind": "constant", "text": start}, "relation": relations[0],
              "tail": {"kind": "variable", "text": "?x1"}}]
    for n, relation in enumerate(relations[1:], start=1):
        chain.append({"head": {"kind": "variable", "text": f"?x{n}"}, "relation": relation,
                      "tail": {"kind": "variable", "text": f"?x{n + 1}"}})
    return {"triplets": chain, "target": f"?x{len(relations)}", "requirements": []}


@pytest.fixture
def people(tmp_path: Path) -> KnowledgeBase:
    (tmp_path / "people.ttl").write_text(PEOPLE_TTL, "utf-8")
    return ingest([tmp_path / "people.ttl"], kb="people")


@pytest.fixture
def unnamed(tmp_path: Path) -> KnowledgeBase:
    (tmp_path / "dbp.nt").write_text(UNNAMED_NT, "utf-8")
    return ingest([tmp_path / "dbp.nt"], kb="dbp")


def test_common_name_predicates_are_found_at_ingest(people: KnowledgeBase) -> None:
    schema = people.schema
    assert {SCHEMA.name.value, FOAF.name.value, "http://purl.org/dc/terms/title"} <= set(schema.label_predicates)
    assert SCHEMA.alternateName.value in schema.alias_predicates
    assert SCHEMA.description.value in schema.text_predicates
    assert SCHEMA_HTTPS.name.value not in schema.label_predicates  # only what the data uses
    relations = {r.iri for r in schema.relations}
    assert SCHEMA.name.value not in relations and SCHEMA.worksFor.value in relations


def test_schema_org_foaf_and_dcterms_names_link(people: KnowledgeBase) -> None:
    index = LabelIndex.for_kb(people)
    for name, iri in [("Alice Smith", "alice"), ("Alice Schmidt", "alice"), ("Ally", "alice"),
                      ("Bob Jones", "bob"), ("Annual Report 2025", "report")]:
        assert [m.iri for m in index.exact(name)] == [f"http://example.org/{iri}"], name


def test_the_name_shown_prefers_untagged_then_english(people: KnowledgeBase) -> None:
    assert LabelIndex.for_kb(people).label_of("http://example.org/alice") == "Alice Smith"
    answer = ask(people, "Where is the employer of Alice Smith?",
                 llm=FakeLLM([_triplets("Alice Smith", "works for", "location")]), rerank="none")
    assert answer.items[0].label == "Berlin" and answer.items[0].tier == 0
    assert "Alice Smith —schema:worksFor→ ACME Corp" in answer.items[0].evidence_text(answer.labels)


def test_nodes_without_names_are_named_after_their_iris(unnamed: KnowledgeBase) -> None:
    index = LabelIndex.for_kb(unnamed)
    assert [m.iri for m in index.exact("alice smith")] == ["http://dbpedia.org/resource/Alice_Smith"]
    assert index.label_of("http://dbpedia.org/resource/Berlin") == "Berlin"  # only ever an object
    assert index.label_of("http://dbpedia.org/resource/Paris") == "Paris, France"  # its own label wins
    ids, _types = index_nodes(unnamed)
    assert len(ids) == 6 and "http://dbpedia.org/resource/Berlin" in ids


def test_a_question_about_unnamed_nodes_is_answered_with_readable_names(unnamed: KnowledgeBase) -> None:
    answer = ask(unnamed, "Where is the headquarter of Alice Smith's employer?",
                 llm=FakeLLM([_triplets("Alice Smith", "employer", "headquarter")]), rerank="none")
    top = answer.items[0]
    assert (top.iri, top.label, top.tier) == ("http://dbpedia.org/resource/Berlin", "Berlin", 0)
    assert top.evidence_text(answer.labels) == ["Alice Smith —dbo:employer→ ACME Corp",
                                                "ACME Corp —dbo:headquarter→ Berlin"]


def test_offline_strategy_reaches_unnamed_nodes(unnamed: KnowledgeBase) -> None:
    answer = ask(unnamed, "who is the employer of Bob", strategy="offline", rerank="none")
    assert answer.items[0].label == "Globex" and answer.items[0].tier == 0


def test_name_from_iri_never_returns_blank() -> None:
    assert name_from_iri("http://x.org/a/__/") == "http://x.org/a/__/"
    assert name_from_iri(RDFS.label.value) == "label"
