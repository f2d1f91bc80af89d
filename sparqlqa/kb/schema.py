"""A KB's schema: node types, relations (with domain→range pairs), name predicates.

Computed once at ingest with a handful of aggregate queries and kept in the
manifest, so nothing scans the store at question time.

>>> local_name("http://example.org/rel/directed_by")
'directed_by'
>>> humanize("directedBy")
'directed by'
"""

from __future__ import annotations

__all__ = ["INVERSE_NAME", "SCHEMA_PREDICATES", "RelationInfo", "Schema", "TypeInfo", "annotate_schema",
           "cached_local_name", "compute_schema", "described_iris", "fold_reversed_facts", "folded_inverses",
           "humanize", "local_name", "name_phrase", "name_words", "relation_names", "reversed_relation_labels"]

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from typing import Any

from pyoxigraph import Literal, NamedNode, Triple

from sparqlqa.english import NAME_STOPWORDS
from sparqlqa.kb.profile import Profile
from sparqlqa.kb.store import Store, Term
from sparqlqa.kb.vocab import META_CLASSES, OWL, RDF, RDFS, SKOS
from sparqlqa.query.built_query import BuiltQuery

#: predicates that describe the schema itself, never listed as relations
SCHEMA_PREDICATES: frozenset[str] = frozenset(
    {
        RDFS.domain.value, RDFS.range.value, RDFS.subClassOf.value, RDFS.subPropertyOf.value,
        OWL.inverseOf.value, RDFS.isDefinedBy.value, RDFS.seeAlso.value,
        OWL.equivalentClass.value, OWL.equivalentProperty.value, OWL.versionInfo.value,
        OWL.sameAs.value, OWL.differentFrom.value,  # identity of nodes (kb/identity.py), not a relation
    }
)


def local_name(iri: str) -> str:
    """The last segment of an IRI (after ``#`` or ``/``), percent-decoded."""
    from urllib.parse import unquote

    tail = re.split(r"[#/]", iri.rstrip("/#"))[-1]
    return unquote(tail) or iri


def humanize(name: str) -> str:
    """``directed_by`` / ``directedBy`` / ``directed-by`` → ``directed by``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return re.sub(r"[_\-.]+", " ", spaced).strip().lower() or name


@dataclass
class TypeInfo:
    iri: str
    label: str
    count: int
    comment: str | None = None
    #: other IRIs of the same type (another vocabulary's class with the same label: ``foaf:Person``
    #: beside ``dbo:Person``); a node of any of them is of this type
    also: list[str] = field(default_factory=list)
    #: the member KBs that hold it, in a KB group (:mod:`sparqlqa.kb.group`); empty for a single KB
    kbs: list[str] = field(default_factory=list)
    #: in a KB group, the SPARQL endpoint of the remote member that holds it (queried in a ``SERVICE`` block)
    service: str | None = None

    @property
    def iris(self) -> list[str]:
        return [self.iri, *self.also]


@dataclass
class RelationInfo:
    iri: str
    label: str
    count: int
    kind: str = "object"  # "object" (IRI values) or "literal"
    #: (subject type, object type, edges), most frequent first; ``None``: untyped (a value relation's range)
    pairs: list[tuple[str | None, str | None, int]] = field(default_factory=list)
    comment: str | None = None
    aliases: list[str] = field(default_factory=list)
    domain: str | None = None
    range: str | None = None
    #: the relation this one reverses (``owl:inverseOf``, either direction), when the KB says so
    inverse: str | None = None
    #: how many of its objects are blank nodes (an unnamed place, an address record)
    blank: int = 0
    #: the member KBs that hold it, in a KB group (:mod:`sparqlqa.kb.group`); empty for a single KB
    kbs: list[str] = field(default_factory=list)
    #: in a KB group, the SPARQL endpoint of the remote member that holds it (queried in a ``SERVICE`` block)
    service: str | None = None


@dataclass
class Schema:
    types: list[TypeInfo] = field(default_factory=list)
    relations: list[RelationInfo] = field(default_factory=list)
    label_predicates: list[str] = field(default_factory=list)
    alias_predicates: list[str] = field(default_factory=list)
    text_predicates: list[str] = field(default_factory=list)
    type_predicate: str = RDF.type.value
    triple_count: int = 0
    node_count: int = 0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for entry in [*data["types"], *data["relations"]]:  # member tags only in a KB group's schema
            if not entry.get("kbs"):
                entry.pop("kbs", None)
            if entry.get("service") is None:
                entry.pop("service", None)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Schema:
        types = [TypeInfo(**t) for t in data.get("types", [])]
        relations = []
        for rel in data.get("relations", []):
            rel = dict(rel)
            rel["pairs"] = [tuple(p) for p in rel.get("pairs", [])]
            relations.append(RelationInfo(**rel))
        rest = {k: v for k, v in data.items() if k not in ("types", "relations")}
        return _one_type_per_label(cls(types=types, relations=relations, **rest))

    def relation(self, name: str) -> RelationInfo | None:
        """Find a relation by IRI, local name, label or shown name (:func:`relation_names`), case-insensitively."""
        wanted = name.strip().lower()
        for rel in self.relations:
            if wanted in (rel.iri.lower(), local_name(rel.iri).lower(), rel.label.lower()):
                return rel
        if " " not in wanted:  # a shown name other than the label is "<type> <label>"
            return None
        shown = relation_names(self)
        return next((rel for rel in self.relations if shown[rel.iri].lower() == wanted), None)

    def domain_of(self, rel: RelationInfo) -> str | None:
        """The relation's most frequent subject type in the data, else its declared ``rdfs:domain``."""
        return next((d for d, _, _ in rel.pairs if d), rel.domain)

    def type(self, name: str) -> TypeInfo | None:
        """Find a node type by IRI, local name or label (case-insensitive); any of a merged type's IRIs."""
        wanted = name.strip().lower()
        for info in self.types:
            if wanted == info.label.lower() or any(wanted in (i.lower(), local_name(i).lower()) for i in info.iris):
                return info
        return None

    @property
    def type_iris(self) -> set[str]:
        """Every IRI of every node type (a merged type's other IRIs too)."""
        return {iri for info in self.types for iri in info.iris}

    def type_alternatives(self, iri: str) -> list[str]:
        """The IRIs a node of type ``iri`` may carry: the merged type's IRIs, or just ``iri``."""
        found = next((info for info in self.types if iri in info.iris), None)
        return found.iris if found is not None else [iri]

    @property
    def object_relations(self) -> list[RelationInfo]:
        return [r for r in self.relations if r.kind == "object"]

    def type_label(self, iri: str | None) -> str:
        if iri is None:
            return "?"
        found = self.type(iri)
        return found.label if found else humanize(local_name(iri))


def relation_names(schema: Schema) -> dict[str, str]:
    """``{relation IRI: the name shown}`` for people and prompts: its label, or its subjects' type before
    it where another relation has the same label (``singer#name`` and ``stadium#name`` → "singer name",
    "stadium name"); a relation whose subjects have no type keeps its label.

    >>> def values(table, column):
    ...     return RelationInfo(f"http://x/{table}#{column}", column, 6, "literal", [(f"http://x/{table}", None, 6)])
    >>> s = Schema(types=[TypeInfo("http://x/singer", "singer", 6), TypeInfo("http://x/stadium", "stadium", 9)],
    ...            relations=[values("singer", "name"), values("stadium", "name"), values("singer", "age")])
    >>> list(relation_names(s).values())
    ['singer name', 'stadium name', 'age']
    """
    shared = Counter(rel.label.strip().lower() for rel in schema.relations)
    names: dict[str, str] = {}
    for rel in schema.relations:
        domain = schema.domain_of(rel) if shared[rel.label.strip().lower()] > 1 else None
        names[rel.iri] = f"{schema.type_label(domain)} {rel.label}" if domain else rel.label
    return names


def _count(store: Store, sparql: str) -> int:
    rows = store.select(BuiltQuery.select(sparql)).rows
    term = rows[0][0] if rows and rows[0] else None
    return int(term.value) if isinstance(term, Literal) else 0


def _value(term: Term | None) -> str | None:
    """The lexical value of a result term (``None`` when unbound)."""
    if term is None:
        return None
    return str(term) if isinstance(term, Triple) else term.value


def _annotations(store: Store, iris: Iterable[str], predicate: str) -> dict[str, list[str]]:
    """``{iri: [literal values of predicate]}`` for the given IRIs, in one query; untagged and English
    values first (issue 37: the schema reads a relation by its English name when the data has several)."""
    iris = list(iris)
    found: dict[str, list[str]] = {}
    for start in range(0, len(iris), 500):
        values = " ".join(str(NamedNode(i)) for i in iris[start : start + 500])
        query = f"SELECT ?x ?v WHERE {{ VALUES ?x {{ {values} }} ?x {NamedNode(predicate)} ?v }}"
        rows = sorted(store.select(BuiltQuery.select(query)).rows, key=lambda row: _language_order(row[1]))
        for x, v in rows:
            key, value = _value(x), _value(v)
            if key is not None and value is not None:
                found.setdefault(key, []).append(value)
    return found


def _language_order(term: object) -> int:
    """Untagged, English, any other language (as :func:`sparqlqa.kb.naming.language_rank` without a profile)."""
    tag = (getattr(term, "language", None) or "").lower().split("-")[0]
    return 0 if not tag else 1 if tag == "en" else 2


#: One row per predicate: ``(iri, triples, literal objects, objects that are not IRIs)``.
PredicateRow = tuple[str, int, int, int]
Pairs = dict[str, list[tuple[str | None, str | None, int]]]

# Performance notes (Oxigraph 0.5; see benchmarks/RESULTS.md, "Ingest"): scans, joins and GROUP BY
# run on internal term ids and are cheap, but every expression (isLiteral, isIRI, IF, ...) that
# touches a term decodes it, which costs ~5 us per row.  So expressions run on pre-aggregated
# rows (one per distinct (predicate, object) or per subject), never on every triple, and the
# type joins are written as sub-SELECTs so Oxigraph hash-joins them instead of probing the
# index once per edge.  The results are exactly those of the per-triple formulation.


def _predicate_counts(store: Store) -> list[PredicateRow]:
    """Triples per predicate, and how many of their objects are literals / not IRIs (exact)."""
    query = (
        "SELECT ?p (SUM(?c) AS ?n) (SUM(IF(isLiteral(?o), ?c, 0)) AS ?lit) "
        "(SUM(IF(isIRI(?o), 0, ?c)) AS ?other) "
        "WHERE { { SELECT ?p ?o (COUNT(*) AS ?c) WHERE { ?s ?p ?o } GROUP BY ?p ?o } } GROUP BY ?p"
    )
    return [
        (p.value, int(n.value), int(lit.value), int(other.value))
        for p, n, lit, other in store.select(BuiltQuery.select(query)).rows
        if isinstance(p, NamedNode) and isinstance(n, Literal) and isinstance(lit, Literal)
        and isinstance(other, Literal)
    ]


def _type_counts(store: Store, type_predicate: str) -> list[tuple[str, int]]:
    query = (
        f"SELECT ?t (COUNT(DISTINCT ?s) AS ?n) WHERE {{ ?s {NamedNode(type_predicate)} ?t }} GROUP BY ?t"
    )
    rows = store.select(BuiltQuery.select(query)).rows
    return [(t.value, int(n.value)) for t, n in rows if isinstance(t, NamedNode) and isinstance(n, Literal)
            and t.value not in META_CLASSES]


def _pair_query(type_predicate: str, edges: str, group: str, *, object_types: bool = True) -> str:
    """Count ``edges`` (binding ?s ?o) by the types of both ends; untyped ends group as unbound
    (``object_types=False``: values, whose ?to stays unbound, spare the join on the objects)."""
    type_p = NamedNode(type_predicate)
    objects = f"OPTIONAL {{ SELECT ?o ?to WHERE {{ ?o {type_p} ?to }} }} " if object_types else ""
    return (
        f"SELECT {group} ?ts ?to (COUNT(*) AS ?n) WHERE {{ {edges} "
        f"OPTIONAL {{ SELECT ?s ?ts WHERE {{ ?s {type_p} ?ts }} }} {objects}}} GROUP BY {group} ?ts ?to"
    )


def _pair_queries(type_predicate: str, rows: Iterable[PredicateRow]) -> Iterable[tuple[str | None, str]]:
    """``(predicate or None, query)``: one query for all predicates whose objects are all nodes (IRIs or
    blank nodes) or all values (literals: their pairs are ``(subject type, None)``, the domain read from the
    data), one per predicate with mixed objects (those filter out literals per edge)."""
    plain: list[str] = []
    literal: list[str] = []
    mixed: list[str] = []
    for p, n, lit, _ in rows:
        if p != type_predicate:
            (plain if lit == 0 else literal if lit == n else mixed).append(p)
    for group, object_types in ((plain, True), (literal, False)):
        for start in range(0, len(group), 500):
            values = " ".join(str(NamedNode(p)) for p in group[start : start + 500])
            yield None, _pair_query(type_predicate, f"VALUES ?p {{ {values} }} ?s ?p ?o .", "?p",
                                    object_types=object_types)
    for p in mixed:
        yield p, _pair_query(type_predicate, f"?s {NamedNode(p)} ?o . FILTER(!isLiteral(?o))", "")


def _relation_pairs(store: Store, type_predicate: str, rows: Iterable[PredicateRow]) -> Pairs:
    """Domain→range type pairs with edge counts (exact) for the predicates in ``rows`` (range ``None``: an
    untyped node, or a value)."""
    pairs: Pairs = {}
    for predicate, query in _pair_queries(type_predicate, rows):
        for row in store.select(BuiltQuery.select(query)).rows:
            p, (ts, to, n) = (_value(row[0]), row[1:]) if predicate is None else (predicate, row)
            domain, range_ = _value(ts), _value(to)
            if p is None or not isinstance(n, Literal) or domain in META_CLASSES or range_ in META_CLASSES:
                continue
            pairs.setdefault(p, []).append((domain, range_, int(n.value)))
    for found in pairs.values():
        found.sort(key=lambda row: (-row[2], row[0] or "", row[1] or ""))
    return pairs


def _inverse_annotations(store: Store, relations: list[str]) -> dict[str, str]:
    """``owl:inverseOf`` between ``relations``, read in both directions."""
    stated = _annotations(store, relations, OWL.inverseOf.value)
    known = set(relations)
    found: dict[str, str] = {}
    for iri, others in stated.items():
        for other in others:
            if other in known and other != iri:
                found.setdefault(iri, other)
                found.setdefault(other, iri)
    return found


def _first(values: dict[str, list[str]], iri: str) -> str | None:
    found = values.get(iri)
    return found[0] if found else None


#: distinct non-literal subjects; the filter runs once per subject, after grouping (see notes above)
NODE_COUNT_QUERY = (
    "SELECT (COUNT(*) AS ?n) WHERE { { SELECT ?s (COUNT(*) AS ?c) WHERE { ?s ?p ?o } GROUP BY ?s } "
    "FILTER(!isLiteral(?s)) }"
)


def _namespace(iri: str) -> str:
    return iri[: len(iri) - len(re.split(r"[#/]", iri)[-1])]


def _merge_types(types: list[TypeInfo]) -> list[TypeInfo]:
    """One type per label (case-insensitive): ``dbo:Person`` and ``foaf:Person`` are one "person" whose
    ``iri`` is the one in the namespace most types share (then the most frequent), the others ``also``;
    sorted most frequent first.

    >>> merged = _merge_types([TypeInfo("http://d/Film", "film", 9), TypeInfo("http://f/Person", "person", 5),
    ...                       TypeInfo("http://d/Person", "person", 5)])
    >>> [(t.iri, t.also, t.count) for t in merged]
    [('http://d/Film', [], 9), ('http://d/Person', ['http://f/Person'], 5)]
    """
    shared: dict[str, int] = {}
    for info in types:
        shared[_namespace(info.iri)] = shared.get(_namespace(info.iri), 0) + 1
    groups: dict[str, list[TypeInfo]] = {}
    for info in sorted(types, key=lambda t: (-shared[_namespace(t.iri)], -t.count, t.iri)):
        groups.setdefault(info.label.strip().lower(), []).append(info)
    merged = []
    for first, *rest in groups.values():
        comment = first.comment or next((t.comment for t in rest if t.comment), None)
        merged.append(replace(first, count=max(t.count for t in [first, *rest]), comment=comment,
                              also=[i for t in [first, *rest] for i in t.iris if i != first.iri],
                              kbs=list(dict.fromkeys(k for t in [first, *rest] for k in t.kbs))))
    merged.sort(key=lambda t: (-t.count, t.iri))
    return merged


def _merged_pairs(pairs: list[tuple[str | None, str | None, int]], canonical: dict[str, str],
                  ) -> list[tuple[str | None, str | None, int]]:
    """``pairs`` with merged types' IRIs replaced by their type's, one row per pair (an edge counted
    under each of its end's IRIs counts once: the largest count)."""
    found: dict[tuple[str | None, str | None], int] = {}
    for domain, range_, n in pairs:
        key = (canonical.get(domain or "", domain), canonical.get(range_ or "", range_))
        found[key] = max(found.get(key, 0), n)
    rows = [(d, r, n) for (d, r), n in found.items()]
    rows.sort(key=lambda row: (-row[2], row[0] or "", row[1] or ""))
    return rows


def _schema_subjects(store: Store, type_predicate: str, terms: list[str]) -> int:
    """How many subjects describe the schema, not data: ``terms`` (relations, types) and anything typed as
    a class, property or ontology (sparqlqa's own vocabulary included): not counted as nodes."""
    meta = " ".join(str(NamedNode(c)) for c in sorted(META_CLASSES))
    branches = [f"{{ VALUES ?c {{ {meta} }} ?s {NamedNode(type_predicate)} ?c }}"]
    if terms:
        values = " ".join(str(NamedNode(t)) for t in dict.fromkeys(terms))
        branches.append(f"{{ VALUES ?s {{ {values} }} FILTER EXISTS {{ ?s ?p ?o }} }}")
    return _count(store, f"SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE {{ {' UNION '.join(branches)} }}")


def compute_schema(store: Store, profile: Profile) -> Schema:
    """Aggregate the schema of ``store`` (a full scan: run at ingest, not per question)."""
    name_predicates = set(profile.label_predicates) | set(profile.alias_predicates) | set(profile.text_predicates)
    predicate_rows = _predicate_counts(store)
    relation_rows = [row for row in predicate_rows if row[0] not in name_predicates
                     and row[0] != profile.type_predicate and row[0] not in SCHEMA_PREDICATES]
    type_rows = _type_counts(store, profile.type_predicate)
    pairs = _relation_pairs(store, profile.type_predicate, relation_rows)
    described = [row[0] for row in predicate_rows] + [t for t, _ in type_rows]
    labels = _annotations(store, described, RDFS.label.value)
    comments = _annotations(store, described, RDFS.comment.value)
    aliases = _annotations(store, described, SKOS.altLabel.value)
    domains = _annotations(store, described, RDFS.domain.value)
    ranges = _annotations(store, described, RDFS.range.value)
    inverses = _inverse_annotations(store, [row[0] for row in relation_rows])
    relations = [
        RelationInfo(
            iri=p, label=_first(labels, p) or humanize(local_name(p)), count=n,
            kind="literal" if lit * 2 > n else "object", pairs=pairs.get(p, []),
            comment=_first(comments, p), aliases=aliases.get(p, []),
            domain=_first(domains, p), range=_first(ranges, p), inverse=inverses.get(p), blank=other - lit,
        )
        for p, n, lit, other in relation_rows
    ]
    relations.sort(key=lambda r: (-r.count, r.iri))
    types = [TypeInfo(iri=t, label=_first(labels, t) or humanize(local_name(t)), count=n,
                      comment=_first(comments, t)) for t, n in type_rows]
    present = {row[0] for row in predicate_rows}
    return _one_type_per_label(Schema(
        types=types, relations=relations,
        label_predicates=[p for p in profile.label_predicates if p in present],
        alias_predicates=[p for p in profile.alias_predicates if p in present],
        text_predicates=[p for p in profile.text_predicates if p in present],
        type_predicate=profile.type_predicate,
        triple_count=sum(row[1] for row in predicate_rows),
        node_count=_count(store, NODE_COUNT_QUERY) - _schema_subjects(store, profile.type_predicate,
                                                                      [row[0] for row in predicate_rows]
                                                                      + [t for t, _ in type_rows]),
    ))


def _one_type_per_label(schema: Schema) -> Schema:
    """``schema`` with one type per label (:func:`_merge_types`), its relations' type pairs merged alike, and
    no identity or schema predicate (``owl:sameAs``) among the relations; also applied to schemas read
    back from KBs ingested before types were merged."""
    types = _merge_types(schema.types)
    canonical = {other: info.iri for info in types for other in info.also}
    relations = [replace(rel, pairs=_merged_pairs(rel.pairs, canonical)) if canonical else rel
                 for rel in schema.relations if rel.iri not in SCHEMA_PREDICATES]
    return replace(schema, types=types, relations=relations)


#: what an ontology file may say about a relation or node type (see :func:`annotate_schema`)
ANNOTATION_PREDICATES = (RDFS.label.value, SKOS.altLabel.value, RDFS.comment.value, RDFS.domain.value,
                         RDFS.range.value)


def annotate_schema(schema: Schema, ontology: Store) -> tuple[Schema, list[str]]:
    """``schema`` with what ``ontology`` says of its relations and node types: its ``rdfs:label``,
    ``rdfs:comment``, ``rdfs:domain`` and ``rdfs:range`` replace the schema's, its ``skos:altLabel``
    values are added.  Also returns the IRIs the ontology describes that are neither (typos, mostly).

    >>> from sparqlqa.kb.store import OxigraphStore
    >>> ontology = OxigraphStore.in_memory()
    >>> ontology.oxstore.load(b'<http://ex.org/has_tags> <http://www.w3.org/2004/02/skos/core#altLabel> "keywords" .',
    ...                       format=__import__("pyoxigraph").RdfFormat.N_TRIPLES)
    >>> schema = Schema(relations=[RelationInfo("http://ex.org/has_tags", "has tags", 3)])
    >>> annotated, unknown = annotate_schema(schema, ontology)
    >>> annotated.relations[0].aliases, unknown
    (['keywords'], [])
    """
    found = {p: _annotations(ontology, [*[r.iri for r in schema.relations], *[t.iri for t in schema.types]], p)
             for p in ANNOTATION_PREDICATES}
    labels, aliases, comments, domains, ranges = (found[p] for p in ANNOTATION_PREDICATES)
    relations = [
        replace(rel, label=_first(labels, rel.iri) or rel.label,
                aliases=list(dict.fromkeys([*rel.aliases, *aliases.get(rel.iri, [])])),
                comment=_first(comments, rel.iri) or rel.comment,
                domain=_first(domains, rel.iri) or rel.domain, range=_first(ranges, rel.iri) or rel.range)
        for rel in schema.relations
    ]
    types = [replace(t, label=_first(labels, t.iri) or t.label, comment=_first(comments, t.iri) or t.comment)
             for t in schema.types]
    known = {r.iri for r in relations} | {t.iri for t in types}
    unknown = [iri for iri in described_iris(ontology) if iri not in known]
    return replace(schema, relations=relations, types=types), unknown


def described_iris(ontology: Store) -> list[str]:
    """IRIs an ontology annotates, other than the ontology itself (``a owl:Ontology``)."""
    predicates = " ".join(str(NamedNode(p)) for p in ANNOTATION_PREDICATES)
    query = (f"SELECT DISTINCT ?s WHERE {{ VALUES ?p {{ {predicates} }} ?s ?p ?o . FILTER(isIRI(?s)) "
             f"FILTER NOT EXISTS {{ ?s {NamedNode(RDF.type.value)} {NamedNode(OWL.Ontology.value)} }} }} ORDER BY ?s")
    return [v for (s,) in ontology.select(BuiltQuery.select(query)).rows if (v := _value(s)) is not None]


# --- relation names as words, and relations stored both ways -------------------------------------

INVERSE_NAME = re.compile(r"(.+?)[\s_\-]*inverse", re.IGNORECASE)
cached_local_name = lru_cache(maxsize=1 << 16)(local_name)


@lru_cache(maxsize=1 << 16)
def name_phrase(text: str) -> str:
    """Lower-case words of ``text`` (``plays_for``, ``playsFor`` → ``plays for``)."""
    return " ".join(re.findall(r"[a-z0-9]+", humanize(text).lower()))


@lru_cache(maxsize=1 << 16)
def name_words(text: str) -> frozenset[str]:
    """Content words of ``text``, cut to 5 letters (a poor man's stemmer: ``direct`` ~ ``directed``)."""
    return frozenset(word[:5] for word in name_phrase(text).split() if word not in NAME_STOPWORDS)


def _reversed_of(rel: RelationInfo, by_name: dict[str, RelationInfo],
                 by_iri: dict[str, RelationInfo]) -> tuple[RelationInfo | None, bool]:
    """(the relation ``rel`` reverses, whether by its name ``X_inverse``) or (None, False)."""
    for name in (cached_local_name(rel.iri), rel.label):
        found = INVERSE_NAME.fullmatch(name.strip())
        base = by_name.get(name_phrase(found.group(1))) if found else None
        if base is not None and base.iri != rel.iri:
            return base, True
    other = by_iri.get(rel.inverse) if rel.inverse else None
    return other, False


def folded_inverses(schema: Schema) -> dict[str, str]:
    """``{IRI of a relation left out of the prompt: IRI of the relation it reverses}``: ``X_inverse``
    beside ``X`` (by name), and ``owl:inverseOf`` pairs (the more frequent one stays).

    >>> s = Schema(relations=[RelationInfo("http://x/r/plays_for", "plays for", 5),
    ...                       RelationInfo("http://x/r/plays_for_inverse", "plays for inverse", 5)])
    >>> folded_inverses(s)
    {'http://x/r/plays_for_inverse': 'http://x/r/plays_for'}
    """
    by_name: dict[str, RelationInfo] = {}
    for rel in schema.relations:
        by_name.setdefault(name_phrase(cached_local_name(rel.iri)), rel)
        by_name.setdefault(name_phrase(rel.label), rel)
    by_iri = {rel.iri: rel for rel in schema.relations}
    folded: dict[str, str] = {}
    taken: set[str] = set()
    for rel in schema.relations:
        partner, by_its_name = _reversed_of(rel, by_name, by_iri)
        if partner is None or rel.iri in taken or partner.iri in taken:
            continue
        if by_its_name or (rel.count, partner.iri) < (partner.count, rel.iri):
            folded[rel.iri] = partner.iri
        else:
            folded[partner.iri] = rel.iri
        taken |= {rel.iri, partner.iri}
    return folded


def reversed_relation_labels(schema: Schema) -> dict[str, str]:
    """``{label of a folded relation: label of the relation it reverses}`` (see :func:`folded_inverses`)."""
    by_iri = {rel.iri: rel for rel in schema.relations}
    return {by_iri[dropped].label: by_iri[kept].label for dropped, kept in folded_inverses(schema).items()}


def fold_reversed_facts(outgoing: dict[str, list[str]], incoming: dict[str, list[str]],
                        reversed_labels: dict[str, str]) -> None:
    """State each fact of a node once: ``Italy —plays for country inverse→ X`` (incoming) becomes
    ``X —plays for country→ Italy`` (outgoing), merged with what is already there (in place).

    >>> out, inc = {"plays for": ["Italy"]}, {"plays for inverse": ["Italy", "Spain"]}
    >>> fold_reversed_facts(out, inc, {"plays for inverse": "plays for"})
    >>> out, inc
    ({'plays for': ['Italy', 'Spain']}, {})
    """
    for folded, kept in reversed_labels.items():
        for source, target in ((incoming, outgoing), (outgoing, incoming)):
            names = source.pop(folded, None)
            if names:
                bucket = target.setdefault(kept, [])
                bucket.extend(name for name in names if name not in bucket)
