"""IRIs sparqlqa uses, as pyoxigraph terms (``str(term)`` is valid SPARQL).

>>> str(RDFS.label)
'<http://www.w3.org/2000/01/rdf-schema#label>'
>>> str(SQA.text)
'<https://sparqlqa.dev/ns#text>'
"""

from __future__ import annotations

import re
from typing import Any

from pyoxigraph import NamedNode


class Namespace:
    """Attribute and item access mint :class:`NamedNode` terms under ``base``."""

    def __init__(self, base: str) -> None:
        self.base = base

    def __getattr__(self, name: str) -> NamedNode:
        if name.startswith("__"):
            raise AttributeError(name)
        return NamedNode(self.base + name)

    def __getitem__(self, name: str) -> NamedNode:
        return NamedNode(self.base + name)

    def __str__(self) -> str:
        return self.base


RDF = Namespace("http://www.w3.org/1999/02/22-rdf-syntax-ns#")
RDFS = Namespace("http://www.w3.org/2000/01/rdf-schema#")
OWL = Namespace("http://www.w3.org/2002/07/owl#")
XSD = Namespace("http://www.w3.org/2001/XMLSchema#")
SKOS = Namespace("http://www.w3.org/2004/02/skos/core#")
SCHEMA = Namespace("http://schema.org/")
SCHEMA_HTTPS = Namespace("https://schema.org/")
FOAF = Namespace("http://xmlns.com/foaf/0.1/")
DCTERMS = Namespace("http://purl.org/dc/terms/")
DC = Namespace("http://purl.org/dc/elements/1.1/")
#: sparqlqa's own core vocabulary (sparqlqa/data/ontologies/sparqlqa.ttl)
SQA_BASE = "https://sparqlqa.dev/ns#"
SQA = Namespace(SQA_BASE)

RDF_TYPE = RDF.type

#: classes that describe the schema itself, never answer candidates
META_CLASSES: frozenset[str] = frozenset(
    {
        RDFS.Class.value,
        OWL.Class.value,
        RDF.Property.value,
        OWL.ObjectProperty.value,
        OWL.DatatypeProperty.value,
        OWL.AnnotationProperty.value,
        OWL.Ontology.value,
    }
)

PREFIXES: dict[str, str] = {
    "rdf": RDF.base,
    "rdfs": RDFS.base,
    "owl": OWL.base,
    "xsd": XSD.base,
    "skos": SKOS.base,
    "schema": SCHEMA.base,
    "foaf": FOAF.base,
    "dcterms": DCTERMS.base,
    "sqa": SQA_BASE,
}


#: well-known vocabularies beyond :data:`PREFIXES`: an unknown prefix's error suggests its IRI from here
WELL_KNOWN_PREFIXES: dict[str, str] = {
    **PREFIXES,
    "dc": DC.base,
    "dbo": "http://dbpedia.org/ontology/",
    "dbr": "http://dbpedia.org/resource/",
    "dbp": "http://dbpedia.org/property/",
    "wd": "http://www.wikidata.org/entity/",
    "wdt": "http://www.wikidata.org/prop/direct/",
    "p": "http://www.wikidata.org/prop/",
    "ps": "http://www.wikidata.org/prop/statement/",
    "pq": "http://www.wikidata.org/prop/qualifier/",
    "prov": "http://www.w3.org/ns/prov#",
    "dcat": "http://www.w3.org/ns/dcat#",
    "void": "http://rdfs.org/ns/void#",
    "sh": "http://www.w3.org/ns/shacl#",
    "geo": "http://www.opengis.net/ont/geosparql#",
    "wgs84": "http://www.w3.org/2003/01/geo/wgs84_pos#",
    "org": "http://www.w3.org/ns/org#",
    "vcard": "http://www.w3.org/2006/vcard/ns#",
    "time": "http://www.w3.org/2006/time#",
    "bibo": "http://purl.org/ontology/bibo/",
    "fabio": "http://purl.org/spar/fabio/",
    "qudt": "http://qudt.org/schema/qudt/",
}


def default_base_iri(kb_name: str) -> str:
    """The base IRI minted for a KB's nodes and relations when the input has none."""
    return f"https://sparqlqa.dev/kb/{kb_name}/"


def kb_prefixes(kb: Any) -> dict[str, str]:
    """The prefixes a user may leave undeclared in a query of ``kb``, later ones winning: the well-known
    ones (:data:`WELL_KNOWN_PREFIXES`), ``kb:``/``rel:``/``ent:``/``node:`` under the KB's base IRI, the
    prefixes the user's own source files declared (remembered at ingest), and the KB profile's own."""
    base = kb.manifest.base_iri
    extra = {"kb": base, "rel": f"{base}relation/", "ent": f"{base}entity/", "node": f"{base}node/"} if base else {}
    return {**WELL_KNOWN_PREFIXES, **extra, **kb.manifest.prefixes, **kb.profile.prefixes}


def prefixed_name(iri: str, prefixes: dict[str, str]) -> str | None:
    """``iri`` as ``prefix:local`` under the longest namespace of ``prefixes`` that leaves a plain local
    name (no ``/``, ``#`` or ``:``), else None.

    >>> prefixed_name("http://dbpedia.org/ontology/birthPlace", WELL_KNOWN_PREFIXES)
    'dbo:birthPlace'
    >>> prefixed_name("http://dbpedia.org/ontology/a/b", WELL_KNOWN_PREFIXES) is None
    True
    """
    best = max((ns for ns in prefixes.values() if ns and iri.startswith(ns)), key=len, default=None)
    local = iri[len(best):] if best is not None else ""
    if best is None or not re.fullmatch(r"[^\s/#:?<>\"]+", local):
        return None
    return f"{next(name for name, ns in prefixes.items() if ns == best)}:{local}"
