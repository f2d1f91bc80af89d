"""Well-known vocabulary prefixes: the one table of their namespace IRIs.

A query's syntax error suggests a declaration from here (:mod:`sparqlqa.query.query_errors`), and
:mod:`sparqlqa.kb.vocab` mints its namespaces (``RDF``, ``RDFS``, ``XSD`` ...) from the same entries.

>>> WELL_KNOWN_PREFIXES["foaf"]
'http://xmlns.com/foaf/0.1/'
"""

from __future__ import annotations

__all__ = ["WELL_KNOWN_PREFIXES"]

#: prefix → namespace IRI; the first nine are sparqlqa's own defaults (:data:`sparqlqa.kb.vocab.PREFIXES`)
WELL_KNOWN_PREFIXES: dict[str, str] = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "schema": "http://schema.org/",
    "foaf": "http://xmlns.com/foaf/0.1/",
    "dcterms": "http://purl.org/dc/terms/",
    "sqa": "https://sparqlqa.dev/ns#",
    "dc": "http://purl.org/dc/elements/1.1/",
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
