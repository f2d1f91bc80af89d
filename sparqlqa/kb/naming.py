"""Names for nodes the data does not name.

A KB built from a user's RDF often leaves nodes without any label predicate
(``<http://dbpedia.org/resource/Alice_Smith> dbo:employer <.../ACME_Corp>``).
Such nodes still are answers and still are what questions name, so they get a
name from their IRI's last segment: percent-decoded, underscores as spaces.

>>> name_from_iri("http://dbpedia.org/resource/Alice_Smith")
'Alice Smith'
>>> name_from_iri("http://example.org/people#Jos%C3%A9_Mar%C3%ADa")
'José María'
>>> name_from_iri("http://www.wikidata.org/entity/Q42")
'Q42'
>>> name_from_iri("urn:isbn:0451450523")
'urn:isbn:0451450523'
"""

from __future__ import annotations

__all__ = ["SELF_NAMING_FORMATS", "display_name", "language_rank", "name_from_iri", "names_language", "self_named",
           "unnamed_nodes"]

import re
from typing import TYPE_CHECKING

from pyoxigraph import NamedNode

from sparqlqa.errors import SparqlqaError
from sparqlqa.kb.schema import local_name
from sparqlqa.kb.terms import is_blank_key, is_value_key, value_text
from sparqlqa.kb.vocab import META_CLASSES, RDFS
from sparqlqa.query.built_query import BuiltQuery

if TYPE_CHECKING:
    from sparqlqa.kb.knowledge_base import KnowledgeBase

#: how an unnamed intermediate node (a blank node) is shown
BLANK_NAME = "(unnamed node)"

#: ingest formats that give every node they write an ``rdfs:label`` (sparqlqa mints the nodes itself)
SELF_NAMING_FORMATS = frozenset({"triples", "stark"})


def name_from_iri(iri: str) -> str:
    """A readable name from an IRI's last segment (the whole IRI when it has no segment)."""
    name = re.sub(r"[_\s]+", " ", local_name(iri)).strip()
    return name or iri


def display_name(key: str) -> str:
    """How an answer key (:mod:`sparqlqa.kb.terms`) reads when nothing names it: a value as its lexical form,
    a blank node as :data:`BLANK_NAME`, an IRI by :func:`name_from_iri`.

    >>> display_name('"75001"'), display_name("_:b0"), display_name("http://x.org/New_York")
    ('75001', '(unnamed node)', 'New York')
    """
    if is_value_key(key):
        return value_text(key)
    return BLANK_NAME if is_blank_key(key) else name_from_iri(key)


def language_rank(language_tag: str | None, language: str | None, asked: str | None = None) -> int:
    """Which of a node's names to show first: the asker's language (``asked``, issue 37), the profile's
    ``language``, untagged, English, any other.

    >>> sorted(["de", None, "en"], key=lambda tag: language_rank(tag, None))
    [None, 'en', 'de']
    >>> sorted(["de", None, "en", "fr"], key=lambda tag: language_rank(tag, "en", asked="fr"))
    ['fr', 'en', None, 'de']
    """
    tag = (language_tag or "").lower().split("-")[0]
    if asked and tag == asked.lower().split("-")[0]:
        return -1
    if language and tag == language.lower().split("-")[0]:
        return 0
    return 1 if not tag else 2 if tag == "en" else 3


#: labels read to tell which language a KB names things in
NAMES_SAMPLE = 2000


def names_language(kb: KnowledgeBase, *, sample: bool = True) -> str | None:
    """The language ``kb`` names things in: its profile's, else (``sample``) the tag most of a sample of its
    labels carry (English wins a tie; ``None``: untagged).  Remembered by the opened KB.  ``sample=False``
    (an English question): no query, so English runs query exactly what they did before."""
    if kb.profile.language:
        return kb.profile.language.lower().split("-")[0]
    if not sample:
        return None

    def count() -> str | None:
        predicate = NamedNode(kb.schema.label_predicates[0]) if kb.schema.label_predicates else RDFS.label
        try:
            rows = kb.query(BuiltQuery.select(f"SELECT ?l WHERE {{ ?s {predicate} ?l }} LIMIT {NAMES_SAMPLE}")).rows
        except SparqlqaError:  # an endpoint that will not answer: say nothing of its language
            return None
        tags: dict[str, int] = {}
        for (label,) in rows:
            tag = (getattr(label, "language", None) or "").lower().split("-")[0]
            tags[tag] = tags.get(tag, 0) + 1
        best = max(tags, key=lambda tag: (tags[tag], tag == "en"), default="")
        return best or None

    return kb.remember("names language", count)


def self_named(kb: KnowledgeBase) -> bool:
    """Whether every source of ``kb`` came through a format that names each node it writes."""
    sources = kb.manifest.sources
    formats = {str(s.get("format", "")).split("/")[0] for s in sources}
    return bool(sources) and formats <= SELF_NAMING_FORMATS


def unnamed_nodes(kb: KnowledgeBase, named: set[str], *, typed_known: bool = False) -> list[str]:
    """IRIs at either end of an object relation of ``kb``, or typed, that are not in ``named`` nor schema
    terms, sorted.

    One scan over the relation edges (skipped for KBs whose ingest names every node); remote
    endpoints are never scanned (they are looked up by name on the engine).  ``typed_known``: every
    typed node is in ``named`` already (the type triples are not scanned again).
    """
    if self_named(kb) or not kb.can_scan():
        return []
    schema = kb.schema
    relations = [r.iri for r in schema.relations if r.kind == "object"]
    type_p, meta = NamedNode(schema.type_predicate), ", ".join(str(NamedNode(c)) for c in sorted(META_CLASSES))
    branches = [] if typed_known else [f"{{ ?n {type_p} ?t FILTER(?t NOT IN ({meta})) }}"]
    if relations:
        values = " ".join(str(NamedNode(p)) for p in relations)
        branches.append(f"{{ VALUES ?p {{ {values} }} {{ ?n ?p ?o }} UNION {{ ?o ?p ?n }} }}")
    if not branches:
        return []
    query = f"SELECT DISTINCT ?n WHERE {{ {' UNION '.join(branches)} FILTER(isIRI(?n)) }}"
    skip = named | schema.type_iris | set(relations) | META_CLASSES
    found = {row[0].value for row in kb.query(BuiltQuery.select(query)).rows if isinstance(row[0], NamedNode)}
    return sorted(found - skip)
