"""Name → node lookups by query (no persisted index), and their safety."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from pyoxigraph import RdfFormat
from recording_store import RecordingStore

from sparqlqa.kb.store import OxigraphStore, QueryResult, Store
from sparqlqa.query.sparql_guard import query_form
from sparqlqa.remote.labels import RemoteLabelLookup, bif_contains_expression, name_variants
from sparqlqa.remote.profiles import load_profile

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
WD = "http://www.wikidata.org/entity/"
NS = "http://rdf.freebase.com/ns/"



class EmptyStore(Store):
    """Answers every SELECT with no rows (Oxigraph would really call a SERVICE over the network)."""

    kind = "empty"

    def _execute(self, sparql: str, form: str) -> QueryResult:
        return QueryResult(query=sparql, form=form, variables=["node", "name", "p", "v"])


def lookup_for(name: str, **changes: object) -> tuple[RemoteLabelLookup, RecordingStore]:
    store: Store = EmptyStore()
    if changes.get("name_search") != "mwapi":
        local = OxigraphStore.in_memory()
        local.oxstore.load(path=str(FIXTURES / f"{name}_sample.nt"), format=RdfFormat.N_TRIPLES)
        store = local
    recording = RecordingStore(store)
    profile = replace(load_profile(name), **changes)  # type: ignore[arg-type]
    return RemoteLabelLookup(recording, profile), recording


def test_exact_matches_labels_and_aliases_up_to_case() -> None:
    lookup, _ = lookup_for("wikidata")
    [scott] = lookup.exact("ridley SCOTT")
    assert (scott.iri, scott.label, scott.score, scott.method) == (f"{WD}Q56005", "Ridley Scott", 1.0, "exact")
    assert [m.iri for m in lookup.exact("Sir Ridley Scott")] == [f"{WD}Q56005"]  # an alias
    assert [m.label for m in lookup.exact("alien (1979)")] == ["Alien"]
    assert lookup.exact("Alien – Das unheimliche Wesen aus einer fremden Welt") == []  # German label
    assert lookup.exact("   ") == []
    assert name_variants("top hat") == ["top hat", "Top Hat", "Top hat"]


def test_exact_respects_the_stated_type() -> None:
    lookup, _ = lookup_for("wikidata")
    assert [m.iri for m in lookup.exact("Alien", f"{WD}Q11424")] == [f"{WD}Q103569"]
    assert lookup.exact("Alien", f"{WD}Q5") == []


def test_types_labels_and_meta_nodes() -> None:
    lookup, _ = lookup_for("freebase")
    assert set(lookup.types_of(f"{NS}m.06pj8")) == {f"{NS}people.person", f"{NS}film.director"}
    assert lookup.label_of(f"{NS}m.0gcs9") == "Top Hat"
    assert lookup.exact("Film") == []  # ns:film.film is a type.type: a meta node, never a link


def test_prime_finds_every_mentioned_name_in_one_query() -> None:
    lookup, store = lookup_for("wikidata")
    found = lookup.prime("Which films starring ginger rogers did Mark Sandrich direct?")
    assert found["ginger rogers"] == [f"{WD}Q95050"] and found["mark sandrich"] == [f"{WD}Q1327393"]
    assert {"ginger rogers", "mark sandrich"} <= set(lookup.normalized_keys())
    assert lookup.nodes_for_key("mark sandrich") == [f"{WD}Q1327393"]
    assert len(store.seen) == 1


def test_without_an_engine_search_fuzzy_finds_nothing_new() -> None:
    lookup, store = lookup_for("wikidata")
    assert lookup.fuzzy("Ridley Scot") == [] and lookup.containing("Ridley") == []
    assert store.seen == []  # "exact" profiles send no search query at all


def test_bif_contains_expressions_cannot_be_escaped() -> None:
    assert bif_contains_expression('Ridley") } ; DROP ALL #') == '"ridley" AND "drop" AND "all"'
    assert bif_contains_expression("Ginger Rogers", operator="OR") == '"ginger" OR "rogers"'
    assert bif_contains_expression("a") is None
    with pytest.raises(ValueError):
        bif_contains_expression("x", operator="NEAR")


@pytest.mark.parametrize("text", ['Robert "); DROP GRAPH <urn:x> #', "O'Brien\\\n} INSERT DATA {", "日本 映画"])
def test_hostile_names_stay_literals_in_read_queries(text: str) -> None:
    for name_search in ("exact", "bif:contains", "mwapi"):
        lookup, store = lookup_for("freebase", name_search=name_search)
        lookup.exact(text)
        lookup.fuzzy(text)
        lookup.prime(text)
        assert store.seen
        for query in store.seen:
            assert query_form(query) == "SELECT"  # the guard would refuse an update


def test_bif_contains_search_query_shape() -> None:
    lookup, store = lookup_for("freebase")
    assert lookup.containing("Top Hat") == []  # Oxigraph has no bif:contains: the pattern matches nothing
    [query] = store.seen
    assert '<bif:contains> "\\"top\\" AND \\"hat\\""' in query and query.rstrip().endswith("LIMIT 50")


def test_mwapi_search_query_shape() -> None:
    lookup, store = lookup_for("wikidata", name_search="mwapi")
    lookup.fuzzy("Douglas Adams")
    [query] = store.seen
    assert "SERVICE <http://wikiba.se/ontology#mwapi>" in query
    assert '<https://www.mediawiki.org/ontology#API/search> "Douglas Adams"' in query


def test_mwapi_is_allowed_only_in_the_lookups_own_queries() -> None:
    from sparqlqa.errors import ServiceRefused

    lookup, store = lookup_for("wikidata", name_search="mwapi")
    lookup.fuzzy("Douglas Adams")
    [own] = store.seen
    with pytest.raises(ServiceRefused, match=r"wikiba\.se"):  # the same text as a user's query stays refused
        store.query(own)
    with pytest.raises(ServiceRefused, match=r"evil\.org"):  # the exemption is the exact IRI, not its host
        store.query("SELECT * { SERVICE <http://evil.org/x> { ?s ?p ?o } }",
                    engine_services={"http://wikiba.se/ontology#mwapi"})
    with pytest.raises(ServiceRefused, match=r"wikiba\.se"):  # Oxigraph would fetch it: never exempt there
        OxigraphStore.in_memory().query(own, engine_services={"http://wikiba.se/ontology#mwapi"})
    assert len(store.seen) == 1


def test_the_askers_language_is_looked_up_as_well_as_english() -> None:
    from sparqlqa.language import asked_in

    lookup, recording = lookup_for("wikidata")
    german = "Alien – Das unheimliche Wesen aus einer fremden Welt"
    with asked_in("de", "en"):
        [alien] = lookup.exact(german)
        assert (alien.iri, alien.label) == (f"{WD}Q103569", german)  # named in the asker's language
        assert [m.label for m in lookup.exact("ridley scott")] == ["Ridley Scott"]  # English still found
    assert lookup.exact(german) == []  # an English question: as before
    assert [m.label for m in lookup.exact("alien (1979)")] == ["Alien"]
    mwapi, store = lookup_for("wikidata", name_search="mwapi")
    with asked_in("de", "en"):
        mwapi.fuzzy("Douglas Adams")
    assert '<https://www.mediawiki.org/ontology#API/language> "de"' in store.seen[0]
    assert 'langMatches(lang(?name), "de")' in store.seen[0] and 'langMatches(lang(?name), "en")' in store.seen[0]
    assert len(recording.seen) >= 1
