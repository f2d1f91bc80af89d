"""IRIs sparqlqa uses, as pyoxigraph terms (``str(term)`` is valid SPARQL).

>>> str(RDFS.label)
'<http://www.w3.org/2000/01/rdf-schema#label>'
>>> str(SQA.text)
'<https://sparqlqa.dev/ns#text>'
"""

from __future__ import annotations

__all__ = ["DC", "DCTERMS", "FOAF", "META_CLASSES", "OWL", "PREFIXES", "RDF", "RDFS", "RDF_LANG_STRING", "SCHEMA",
           "SCHEMA_HTTPS", "SKOS", "SQA", "SQA_BASE", "TEXT_DATATYPES", "XSD", "XSD_BOOLEAN", "XSD_INTEGER",
           "XSD_STRING", "Namespace", "default_base_iri", "kb_prefixes", "prefixed_name"]

import re
from typing import Any

from pyoxigraph import NamedNode

from sparqlqa.query.prefixes import WELL_KNOWN_PREFIXES


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


_NS = WELL_KNOWN_PREFIXES
RDF = Namespace(_NS["rdf"])
RDFS = Namespace(_NS["rdfs"])
OWL = Namespace(_NS["owl"])
XSD = Namespace(_NS["xsd"])
SKOS = Namespace(_NS["skos"])
SCHEMA = Namespace(_NS["schema"])
SCHEMA_HTTPS = Namespace("https://schema.org/")
FOAF = Namespace(_NS["foaf"])
DCTERMS = Namespace(_NS["dcterms"])
DC = Namespace(_NS["dc"])
#: sparqlqa's own core vocabulary (sparqlqa/data/ontologies/sparqlqa.ttl)
SQA_BASE = _NS["sqa"]
SQA = Namespace(SQA_BASE)

RDF_TYPE = RDF.type
#: datatype IRIs as text, each defined here once
XSD_STRING = XSD.string.value
XSD_INTEGER = XSD.integer.value
XSD_BOOLEAN = XSD.boolean.value
RDF_LANG_STRING = RDF.langString.value
#: the datatypes of text literals (a plain literal is an xsd:string, a tagged one an rdf:langString)
TEXT_DATATYPES: frozenset[str] = frozenset({XSD_STRING, RDF_LANG_STRING})

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

#: the prefixes sparqlqa declares by default: the first entries of :data:`WELL_KNOWN_PREFIXES`
#: (:mod:`sparqlqa.query.prefixes`: the one table of namespace IRIs, which error hints read)
PREFIXES: dict[str, str] = {name: _NS[name] for name in ("rdf", "rdfs", "owl", "xsd", "skos", "schema", "foaf",
                                                         "dcterms", "sqa")}


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
