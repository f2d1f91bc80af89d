"""Remote KBs: ``add_remote_kb`` writes a generation atomically; linking queries the endpoint."""

from __future__ import annotations

from pathlib import Path

import pytest
from virtuoso import FREEBASE_GRAPH, WIKIDATA_GRAPH, OxigraphSparqlServer, oxigraph_endpoint  # noqa: F401

from sparqlqa.errors import EndpointError, KBExists
from sparqlqa.kb.knowledge_base import kb_root, open_kb
from sparqlqa.remote import add_remote_kb
from sparqlqa.remote.endpoint import EndpointStore
from sparqlqa.remote.remote_kb import is_remote, open_endpoint, refresh_schema
from sparqlqa.remote.schema_sampling import SampleOptions

WDT = "http://www.wikidata.org/prop/direct/"
WD = "http://www.wikidata.org/entity/"


def _dead_url() -> str:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/sparql"


def test_add_remote_kb_writes_a_manifest_with_store_profile_and_sampled_schema(
        oxigraph_endpoint: OxigraphSparqlServer) -> None:  # noqa: F811
    kb = add_remote_kb("wd", oxigraph_endpoint.sparql_url, "wikidata", timeout=5, max_retries=1,
                       default_graphs=[WIKIDATA_GRAPH])
    assert is_remote(kb) and kb.directory is not None
    manifest = open_kb("wd").manifest
    assert manifest.store == {**manifest.store, "kind": "endpoint", "url": oxigraph_endpoint.sparql_url,
                              "timeout": 5, "max_retries": 1, "default_graphs": [WIKIDATA_GRAPH]}
    assert "user_agent" not in manifest.store  # the default follows upgrades
    assert manifest.profile["name"] == "wikidata" and manifest.extra["schema_source"] == "sampled"
    assert {r.label for r in kb.schema.relations} >= {"director", "cast member"}
    assert (kb.directory / "artifacts" / "schema-sample.json").is_file()
    assert isinstance(kb.store, EndpointStore)
    rows = kb.query(f"SELECT ?film WHERE {{ ?film <{WDT}P57> <{WD}Q56005> }}").rows
    assert len(rows) == 3
    assert all(ua.startswith("sparqlqa/") for ua in oxigraph_endpoint.user_agents)


def test_an_existing_kb_is_kept_unless_replaced(oxigraph_endpoint: OxigraphSparqlServer) -> None:  # noqa: F811
    url = oxigraph_endpoint.sparql_url
    first = add_remote_kb("fb", url, "freebase").manifest.generation
    sent = len(oxigraph_endpoint.queries)
    with pytest.raises(KBExists):
        add_remote_kb("fb", url, "freebase")
    assert len(oxigraph_endpoint.queries) == sent  # refused before any request
    second = add_remote_kb("fb", url, "freebase", replace=True).manifest.generation
    assert second != first and [p.name for p in kb_root("fb").iterdir() if p.is_dir()] == [second]


def test_a_dead_endpoint_leaves_the_old_kb_intact(oxigraph_endpoint: OxigraphSparqlServer) -> None:  # noqa: F811
    kept = add_remote_kb("films", oxigraph_endpoint.sparql_url, "generic").manifest.generation
    dead = _dead_url()
    with pytest.raises(EndpointError, match="connection refused") as caught:
        add_remote_kb("films", dead, "generic", replace=True, max_retries=0)
    assert dead in str(caught.value)
    assert open_kb("films").manifest.generation == kept
    with pytest.raises(EndpointError):
        add_remote_kb("never", dead, "generic", max_retries=0)
    assert not kb_root("never").exists()


def test_an_empty_endpoint_is_refused_with_a_hint(tmp_path: Path) -> None:
    with OxigraphSparqlServer([]) as empty, pytest.raises(EndpointError, match="holds no triples") as caught:
        add_remote_kb("empty", empty.sparql_url, "generic")
    assert "default_graphs" in (caught.value.hint or "")


def test_refresh_schema_resamples_into_a_new_generation(oxigraph_endpoint: OxigraphSparqlServer) -> None:  # noqa: F811
    kb = add_remote_kb("wd2", oxigraph_endpoint.sparql_url, "wikidata", sample=SampleOptions(edge_sample=5))
    again = refresh_schema("wd2")
    assert again.manifest.generation != kb.manifest.generation
    assert again.manifest.extra["sample"]["edge_sample"] == 5 and again.manifest.store == kb.manifest.store


def test_open_endpoint_caches_the_sampled_schema(oxigraph_endpoint: OxigraphSparqlServer,  # noqa: F811
                                                 sparqlqa_home: Path) -> None:
    kb = open_endpoint(oxigraph_endpoint.sparql_url, "wikidata")
    assert is_remote(kb) and kb.schema.relation("director") is not None
    sent = len(oxigraph_endpoint.queries)
    again = open_endpoint(oxigraph_endpoint.sparql_url, "wikidata")
    assert len(oxigraph_endpoint.queries) == sent  # schema from the cache: no request at all
    assert again.schema.relation("director") is not None
    assert list((sparqlqa_home / "cache" / "endpoints").glob("*.json"))


def test_linking_a_remote_kb_queries_the_endpoint(oxigraph_endpoint: OxigraphSparqlServer) -> None:  # noqa: F811
    from sparqlqa.stages.linking import link_constants
    from sparqlqa.stages.triplets import parse_arrow_triplets

    kb = add_remote_kb("wd3", oxigraph_endpoint.sparql_url, "wikidata")
    triplets = parse_arrow_triplets("film |?1| -> director -> human 'ridley scott'", schema=kb.schema)
    before = len(oxigraph_endpoint.queries)
    linked = link_constants(triplets, kb)
    assert [m.iri for m in linked.links["ridley scott"]] == [f"{WD}Q56005"]
    assert len(oxigraph_endpoint.queries) > before
    assert not (kb.directory / "artifacts" / "labels" / "index.json").exists()  # no full label index


def test_both_samples_share_one_stand_in_endpoint(oxigraph_endpoint: OxigraphSparqlServer) -> None:  # noqa: F811
    kb = add_remote_kb("fb2", oxigraph_endpoint.sparql_url, "freebase", default_graphs=[FREEBASE_GRAPH])
    assert kb.schema.relation("Directed by") is not None


def test_the_timeout_comes_from_the_option_else_the_profile(oxigraph_endpoint: OxigraphSparqlServer,  # noqa: F811
                                                            tmp_path: Path) -> None:
    from sparqlqa.remote.profiles import profile_file

    profile = tmp_path / "patient.toml"
    profile.write_text(profile_file("wikidata").read_text("utf-8") + "\n[endpoint]\ntimeout = 9\n")
    url = oxigraph_endpoint.sparql_url
    assert add_remote_kb("a", url, profile, default_graphs=[WIKIDATA_GRAPH]).manifest.store["timeout"] == 9
    assert add_remote_kb("b", url, profile, timeout=3, default_graphs=[WIKIDATA_GRAPH]).manifest.store["timeout"] == 3
    assert add_remote_kb("c", url, "wikidata", default_graphs=[WIKIDATA_GRAPH]).manifest.store["timeout"] == 60
    assert open_endpoint(url, profile, default_graphs=[WIKIDATA_GRAPH]).store.timeout == 9  # type: ignore[attr-defined]
