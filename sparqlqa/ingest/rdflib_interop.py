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

__all__ = ["ingest_graph", "kb_from_graph", "kb_to_graph"]

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyoxigraph import RdfFormat

from sparqlqa.kb.export import rdflib_term
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.store import OxigraphStore

if TYPE_CHECKING:
    import rdflib


#: a pyoxigraph term as the equivalent rdflib term
to_rdflib = rdflib_term


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


def kb_to_graph(kb: KnowledgeBase, *, source_only: bool = False) -> rdflib.Graph:
    """Every triple of ``kb`` (all graphs merged) in a new rdflib ``Graph``: :meth:`KnowledgeBase.to_rdflib`."""
    return kb.to_rdflib(source_only=source_only)
