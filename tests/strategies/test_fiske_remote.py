"""FiSKE over SPARQL endpoints: the Oxigraph stand-in (always) and a real Virtuoso (when installed;
required in CI).  The Freebase sample reaches actors through unnamed performance nodes (CVTs)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fiske_script import Script
from virtuoso import FREEBASE_GRAPH, SAMPLES, oxigraph_endpoint, virtuoso  # noqa: F401 - fixtures

from sparqlqa.ingest import ingest
from sparqlqa.remote import add_remote_kb, load_profile
from sparqlqa.strategies.ask import ask

NS = "http://rdf.freebase.com/ns/"
ACTED = Script(clues=["acted", "Top Hat"], relations={"[out] Performances / Actor": ("acted", 9)},
               pairs={"Ginger Rogers": ("acted", 9), "Fred Astaire": ("acted", 9)})


@pytest.fixture(params=["oxigraph-http", "virtuoso"])
def endpoint_url(request: pytest.FixtureRequest) -> Iterator[str]:
    server = request.getfixturevalue("oxigraph_endpoint" if request.param == "oxigraph-http" else "virtuoso")
    yield server.sparql_url


def test_fiske_passes_through_cvt_nodes_on_an_endpoint(endpoint_url: str) -> None:
    remote = add_remote_kb("fb-remote", endpoint_url, "freebase", default_graphs=[FREEBASE_GRAPH], timeout=30)
    local = ingest([SAMPLES[FREEBASE_GRAPH]], kb="fb-local", profile=load_profile("freebase"))
    answers = [ask(kb, "Who acted in Top Hat?", strategy="fiske", llm=ACTED.llm(), k=5, rerank="none")
               for kb in (remote, local)]
    found = [{i.iri for i in a.items if i.source == "filtered"} for a in answers]
    assert found[0] == found[1] == {f"{NS}m.0f4vbz", f"{NS}m.02bkg"}
    record = answers[0].meta.records["fiske"].to_dict()
    assert record["stop"] == "covered" and record["calls"] == 3
    hop = record["routes"][-1]["hops"][0]
    assert hop["relation"] == {"predicate": f"{NS}film.film.starring", "direction": "out",
                               "via": f"{NS}film.performance.actor"}
    assert {middle for _, middle, _ in hop["edges"]} == {f"{NS}m.0k004", f"{NS}m.0k005"}
    explore = [q for q in answers[0].queries if q.stage == "fiske"]
    assert explore and all(q.store.startswith("endpoint:") for q in explore)
    item = next(i for i in answers[0].items if i.iri == f"{NS}m.0f4vbz")
    assert (f"{NS}m.0gcs9", f"{NS}film.film.starring", f"{NS}m.0k004") in item.evidence_triples()
