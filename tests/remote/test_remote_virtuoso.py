"""A real Virtuoso on 127.0.0.1: terms, forms, errors, sampled schema and bif:contains name search.

Skips when Virtuoso is not installed (scripts/install_virtuoso.sh); fails instead when
SPARQLQA_REQUIRE_VIRTUOSO=1, as in CI.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from pyoxigraph import RdfFormat
from virtuoso import FREEBASE_GRAPH, SAMPLES, WIKIDATA_GRAPH, VirtuosoServer, virtuoso  # noqa: F401

from sparqlqa.errors import EndpointError, SparqlSyntaxError, UpdateRefused
from sparqlqa.kb.store import OxigraphStore
from sparqlqa.remote.endpoint import EndpointStore
from sparqlqa.remote.labels import RemoteLabelLookup
from sparqlqa.remote.profiles import load_profile
from sparqlqa.remote.schema_sampling import sample_schema

pytestmark = pytest.mark.virtuoso
NS = "http://rdf.freebase.com/ns/"
WD = "http://www.wikidata.org/entity/"


def _stores(server: VirtuosoServer, graph: str) -> tuple[EndpointStore, OxigraphStore]:
    remote = EndpointStore(server.sparql_url, default_graphs=[graph], timeout=30, max_retries=1)
    local = OxigraphStore.in_memory()
    local.oxstore.load(path=str(SAMPLES[graph]), format=RdfFormat.N_TRIPLES)
    return remote, local


@pytest.mark.parametrize("graph", [WIKIDATA_GRAPH, FREEBASE_GRAPH])
def test_every_triple_comes_back_as_the_same_terms(virtuoso: VirtuosoServer, graph: str) -> None:  # noqa: F811
    remote, local = _stores(virtuoso, graph)
    query = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"
    assert set(remote.query(query).rows) == set(local.query(query).rows)  # IRIs, languages, datatypes


def test_ask_construct_describe_and_limits(virtuoso: VirtuosoServer) -> None:  # noqa: F811
    remote, local = _stores(virtuoso, FREEBASE_GRAPH)
    assert remote.query(f"ASK {{ <{NS}m.0gcs9> ?p ?o }}").boolean is True
    assert remote.query(f"ASK {{ <{NS}m.nothing> ?p ?o }}").boolean is False
    construct = f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ ?s ?p ?o FILTER(?s = <{NS}m.0gcs9>) }}"
    assert set(remote.query(construct).triples) == set(local.query(construct).triples)
    assert remote.query(f"DESCRIBE <{NS}m.0gcs9>").triples
    limited = EndpointStore(virtuoso.sparql_url, default_graphs=[FREEBASE_GRAPH], max_rows=7)
    assert len(limited.query("SELECT * WHERE { ?s ?p ?o }").rows) == 7


def test_virtuoso_errors_name_the_endpoint_and_keep_its_message(virtuoso: VirtuosoServer) -> None:  # noqa: F811
    remote, _ = _stores(virtuoso, WIKIDATA_GRAPH)
    with pytest.raises(SparqlSyntaxError):  # a user's malformed query never leaves: the guard cannot read it
        remote.query("SELECT ?s WHERE { ?s ?p }")
    # a query the SPARQL grammar allows and Virtuoso refuses (a function it does not know)
    with pytest.raises(EndpointError) as caught:
        remote.query("SELECT ?s WHERE { ?s ?p ?o FILTER(<urn:sparqlqa:no-such-function>(?o)) }")
    assert virtuoso.sparql_url in str(caught.value) and caught.value.hint
    with pytest.raises(UpdateRefused):
        remote.query(f"INSERT DATA {{ GRAPH <{WIKIDATA_GRAPH}> {{ <urn:a> <urn:b> <urn:c> }} }}")
    assert remote.query("ASK { <urn:a> <urn:b> <urn:c> }").boolean is False


@pytest.mark.parametrize(("profile", "graph"), [("wikidata", WIKIDATA_GRAPH), ("freebase", FREEBASE_GRAPH)])
def test_sampled_schema_matches_the_local_copy(virtuoso: VirtuosoServer, profile: str,  # noqa: F811
                                               graph: str) -> None:
    remote, local = _stores(virtuoso, graph)
    chosen = load_profile(profile)
    on_virtuoso, on_local = sample_schema(remote, chosen), sample_schema(local, chosen)
    assert on_virtuoso.to_dict() == on_local.to_dict()
    assert remote.requests_sent < 40


def test_bif_contains_name_search(virtuoso: VirtuosoServer) -> None:  # noqa: F811
    remote, _ = _stores(virtuoso, FREEBASE_GRAPH)
    lookup = RemoteLabelLookup(remote, load_profile("freebase"))
    assert [m.label for m in lookup.containing("ridley")] == ["Ridley Scott"]
    [near] = lookup.fuzzy("Top Hatt", cutoff=0.9)
    assert (near.iri, near.method) == (f"{NS}m.0gcs9", "fuzzy") and 0.9 <= near.score < 1
    assert lookup.containing('ginger") } ; DROP ALL #') == []  # sanitised: only words reach bif:contains
    assert [m.iri for m in lookup.exact("GINGER ROGERS", f"{NS}film.actor")] == [f"{NS}m.0f4vbz"]


def test_exact_lookup_on_wikidata_shape(virtuoso: VirtuosoServer) -> None:  # noqa: F811
    remote, _ = _stores(virtuoso, WIKIDATA_GRAPH)
    lookup = RemoteLabelLookup(remote, replace(load_profile("wikidata"), search_limit=5))
    assert [m.iri for m in lookup.exact("sir ridley scott")] == [f"{WD}Q56005"]
    assert lookup.prime("Who directed Top Hat?") == {"top hat": [f"{WD}Q1216287"]}
    assert lookup.types_of(f"{WD}Q1216287") == [f"{WD}Q11424"]
