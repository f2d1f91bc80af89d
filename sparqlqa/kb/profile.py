"""How a store names things: label, alias, text and type predicates.

Local KBs built by ``sparqlqa ingest`` use :data:`DEFAULT_PROFILE`.  Remote
endpoints (Wikidata, Freebase on Virtuoso) bring their own profile.

>>> DEFAULT_PROFILE.label_predicates[0]
'http://www.w3.org/2000/01/rdf-schema#label'
"""

from __future__ import annotations

__all__ = ["ALIAS_PREDICATES", "DEFAULT_PROFILE", "NAME_PREDICATES", "TEXT_PREDICATES", "Profile"]

from dataclasses import asdict, dataclass, field
from typing import Any

from sparqlqa.kb.vocab import DC, DCTERMS, FOAF, RDF, RDFS, SCHEMA, SCHEMA_HTTPS, SKOS, SQA

#: predicates that name a node in common vocabularies, most authoritative first; a KB keeps the ones
#: its data uses (``Schema.label_predicates``), so a schema.org or FOAF dump is linkable as it comes
NAME_PREDICATES: tuple[str, ...] = (
    RDFS.label.value, SKOS.prefLabel.value, SCHEMA.name.value, SCHEMA_HTTPS.name.value, FOAF.name.value,
    DCTERMS.title.value, DC.title.value,
)
#: other names of a node
ALIAS_PREDICATES: tuple[str, ...] = (
    SKOS.altLabel.value, SCHEMA.alternateName.value, SCHEMA_HTTPS.alternateName.value,
)
#: a node's describing text
TEXT_PREDICATES: tuple[str, ...] = (
    SQA.text.value, RDFS.comment.value, SCHEMA.description.value, SCHEMA_HTTPS.description.value,
    DCTERMS.description.value, DCTERMS.abstract.value, DC.description.value, SKOS.definition.value,
)

TUPLE_FIELDS = ("label_predicates", "alias_predicates", "text_predicates", "exclude_predicates",
                "exclude_types", "relation_prefixes", "allow_service", "name_predicates")


@dataclass(frozen=True)
class Profile:
    """Predicates (as IRI strings) that carry names, aliases, text and types."""

    name: str = "default"
    label_predicates: tuple[str, ...] = NAME_PREDICATES
    alias_predicates: tuple[str, ...] = ALIAS_PREDICATES
    text_predicates: tuple[str, ...] = TEXT_PREDICATES
    type_predicate: str = RDF.type.value
    language: str | None = None
    prefixes: dict[str, str] = field(default_factory=dict)
    name_search: str = "exact"
    # appended for remote stores (sparqlqa.remote.profiles): all optional
    description: str = ""
    relations: dict[str, str] = field(default_factory=dict)  # relation IRI -> label, declared by the profile
    types: dict[str, str] = field(default_factory=dict)  # node type IRI -> label, declared by the profile
    exclude_predicates: tuple[str, ...] = ()  # bookkeeping predicates that are never relations
    exclude_types: tuple[str, ...] = ()  # meta types that are never node types (Freebase type.type)
    relation_entity_predicate: str | None = None  # property entity -> its relation (wikibase:directClaim)
    search_limit: int = 50  # rows per engine name search
    relation_prefixes: tuple[str, ...] = ()  # when set, only predicates under these IRIs are relations
    allow_service: tuple[str, ...] = ()  # hosts a query's SERVICE may call from the CLI (sparqlqa.query.service_guard)
    endpoint_timeout: float | None = None  # [endpoint] timeout: seconds per endpoint query (sparqlqa.remote)
    #: columns that name nodes in the data (``ingest --name-predicate``), after the label predicates; when
    #: empty, ingest looks for them (:mod:`sparqlqa.kb.data_names`)
    name_predicates: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in TUPLE_FIELDS:
            data[key] = list(data[key])
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Profile:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        for key in TUPLE_FIELDS:
            if key in known:
                known[key] = tuple(known[key])
        return cls(**known)


DEFAULT_PROFILE = Profile()
