"""A KB schema from bounded, sampled queries: never a full-store aggregate.

On a store with a billion triples ``GROUP BY ?p`` over everything is not an
option.  :func:`sample_schema` instead runs a handful of queries that each carry
a ``LIMIT`` (or look up a fixed list of IRIs with ``VALUES``):

1. the first ``edge_sample`` triples of the store, with the types of both ends;
2. ``type_sample`` type assertions: which node types are common;
3. for the most common types (and every type the profile declares), the edges of
   ``subjects_per_type`` of their members;
4. ``per_relation`` edges of every relation the profile declares;
5. labels, aliases and comments of the relations and types found (``VALUES``).

Counts are therefore sample counts, not store totals.  The result is written to
the KB manifest once (``add_remote_kb``), so questions never re-sample.

:func:`apply_profile` is the profile-specific part (drop bookkeeping predicates and
meta types, label relations the way the store names them); it also fits a schema
computed by a full scan of a local dump, so local and remote copies agree.

>>> from sparqlqa.kb.store import OxigraphStore
>>> from sparqlqa.remote.profiles import load_profile
>>> schema = sample_schema(OxigraphStore.in_memory(), load_profile("generic"))
>>> schema.relations, schema.types
([], [])
"""

from __future__ import annotations

__all__ = ["SampleOptions", "apply_profile", "sample_schema"]

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from pyoxigraph import Literal, NamedNode

from sparqlqa.kb.profile import Profile
from sparqlqa.kb.schema import SCHEMA_PREDICATES, RelationInfo, Schema, TypeInfo, humanize, local_name
from sparqlqa.kb.store import Store, Term
from sparqlqa.kb.vocab import META_CLASSES
from sparqlqa.query.built_query import BuiltQuery

#: one sampled edge: (predicate, object is a literal, subject type, object type)
Edge = tuple[str, bool, str | None, str | None]
_CHUNK = 100
_T = TypeVar("_T")


@dataclass(frozen=True)
class SampleOptions:
    """How much to sample (every number bounds one query's rows)."""

    edge_sample: int = 2000
    type_sample: int = 2000
    types: int = 15
    subjects_per_type: int = 20
    rows_per_type: int = 2000
    per_relation: int = 50
    max_relations: int = 400
    max_types: int = 400


def _iri(term: Term | None) -> str | None:
    return term.value if isinstance(term, NamedNode) else None


def _not_relation(profile: Profile) -> set[str]:
    """Predicates that are never relations under ``profile``."""
    return {*profile.label_predicates, *profile.alias_predicates, *profile.text_predicates,
            profile.type_predicate, *profile.exclude_predicates, *SCHEMA_PREDICATES}


def _is_relation(iri: str, profile: Profile) -> bool:
    if iri in _not_relation(profile):
        return False
    prefixes = tuple(profile.relation_prefixes)
    return not prefixes or iri.startswith(prefixes)


def _is_type(iri: str, profile: Profile) -> bool:
    return iri not in META_CLASSES and iri not in set(profile.exclude_types)


def _predicate_filter(variable: str, profile: Profile) -> str:
    """A FILTER keeping ``?variable`` to possible relations (built from term objects)."""
    excluded = ", ".join(str(NamedNode(p)) for p in sorted(_not_relation(profile)))
    clauses = [f"FILTER(?{variable} NOT IN ({excluded}))"]
    if profile.relation_prefixes:
        starts = " || ".join(f"STRSTARTS(STR(?{variable}), {Literal(p)})" for p in profile.relation_prefixes)
        clauses.append(f"FILTER({starts})")
    return " ".join(clauses)


def _edges(store: Store, profile: Profile, edges_where: str, limit: int) -> list[Edge]:
    """The edges ``?s ?p ?o`` that the patterns ``edges_where`` bind, with the types of both ends (``?ts``,
    ``?to``), at most ``limit`` rows; IRI-less predicates dropped."""
    t = NamedNode(profile.type_predicate)
    sparql = (f"SELECT ?p ?o ?ts ?to WHERE {{ {edges_where} "
              f"OPTIONAL {{ ?s {t} ?ts }} OPTIONAL {{ ?o {t} ?to }} }} LIMIT {limit}")
    edges = []
    for row in store.select(BuiltQuery.select(sparql)).rows:
        p, o, ts, to = (list(row) + [None] * 4)[:4]
        predicate = _iri(p)
        if predicate is not None and o is not None:
            edges.append((predicate, isinstance(o, Literal), _iri(ts), _iri(to)))
    return edges


def _store_edges(store: Store, profile: Profile, opts: SampleOptions) -> list[Edge]:
    """The first triples of the store, with the types of both ends."""
    first = f"{{ SELECT ?s ?p ?o WHERE {{ ?s ?p ?o {_predicate_filter('p', profile)} }} LIMIT {opts.edge_sample} }}"
    return _edges(store, profile, first, opts.edge_sample * 4)


def _type_counts(store: Store, profile: Profile, opts: SampleOptions) -> Counter[str]:
    t = NamedNode(profile.type_predicate)
    query = f"SELECT ?t WHERE {{ ?s {t} ?t }} LIMIT {opts.type_sample}"
    found: Counter[str] = Counter()
    for (term,) in store.select(BuiltQuery.select(query)).rows:
        iri = _iri(term)
        if iri is not None and _is_type(iri, profile):
            found[iri] += 1
    return found


def _type_edges(store: Store, profile: Profile, type_iri: str, opts: SampleOptions) -> list[Edge]:
    """Edges of a few members of ``type_iri`` (their other types and the objects' types too)."""
    t, wanted = NamedNode(profile.type_predicate), NamedNode(type_iri)
    members = (f"{{ SELECT ?s WHERE {{ ?s {t} {wanted} }} LIMIT {opts.subjects_per_type} }} "
               f"?s ?p ?o {_predicate_filter('p', profile)}")
    return _edges(store, profile, members, opts.rows_per_type)


def _declared_edges(store: Store, profile: Profile, opts: SampleOptions) -> list[Edge]:
    """A few edges of each relation the profile declares (absent ones find nothing)."""
    declared = [iri for iri in profile.relations if _is_relation(iri, profile)]
    edges: list[Edge] = []
    for start in range(0, len(declared), 20):
        parts = [f"{{ {{ SELECT ?s ?o WHERE {{ ?s {NamedNode(iri)} ?o }} LIMIT {opts.per_relation} }} "
                 f"BIND({NamedNode(iri)} AS ?p) }}" for iri in declared[start : start + 20]]
        edges.extend(_edges(store, profile, " UNION ".join(parts), opts.per_relation * 20 * 4))
    return edges


def _relations(edges: Iterable[Edge], profile: Profile, opts: SampleOptions) -> list[RelationInfo]:
    """Relations with sample counts, literal share and domain → range pairs."""
    counts: Counter[str] = Counter()
    literals: Counter[str] = Counter()
    pairs: dict[str, Counter[tuple[str | None, str | None]]] = {}
    for p, is_literal, ts, to in edges:
        if not _is_relation(p, profile):
            continue
        counts[p] += 1
        literals[p] += is_literal
        if not is_literal:
            ts = ts if ts is not None and _is_type(ts, profile) else None
            to = to if to is not None and _is_type(to, profile) else None
            pairs.setdefault(p, Counter())[(ts, to)] += 1
    relations = []
    for p, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[: opts.max_relations]:
        ranked = sorted(pairs.get(p, Counter()).items(), key=lambda item: (-item[1], str(item[0])))
        relations.append(RelationInfo(iri=p, label=humanize(local_name(p)), count=n,
                                      kind="literal" if literals[p] * 2 > n else "object",
                                      pairs=[(ts, to, c) for (ts, to), c in ranked]))
    return relations


def _present(store: Store, predicates: Sequence[str]) -> list[str]:
    """The predicates that occur in the store at all (one bounded ASK each)."""
    return [p for p in dict.fromkeys(predicates)
            if store.query(BuiltQuery.ask(f"ASK {{ ?s {NamedNode(p)} ?o }}")).boolean]


def sample_schema(store: Store, profile: Profile, options: SampleOptions | None = None) -> Schema:
    """The schema of ``store`` from bounded samples, named the way ``profile`` says."""
    opts = options or SampleOptions()
    type_counts = _type_counts(store, profile, opts)
    edges = _store_edges(store, profile, opts) + _declared_edges(store, profile, opts)
    sampled_types = [t for t, _ in type_counts.most_common(opts.types)]
    for type_iri in dict.fromkeys([*sampled_types, *profile.types]):
        edges.extend(_type_edges(store, profile, type_iri, opts))
    for _, _, ts, to in edges:
        for found in (ts, to):
            if found is not None and _is_type(found, profile):
                type_counts[found] = max(type_counts[found], 1)  # seen, even if the type sample missed it
    types = [TypeInfo(iri=t, label=humanize(local_name(t)), count=n)
             for t, n in sorted(type_counts.items(), key=lambda item: (-item[1], item[0]))[: opts.max_types]]
    schema = Schema(
        types=types, relations=_relations(edges, profile, opts),
        label_predicates=_present(store, profile.label_predicates),
        alias_predicates=_present(store, profile.alias_predicates),
        text_predicates=_present(store, profile.text_predicates),
        type_predicate=profile.type_predicate,
    )
    return apply_profile(schema, store, profile)


# -- naming relations and types the way the store does -----------------------------------------


def _language_rank(term: Term, language: str | None) -> int | None:
    """0: the profile's language, 1: no language, None: another language (or not a literal)."""
    if not isinstance(term, Literal) or not term.value.strip():
        return None
    tag = (term.language or "").lower()
    if not tag:
        return 1
    if language and tag.split("-")[0] == language.lower().split("-")[0]:
        return 0
    return None if language else 1


def _values_query(iris: list[str], predicates: Sequence[str], via: str | None) -> str:
    values = " ".join(str(NamedNode(i)) for i in iris)
    preds = " ".join(str(NamedNode(p)) for p in predicates)
    subject = f"?e {NamedNode(via)} ?x . ?e" if via else "?x"
    return f"SELECT ?x ?p ?v WHERE {{ VALUES ?x {{ {values} }} VALUES ?p {{ {preds} }} {subject} ?p ?v }}"


def _literals(store: Store, iris: Sequence[str], predicates: Sequence[str], language: str | None,
              via: str | None = None) -> dict[str, list[str]]:
    """``{iri: [values]}``, profile language first, for a fixed list of IRIs (chunked ``VALUES``)."""
    if not iris or not predicates:
        return {}
    ranked: dict[str, list[tuple[int, int, str]]] = {}
    order = {p: i for i, p in enumerate(predicates)}
    unique = list(dict.fromkeys(iris))
    for start in range(0, len(unique), _CHUNK):
        query = _values_query(unique[start : start + _CHUNK], predicates, via)
        for x, p, v in store.select(BuiltQuery.select(query)).rows:
            rank = _language_rank(v, language) if v is not None else None
            subject = _iri(x)
            if subject is not None and rank is not None and isinstance(v, Literal):
                ranked.setdefault(subject, []).append((order.get(_iri(p) or "", 0), rank, v.value))
    return {iri: list(dict.fromkeys(v for _, _, v in sorted(values))) for iri, values in ranked.items()}


def _names(store: Store, iris: list[str], profile: Profile, *, via: bool) -> tuple[dict[str, list[str]], ...]:
    """(labels, aliases, comments) of ``iris``, also through the relation entity when ``via``."""
    found: list[dict[str, list[str]]] = []
    for predicates in (profile.label_predicates, profile.alias_predicates, profile.text_predicates):
        direct = _literals(store, iris, predicates, profile.language)
        if via and profile.relation_entity_predicate:
            through = _literals(store, iris, predicates, profile.language, via=profile.relation_entity_predicate)
            for iri, values in through.items():
                direct[iri] = list(dict.fromkeys([*direct.get(iri, []), *values]))
        found.append(direct)
    return tuple(found)


def _first(values: list[str] | None, default: _T) -> str | _T:
    return values[0] if values else default


def apply_profile(schema: Schema, store: Store, profile: Profile) -> Schema:
    """``schema`` without the profile's bookkeeping predicates and meta types, labelled the store's way.

    Labels come from the profile's label predicates on the relation or type itself
    (or, for Wikidata, on its property entity), then the profile's declared labels,
    then what ``schema`` already had.  Counts and pairs are kept.
    """
    relations = [r for r in schema.relations if _is_relation(r.iri, profile)]
    types = [t for t in schema.types if _is_type(t.iri, profile)]
    labels, aliases, comments = _names(store, [r.iri for r in relations], profile, via=True)
    relations = [replace(
        r, label=_first(labels.get(r.iri), profile.relations.get(r.iri) or r.label),
        aliases=list(dict.fromkeys([*(labels.get(r.iri) or [])[1:], *aliases.get(r.iri, []), *r.aliases])),
        comment=_first(comments.get(r.iri), r.comment)) for r in relations]
    labels, _, comments = _names(store, [t.iri for t in types], profile, via=False)
    types = [replace(t, label=_first(labels.get(t.iri), profile.types.get(t.iri) or t.label),
                     comment=_first(comments.get(t.iri), t.comment)) for t in types]
    return replace(schema, relations=relations, types=types)
