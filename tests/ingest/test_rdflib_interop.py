"""rdflib interop: graphs in, graphs out."""

from __future__ import annotations

import rdflib

from sparqlqa.ingest.rdflib_interop import ingest_graph, kb_from_graph, kb_to_graph
from sparqlqa.kb.knowledge_base import open_kb


def sample_graph() -> rdflib.Graph:
    g = rdflib.Graph()
    ex = rdflib.Namespace("http://example.org/")
    g.add((ex.alien, rdflib.RDF.type, ex.Movie))
    g.add((ex.alien, rdflib.RDFS.label, rdflib.Literal("Alien", lang="en")))
    g.add((ex.alien, ex.year, rdflib.Literal(1979)))
    g.add((ex.alien, ex.directedBy, ex.scott))
    return g


def test_in_memory_roundtrip_keeps_every_triple() -> None:
    g = sample_graph()
    kb = kb_from_graph(g)
    back = kb_to_graph(kb)
    assert set(back) == set(g)
    assert kb.schema.relation("directedBy") is not None


def test_ingest_graph_to_disk() -> None:
    ingest_graph(sample_graph(), kb="from-rdflib")
    kb = open_kb("from-rdflib")
    assert kb.query('ASK { ?m <http://example.org/year> 1979 }').boolean
    exported = kb_to_graph(kb)
    assert set(sample_graph()) <= set(exported)
