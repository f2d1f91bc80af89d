"""Schema without scans: bounded, sampled queries named the profile's way."""

from __future__ import annotations

import re
from pathlib import Path

from pyoxigraph import RdfFormat
from recording_store import RecordingStore

from sparqlqa.kb.schema import Schema
from sparqlqa.kb.store import OxigraphStore
from sparqlqa.remote.profiles import load_profile
from sparqlqa.remote.schema_sampling import SampleOptions, apply_profile, sample_schema

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
WDT = "http://www.wikidata.org/prop/direct/"
WD = "http://www.wikidata.org/entity/"
NS = "http://rdf.freebase.com/ns/"



def sample_store(name: str) -> RecordingStore:
    store = OxigraphStore.in_memory()
    store.oxstore.load(path=str(FIXTURES / f"{name}_sample.nt"), format=RdfFormat.N_TRIPLES)
    return RecordingStore(store)


def test_wikidata_relations_are_named_through_their_property_entities() -> None:
    schema = sample_schema(sample_store("wikidata"), load_profile("wikidata"))
    by_iri = {r.iri: r for r in schema.relations}
    assert set(by_iri) == {f"{WDT}{p}" for p in ("P57", "P161", "P162", "P495", "P577", "P19")}
    assert by_iri[f"{WDT}P57"].label == "director" and by_iri[f"{WDT}P57"].aliases == ["directed by"]
    assert by_iri[f"{WDT}P577"].kind == "literal" and by_iri[f"{WDT}P57"].kind == "object"
    assert (f"{WD}Q11424", f"{WD}Q5") == by_iri[f"{WDT}P57"].pairs[0][:2]
    types = {t.iri: t.label for t in schema.types}
    assert types == {f"{WD}Q5": "human", f"{WD}Q11424": "film", f"{WD}Q515": "city", f"{WD}Q6256": "country"}
    assert schema.label_predicates == ["http://www.w3.org/2000/01/rdf-schema#label"]
    assert schema.type_predicate == f"{WDT}P31"


def test_freebase_meta_types_and_bookkeeping_are_left_out() -> None:
    schema = sample_schema(sample_store("freebase"), load_profile("freebase"))
    relations = {r.iri: r.label for r in schema.relations}
    assert relations[f"{NS}film.film.directed_by"] == "Directed by"
    assert f"{NS}type.property.schema" not in relations and f"{NS}type.object.name" not in relations
    types = {t.iri for t in schema.types}
    assert f"{NS}film.film" in types and f"{NS}type.property" not in types and f"{NS}type.type" not in types
    assert schema.text_predicates == [f"{NS}common.topic.description"]


def test_every_sampling_query_is_bounded() -> None:
    store = sample_store("wikidata")
    sample_schema(store, load_profile("wikidata"), SampleOptions(edge_sample=50, types=3))
    assert store.seen
    for query in store.seen:
        assert "GROUP BY" not in query.upper() and "COUNT(" not in query.upper()
        bounded = re.search(r"LIMIT \d+\s*$", query) or "VALUES ?x" in query or query.startswith("ASK")
        assert bounded, query
    assert any("LIMIT 50 }" in q for q in store.seen)


def test_samples_are_small_even_when_the_store_is_not() -> None:
    store = OxigraphStore.in_memory()
    rows = " ".join(f"<http://e/n{i}> <http://e/p{i % 7}> <http://e/n{i + 1}> ." for i in range(3000))
    store.oxstore.update(f"INSERT DATA {{ {rows} }}")
    recording = RecordingStore(store)
    schema = sample_schema(recording, load_profile("generic"), SampleOptions(edge_sample=100))
    assert {r.iri for r in schema.relations} == {f"http://e/p{i}" for i in range(7)}
    assert sum(r.count for r in schema.relations) == 100  # counted in the sample, not in the store


def test_profile_declared_relations_are_sampled_even_if_the_first_triples_miss_them() -> None:
    store = sample_store("wikidata")
    schema = sample_schema(store, load_profile("wikidata"), SampleOptions(edge_sample=1, types=0))
    assert {f"{WDT}P57", f"{WDT}P19"} <= {r.iri for r in schema.relations}
    assert f"{WDT}P58" not in {r.iri for r in schema.relations}  # declared, absent from the store


def test_apply_profile_relabels_a_full_scan_schema_the_same_way() -> None:
    from sparqlqa.kb.schema import compute_schema

    profile = load_profile("freebase")
    store = sample_store("freebase")
    full = compute_schema(store.inner, profile)
    fixed = apply_profile(full, store.inner, profile)
    sampled = sample_schema(store.inner, profile)
    assert {r.iri: r.label for r in fixed.relations} == {r.iri: r.label for r in sampled.relations}
    assert {t.iri: t.label for t in fixed.types} == {t.iri: t.label for t in sampled.types}
    assert isinstance(fixed, Schema) and fixed.triple_count == full.triple_count
