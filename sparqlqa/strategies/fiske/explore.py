"""Exploration SPARQL: the (relation, neighbour) pairs around a route's end nodes.

Two bounded SELECTs per step (outgoing and incoming edges, ``LIMIT`` each), built
from pyoxigraph term objects only, run through the KB's :class:`~sparqlqa.kb.store.Store`
(Oxigraph or a remote endpoint alike).  A neighbour with no name under the KB's
label predicates (a blank node or an unnamed IRI, like a Freebase CVT) is passed
through: its own outgoing edges give the pairs, with both predicates kept.  Names,
types, labels and bookkeeping predicates are never relations; literal neighbours are
left out (a route must be able to step on from its end).

>>> print(_pair_query(["urn:alien"], "out", ["urn:label"], ["urn:type"], limit=5))
SELECT DISTINCT ?s ?p ?m ?p2 ?n WHERE { VALUES ?s { <urn:alien> }
{ ?s ?p ?n . FILTER(isIRI(?n) && ?n != ?s) FILTER EXISTS { ?n ?lp ?l . FILTER(?lp IN (<urn:label>)) } }
UNION { ?s ?p ?m . FILTER(!isLiteral(?m) && ?m != ?s) FILTER NOT EXISTS { ?m ?lp ?l . FILTER(?lp IN (<urn:label>)) }
?m ?p2 ?n . FILTER(isIRI(?n) && ?n != ?s) FILTER(?p2 NOT IN (<urn:type>)) }
FILTER(?p NOT IN (<urn:type>)) } LIMIT 5
"""

from __future__ import annotations

__all__ = ["MAX_END_NODES", "Pair", "neighbour_pairs", "relation_label"]

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pyoxigraph import BlankNode, NamedNode

from sparqlqa.kb.records import QueryRecord
from sparqlqa.kb.schema import humanize, local_name
from sparqlqa.kb.vocab import RDFS
from sparqlqa.query.built_query import BuiltQuery
from sparqlqa.strategies.fiske.state import Relation

if TYPE_CHECKING:
    from sparqlqa.kb.knowledge_base import KnowledgeBase

#: rows per direction and step (the reference code's LIMIT)
PAIR_LIMIT = 1000
#: end nodes explored together in one query
MAX_END_NODES = 50


@dataclass(frozen=True)
class Pair:
    """A neighbour of an end node: ``source -relation-> node`` (or reversed, or through ``middle``)."""

    relation: Relation
    source: str
    middle: str  # the intermediate node passed through ("" when direct)
    node: str


def label_predicates(kb: KnowledgeBase) -> list[str]:
    return list(kb.schema.label_predicates or kb.profile.label_predicates) or [RDFS.label.value]


def _excluded_predicates(kb: KnowledgeBase) -> list[str]:
    """Predicates that are names, text, types or bookkeeping, never relations to explore."""
    profile, schema = kb.profile, kb.schema
    found = [*label_predicates(kb), *(schema.alias_predicates or profile.alias_predicates),
             *profile.text_predicates, schema.type_predicate or profile.type_predicate, *profile.exclude_predicates]
    return list(dict.fromkeys(found))


def _pair_query(ends: Sequence[str], direction: str, names: Sequence[str], excluded: Sequence[str], *,
               limit: int = PAIR_LIMIT) -> str:
    """The SELECT for one direction: direct named neighbours ∪ neighbours through an unnamed node."""
    values = " ".join(str(NamedNode(i)) for i in ends)
    named = ", ".join(str(NamedNode(p)) for p in names)
    skip = ", ".join(str(NamedNode(p)) for p in excluded)
    first = "?s ?p ?n" if direction == "out" else "?n ?p ?s"
    through = "?s ?p ?m" if direction == "out" else "?m ?p ?s"
    return (f"SELECT DISTINCT ?s ?p ?m ?p2 ?n WHERE {{ VALUES ?s {{ {values} }}\n"
            f"{{ {first} . FILTER(isIRI(?n) && ?n != ?s) FILTER EXISTS {{ ?n ?lp ?l . FILTER(?lp IN ({named})) }} }}\n"
            f"UNION {{ {through} . FILTER(!isLiteral(?m) && ?m != ?s) "
            f"FILTER NOT EXISTS {{ ?m ?lp ?l . FILTER(?lp IN ({named})) }}\n"
            f"?m ?p2 ?n . FILTER(isIRI(?n) && ?n != ?s) FILTER(?p2 NOT IN ({skip})) }}\n"
            f"FILTER(?p NOT IN ({skip})) }} LIMIT {int(limit)}")


def neighbour_pairs(kb: KnowledgeBase, ends: Sequence[str], *, sink: Callable[[QueryRecord], None],
                    limit: int = PAIR_LIMIT) -> list[Pair]:
    """Outgoing and incoming pairs of ``ends`` (at most :data:`MAX_END_NODES` of them), in query order."""
    ends = list(ends)[:MAX_END_NODES]
    if not ends:
        return []
    names, excluded = label_predicates(kb), _excluded_predicates(kb)
    prefixes = tuple(kb.profile.relation_prefixes)
    pairs: list[Pair] = []
    for direction in ("out", "in"):
        result = kb.query(BuiltQuery.select(_pair_query(ends, direction, names, excluded, limit=limit)))
        sink(replace(result.history(), direction=direction))
        for s, p, m, p2, n in result.rows:
            if s is None or p is None or n is None:
                continue
            if prefixes and not all(_under(t, prefixes) for t in (p, p2) if t is not None):
                continue
            relation = Relation(_node_text(p), direction, _node_text(p2) or None)
            pairs.append(Pair(relation, _node_text(s), _node_text(m), _node_text(n)))
    return list(dict.fromkeys(pairs))


def _under(term: Any, prefixes: tuple[str, ...]) -> bool:
    return str(getattr(term, "value", term)).startswith(prefixes)


def _node_text(term: Any) -> str:
    if term is None:
        return ""
    if isinstance(term, BlankNode):
        return f"_:{term.value}"
    return str(getattr(term, "value", term))


def relation_label(kb: KnowledgeBase, relation: Relation) -> str:
    """How a relation is shown to the LLM: ``[out] directed by`` / ``[in] starring / actor``."""
    def name(iri: str) -> str:
        info = kb.schema.relation(iri)
        return info.label if info is not None else humanize(local_name(iri))

    text = name(relation.predicate) + (f" / {name(relation.via)}" if relation.via else "")
    return f"[{relation.direction}] {text}"
