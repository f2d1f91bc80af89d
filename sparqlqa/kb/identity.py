"""Nodes that are one: ``owl:sameAs`` groups, each answered as one node.

A group (the nodes ``owl:sameAs`` links, in either direction, transitively) has one canonical node:
the one with a label, then the one under a namespace the user's own files declared (``dbr:`` rather
than Wikidata's), then the one with the most facts, then the first IRI.  The others are its aliases:
their names link to it (:mod:`sparqlqa.kb.labels`), they get no entry of their own in the node index
(:mod:`sparqlqa.vectors.index`), queries that name the canonical node match its aliases' facts too,
and an answer found through an alias is the canonical node (:mod:`sparqlqa.stages.execute`).

>>> groups = Identity.from_pairs([("http://a/1", "http://b/1"), ("http://b/1", "http://c/1")],
...                              rank=lambda iri: (iri != "http://b/1", iri))
>>> groups.canonical("http://c/1"), groups.members("http://b/1")
('http://b/1', ['http://b/1', 'http://a/1', 'http://c/1'])
"""

from __future__ import annotations

__all__ = ["Identity", "identity_of"]

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyoxigraph import Literal, NamedNode

from sparqlqa.kb.naming import self_named
from sparqlqa.kb.vocab import OWL, RDFS
from sparqlqa.query.built_query import BuiltQuery

if TYPE_CHECKING:
    from sparqlqa.kb.knowledge_base import KnowledgeBase

#: a group's IRIs are sorted by this key; the first is the canonical node
RankKey = Callable[[str], Any]


@dataclass
class Identity:
    """``{alias: canonical}`` and ``{canonical: [canonical, *aliases]}`` for a KB's ``owl:sameAs`` groups."""

    aliases: dict[str, str] = field(default_factory=dict)
    groups: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[str, str]], rank: RankKey) -> Identity:
        """Groups from ``owl:sameAs`` pairs (union–find), each led by its best node by ``rank``."""
        parent: dict[str, str] = {}

        def root(iri: str) -> str:
            while parent.setdefault(iri, iri) != iri:
                parent[iri] = parent[parent[iri]]
                iri = parent[iri]
            return iri

        for a, b in pairs:
            if a != b:
                parent[root(a)] = root(b)
        members: dict[str, list[str]] = {}
        for iri in parent:
            members.setdefault(root(iri), []).append(iri)
        identity = cls()
        for group in members.values():
            ordered = sorted(group, key=rank)
            identity.groups[ordered[0]] = ordered
            identity.aliases.update((alias, ordered[0]) for alias in ordered[1:])
        return identity

    def canonical(self, iri: str) -> str:
        """The node that stands for ``iri`` (``iri`` itself when it is no alias)."""
        return self.aliases.get(iri, iri)

    def members(self, iri: str) -> list[str]:
        """Every IRI of ``iri``'s group, canonical first (``[iri]`` when it is in none)."""
        return self.groups.get(self.canonical(iri), [iri])

    def __bool__(self) -> bool:
        return bool(self.aliases)


def _build(kb: KnowledgeBase) -> Identity:
    same = NamedNode(OWL.sameAs.value)
    rows = kb.query(BuiltQuery.select(f"SELECT ?a ?b WHERE {{ ?a {same} ?b FILTER(isIRI(?a) && isIRI(?b)) }}")).rows
    pairs = [(a.value, b.value) for a, b in rows if isinstance(a, NamedNode) and isinstance(b, NamedNode)]
    if not pairs:
        return Identity()
    nodes = " ".join(str(NamedNode(i)) for i in dict.fromkeys(i for pair in pairs for i in pair))
    labels = " ".join(str(NamedNode(p)) for p in (kb.schema.label_predicates or [RDFS.label.value]))
    facts = {n.value: int(c.value) for n, c in kb.query(
        BuiltQuery.select(f"SELECT ?n (COUNT(*) AS ?c) WHERE {{ VALUES ?n {{ {nodes} }} ?n ?p ?o "
                          f"FILTER(?p != {same}) }} GROUP BY ?n")
    ).rows if isinstance(n, NamedNode) and isinstance(c, Literal)}
    named = {n.value for (n,) in kb.query(
        BuiltQuery.select(f"SELECT DISTINCT ?n WHERE {{ VALUES ?n {{ {nodes} }} VALUES ?p {{ {labels} }} "
                          "?n ?p ?l }")).rows
        if isinstance(n, NamedNode)}
    own = tuple(kb.manifest.prefixes.values())
    return Identity.from_pairs(pairs, rank=lambda iri: (iri not in named, not iri.startswith(own),
                                                        -facts.get(iri, 0), iri))


def identity_of(kb: KnowledgeBase) -> Identity:
    """The KB's ``owl:sameAs`` groups (one lookup of that predicate, remembered by the opened KB; none for a
    remote endpoint, which is never scanned, nor for a KB whose every source mints its own IRIs)."""
    if not kb.can_scan() or self_named(kb):
        return Identity()
    return kb.remember("identity", lambda: _build(kb))
