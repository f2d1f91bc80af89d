"""rdflib interop: build a KB from an rdflib ``Graph`` and export a KB to one.

>>> import rdflib
>>> g = rdflib.Graph()
>>> _ = g.add((rdflib.URIRef("http://e/alien"), rdflib.RDFS.label, rdflib.Literal("Alien")))
>>> kb = kb_from_graph(g, name="tiny")
>>> kb.query("ASK { ?s ?p 'Alien' }").boolean
True
>>> len(kb_to_graph(kb)) == len(g)
True
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyoxigraph import BlankNode, Literal, NamedNode, RdfFormat

from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.store import OxigraphStore, Term

if TYPE_CHECKING:
    import rdflib


def to_rdflib(term: Term) -> Any:
    """A pyoxigraph term as the equivalent rdflib term."""
    import rdflib

    if isinstance(term, NamedNode):
        return rdflib.URIRef(term.value)
    if isinstance(term, BlankNode):
        return rdflib.BNode(term.value)
    if isinstance(term, Literal):
        if term.language:
            return rdflib.Literal(term.value, lang=term.language)
        return rdflib.Literal(term.value, datatype=rdflib.URIRef(term.datatype.value))
    raise TypeError(f"rdflib has no equivalent of {term!r}")


def _ntriples(graph: rdflib.Graph) -> bytes:
    data = graph.serialize(format="nt", encoding="utf-8")
    return data if isinstance(data, bytes) else data.encode("utf-8")


def kb_from_graph(graph: rdflib.Graph, *, name: str = "rdflib") -> KnowledgeBase:
    """An in-memory KB holding ``graph``'s triples (schema computed on the spot)."""
    store = OxigraphStore.in_memory()
    store.oxstore.bulk_load(input=_ntriples(graph), format=RdfFormat.N_TRIPLES)
    return KnowledgeBase.in_memory(name, store)


def ingest_graph(graph: rdflib.Graph, *, kb: str, replace: bool = False, **options: Any) -> KnowledgeBase:
    """Build the on-disk KB ``kb`` from ``graph`` (atomic, like ``sparqlqa ingest``)."""
    from sparqlqa.ingest import ingest

    with tempfile.TemporaryDirectory(prefix="sparqlqa-rdflib-") as folder:
        path = Path(folder) / "graph.nt"
        path.write_bytes(_ntriples(graph))
        return ingest([path], kb=kb, format="nt", replace=replace, **options)


def kb_to_graph(kb: KnowledgeBase) -> rdflib.Graph:
    """Every triple of ``kb`` (all graphs merged) in a new rdflib ``Graph``."""
    import rdflib

    graph = rdflib.Graph()
    result = kb.query("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }")
    for triple in result.triples:
        graph.add((to_rdflib(triple.subject), to_rdflib(triple.predicate), to_rdflib(triple.object)))
    return graph
