"""A KB group asked as one KB: ``sparqlqa ask films+people "…"`` (or a saved group, :mod:`sparqlqa.kb.groups`).

Design: a group is a cached *group generation*, one Oxigraph store holding the RDF merge of every
member (their triples in its default graph, each triple once), with the merged schema (each relation
and node type tagged with the member KBs that hold it) in its manifest.  It is rebuilt only when a
member's generation changes (the folder is named by a fingerprint of the members' generations) and is
kept like a KB's generations (``kbs/.groups/<members>/CURRENT``, reader leases, atomic switch), so
every stage runs on it unchanged: linking over every member's names, ``owl:sameAs`` identity
(:mod:`sparqlqa.kb.identity`) across members, the node index built on demand over every member's
nodes, and compiled SPARQL that really joins — a shared IRI is one node, a ``sameAs`` pair one group.
The saved ``.rq`` is a plain SPARQL 1.1 query over the merged data: any engine holding the members'
files (rdflib over their union included) gives the same rows.

Why not named graphs per member in the group store (``GRAPH ?g`` for provenance, the default graph as
their union)?  Oxigraph's union default graph keeps one row per graph a triple is in (a label both
members state comes back twice), so rows and counts would differ from the RDF merge the ``.rq`` is
promised to run on; keeping the merge *and* per-member graphs doubles the store.  Provenance is
instead asked of the members' own stores (:meth:`GroupKB.provenance`): one bounded ``VALUES`` lookup per
member for an answer's few evidence triples.  Why not a federated plan in Python (each triplet sent to
the member holding its relation, joins in Python)?  It needs a planner for every query shape the
compiler emits (forms, filters, ORDER BY, relaxation tiers) and joins across ``sameAs`` in Python,
while the merged store gives all of that to the SPARQL engine for the price of a copy of the members.

Member order does not matter: ``tiny+movies``, ``movies + tiny`` and ``movies+movies+tiny`` are one group,
``movies+tiny`` (:func:`~sparqlqa.kb.knowledge_base.canonical_kb_name`, applied where a name enters).  The
merged generation is built from the members sorted by name (the first one's base IRI is the group's, the
first to declare a prefix wins, profiles merge in that order) and its fingerprint is of the members as a
set, so a saved group listing them in another order shares it.  Only a saved group's own member list keeps
its order (provenance, ``evidence_kbs``, names members in it; for an ad hoc group that is sorted too).

A remote member (an endpoint registered with ``sparqlqa kbs add NAME --endpoint URL``) cannot be copied:
its sampled relations and types join the schema tagged with its endpoint, the compiler writes their
patterns as a ``SERVICE`` block, and :meth:`GroupKB.query` runs that block through the member's own store
(:mod:`sparqlqa.kb.group_service`: the endpoint's limits, a bind join, read queries only).  The group's node
index copies members' vectors where a node's text is unchanged (:mod:`sparqlqa.vectors.member_vectors`).
"""

from __future__ import annotations

__all__ = ["GroupKB", "current_group", "fingerprint", "forget_group_caches", "is_group", "merged_profile", "open_group",
           "tag_schema"]

import gc
import hashlib
import json
import os
import shutil
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pyoxigraph import BlankNode, DefaultGraph, Literal, Quad, RdfFormat, parse
from pyoxigraph import Store as OxStore

from sparqlqa.errors import GroupError, GroupMemberNotFound, KBNotFound
from sparqlqa.kb.export import ADDED_FILE
from sparqlqa.kb.group_service import run_services
from sparqlqa.kb.groups import split_members
from sparqlqa.kb.kb_names import canonical_kb_name
from sparqlqa.kb.knowledge_base import (
    KnowledgeBase,
    Manifest,
    current_generation,
    group_openers,
    kb_root,
    open_kb,
    retire_generation,
)
from sparqlqa.kb.profile import DEFAULT_PROFILE, Profile
from sparqlqa.kb.schema import Schema, compute_schema
from sparqlqa.kb.store import OxigraphStore, QueryResult
from sparqlqa.kb.terms import term_from_key
from sparqlqa.paths import atomic_write_text, exclusive_lock, kbs_dir, make_folder
from sparqlqa.query.built_query import BuiltQuery
from sparqlqa.query.limits import QueryLimits, unbounded
from sparqlqa.query.sparql_model import SparqlQuery
from sparqlqa.version import __version__

#: bump when the group store's layout changes: every cached group generation is rebuilt
LAYOUT = 1
#: at most this many evidence triples are looked up per member for provenance (one query each)
MAX_PROVENANCE_TRIPLES = 400


class GroupKB(KnowledgeBase):
    """A KB group: the merged store of its ``members`` (an ad hoc group's in their canonical order, sorted;
    a saved group's as saved: the order provenance lists them in)."""

    def __init__(self, manifest: Manifest, directory: Path, members: list[str]) -> None:
        super().__init__(manifest, directory)
        self.members = members
        #: the remote members: endpoint URL → member name (:mod:`sparqlqa.kb.group_service`)
        self.remote: dict[str, str] = {entry["endpoint"]: entry["name"]
                                       for entry in manifest.extra.get("group", {}).get("remote", [])}
        self._opened: dict[str, KnowledgeBase] = {}
        self._open_lock = threading.Lock()

    def query(self, sparql: str | BuiltQuery, *, limits: QueryLimits | None = None) -> QueryResult:
        """A read query on the merged store; a remote member's ``SERVICE`` block of a query sparqlqa compiled
        (a :class:`~sparqlqa.query.built_query.BuiltQuery` with its structure) is run by that member's own store
        first and joined as a ``VALUES`` table (:func:`~sparqlqa.kb.group_service.run_services`, on the
        structure).  The result keeps the query as written (the ``.rq`` saved has the ``SERVICE`` block).
        Any other query (a ``str``: a user's, an LLM's) is read by the parser and its SERVICE meets the
        store's guard, as on any KB."""
        structure = sparql.structure if isinstance(sparql, BuiltQuery) else None
        if structure is None or not set(structure.services()) & set(self.remote):
            return super().query(sparql, limits=limits)

        def remote(endpoint: str, select: SparqlQuery) -> QueryResult:
            return self.member(self.remote[endpoint]).query(BuiltQuery.of(select, one_line=True), limits=limits)

        def local(probe: SparqlQuery) -> QueryResult:
            return super(GroupKB, self).query(BuiltQuery.of(probe), limits=limits)

        local_query, _ = run_services(structure, self.remote, remote, local)
        result = super().query(BuiltQuery.of(local_query), limits=limits)
        result.query = str(sparql)
        return result

    def member_kbs(self) -> list[KnowledgeBase]:
        return [self.member(name) for name in self.members]

    def remote_members(self) -> list[KnowledgeBase]:
        return [self.member(name) for name in self.remote.values()]

    def member(self, name: str) -> KnowledgeBase:
        """Member KB ``name``, opened once for this group (closed with it)."""
        with self._open_lock:
            if name not in self._opened:
                self._opened[name] = open_kb(name)
            return self._opened[name]

    def provenance(self, triples: Sequence[tuple[str, str, str]]) -> list[list[str]]:
        """For each ``(s, p, o)`` (IRIs, or literal/blank keys as in evidence), the members that state it.

        One ``VALUES`` lookup per member over at most :data:`MAX_PROVENANCE_TRIPLES` triples (the rest
        get ``[]``); a blank node matches any node in its place (blank node ids are each store's own).
        A local member answers it in this process: our own query, built from terms, a few hundred index
        probes, so a served group starts no query worker per member (only its own, for the request's queries).
        """
        wanted = list(dict.fromkeys(triples))[:MAX_PROVENANCE_TRIPLES]
        rows = [_values_row(i, t) for i, t in enumerate(wanted)]
        found: dict[tuple[str, str, str], list[str]] = {t: [] for t in wanted}
        values = " ".join(row for row in rows if row is not None)
        if not values:
            return [found.get(t, []) for t in triples]
        sparql = f"SELECT DISTINCT ?i WHERE {{ VALUES (?i ?s ?p ?o) {{ {values} }} ?s ?p ?o }}"
        for name in self.members:
            member = self.member(name)
            with unbounded() if member.can_scan() else nullcontext():
                stated = member.query(BuiltQuery.select(sparql)).rows
            for (index,) in stated:
                if isinstance(index, Literal):
                    found[wanted[int(index.value)]].append(name)
        return [list(dict.fromkeys(found.get(t, []))) for t in triples]

    def close(self) -> None:
        with self._open_lock:
            opened, self._opened = list(self._opened.values()), {}
        for kb in opened:
            kb.close()
        super().close()


def _values_row(index: int, triple: tuple[str, str, str]) -> str | None:
    """``(i s p o)`` for a ``VALUES`` block, terms written by pyoxigraph; ``UNDEF`` for a blank node."""
    terms = []
    for part in triple:
        try:
            term = term_from_key(str(part))
        except (ValueError, SyntaxError):
            return None
        terms.append("UNDEF" if isinstance(term, BlankNode) else str(term))
    return "({} {})".format(Literal(index), " ".join(terms))


def open_group(name: str) -> GroupKB | None:
    """The group ``name`` (``a+b`` or a saved group's name), built or brought up to date; ``None`` when
    ``name`` is no group.  :class:`GroupMemberNotFound` names a member that is no KB."""
    name = canonical_kb_name(name)
    members = split_members(name)
    if members is None:
        return None
    if len(members) < 2:
        raise GroupError(f"a KB group needs two or more member KBs; {name!r} has {len(members)}",
                         hint="join two or more KB names with '+', as in 'films+people'")
    opened = [_member(name, member) for member in sorted(members)]  # the merge is of a set: one order
    if all(kb.is_remote for kb in opened):
        for kb in opened:
            kb.close()
        raise GroupError(f"knowledge base group {name!r} has no local member: a group joins remote endpoints "
                         "to local KBs", hint="add a local KB to the group, or ask each endpoint on its own")
    try:
        generation = _current_group(sorted(members), opened)
    finally:
        for kb in opened:
            kb.close()
    manifest = Manifest.read(generation / "manifest.json")
    manifest.name = name
    return GroupKB(manifest, generation, members)


group_openers.add("group", open_group)


def _member(group: str, member: str) -> KnowledgeBase:
    if not kb_root(member).is_dir():
        raise GroupMemberNotFound(group, member)
    try:
        kb = open_kb(member)
    except KBNotFound:
        raise GroupMemberNotFound(group, member) from None
    return kb


def fingerprint(members: Sequence[KnowledgeBase]) -> str:
    """Names the group generation: the members' names and generations (a re-ingest makes a new one)."""
    return _fingerprint([(kb.name, kb.manifest.generation) for kb in members])


def _fingerprint(pairs: Sequence[tuple[str, str]]) -> str:
    """Of the members as a set (sorted by name): a saved group listing them in another order shares the
    cached generation instead of rebuilding it over the other's."""
    key = json.dumps([LAYOUT, [list(pair) for pair in sorted(pairs)]])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def current_group(name: str) -> str | None:
    """The fingerprint the group ``name`` has now (from its members' current generations, nothing opened
    nor built: a server compares it with the one it holds); ``None`` when ``name`` is no group."""
    members = split_members(name)
    if members is None:
        return None
    pairs = []
    for member in members:
        generation = current_generation(kb_root(member))
        if generation is None:
            raise GroupMemberNotFound(name, member)
        pairs.append((member, generation.name))
    return _fingerprint(pairs)


def _group_root(names: Sequence[str]) -> Path:
    key = "+".join(names)
    if len(key) > 120:  # file names have a limit; many long member names share a hash
        key = hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]
    return make_folder(kbs_dir() / ".groups" / key, what="the KB group folder")


def _current_group(names: list[str], members: list[KnowledgeBase]) -> Path:
    """The folder of the group generation for ``members`` as they are now, built when missing."""
    root = _group_root(names)
    wanted = fingerprint(members)
    found = current_generation(root)
    if found is not None and found.name == wanted:
        return found
    with _build_lock(root):
        found = current_generation(root)
        if found is not None and found.name == wanted:
            return found
        for child in root.iterdir():
            if child.name.startswith(".building-"):  # left by a killed builder (we hold the lock)
                shutil.rmtree(child, ignore_errors=True)
        staging = root / f".building-{uuid.uuid4().hex[:8]}"
        make_folder(staging, what="the new group generation folder")
        try:
            _build(staging, members, wanted)
            target = root / wanted
            shutil.rmtree(target, ignore_errors=True)  # a half-switched build of the same members
            os.rename(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        atomic_write_text(root / "CURRENT", wanted + "\n")
        for child in root.iterdir():
            if child.is_dir() and child != target and not child.name.startswith("."):
                retire_generation(child)
    return target


def _build_lock(root: Path) -> AbstractContextManager[bool]:
    """One builder of a group generation at a time; the others wait for it (a build takes seconds) and
    then find its generation current."""
    return exclusive_lock(root.parent / f".lock-{root.name}")


def forget_group_caches(member: str) -> int:
    """Retire the cached group generations that include KB ``member`` (it was removed); how many groups.
    A generation a reader still holds is deleted when that reader closes it."""
    root = kbs_dir() / ".groups"
    if not root.is_dir():
        return 0
    forgotten = 0
    for folder in root.iterdir():
        generation = current_generation(folder) if folder.is_dir() else None
        if generation is None:
            continue
        members = Manifest.read(generation / "manifest.json").extra.get("group", {}).get("members", [])
        if any(entry.get("name") == member for entry in members):
            for child in folder.iterdir():
                if child.is_dir() and not child.name.startswith("."):
                    retire_generation(child)
            (folder / "CURRENT").unlink(missing_ok=True)
            forgotten += 1
    return forgotten


def _merged_quads(members: Sequence[KnowledgeBase]) -> Iterator[Quad]:
    """Every member's triples into the default graph (the RDF merge: a triple two members state is one)."""
    graph = DefaultGraph()
    for kb in members:
        store = kb.store
        if not isinstance(store, OxigraphStore):
            raise GroupError(f"knowledge base {kb.name!r} has a {store.kind} store, which a group cannot copy",
                             hint="groups merge local Oxigraph KBs")
        for quad in store.oxstore:
            yield Quad(quad.subject, quad.predicate, quad.object, graph)


def merged_profile(profiles: Sequence[Profile]) -> Profile:
    """The members' profile when they share one, else the default with every member's name predicates."""
    first = profiles[0]
    if all(p == first for p in profiles):
        return first

    def union(attribute: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for profile in profiles for p in getattr(profile, attribute)))

    return replace(DEFAULT_PROFILE, name="group", label_predicates=union("label_predicates"),
                   alias_predicates=union("alias_predicates"), text_predicates=union("text_predicates"))


def tag_schema(schema: Schema, members: Sequence[KnowledgeBase]) -> Schema:
    """``schema`` with each relation and node type tagged with the members that hold it."""
    relations: dict[str, list[str]] = {}
    types: dict[str, list[str]] = {}
    for kb in members:
        for rel in kb.schema.relations:
            relations.setdefault(rel.iri, []).append(kb.name)
        for info in kb.schema.types:
            for iri in info.iris:
                types.setdefault(iri, []).append(kb.name)
    tagged_relations = [replace(rel, kbs=list(dict.fromkeys(relations.get(rel.iri, [])))) for rel in schema.relations]
    tagged_types = [replace(info, kbs=list(dict.fromkeys(k for i in info.iris for k in types.get(i, []))))
                    for info in schema.types]
    return replace(schema, relations=tagged_relations, types=tagged_types)


def with_remote(schema: Schema, remote: Sequence[KnowledgeBase]) -> Schema:
    """``schema`` (the local members') with the remote members' relations and node types: one a local
    member holds too only gains the tag, the others carry the endpoint that holds them (``service``)."""
    relations, types = list(schema.relations), list(schema.types)
    for kb in remote:
        url = kb.endpoint_url() or ""
        local_relations = {rel.iri: n for n, rel in enumerate(relations)}
        for rel in kb.schema.relations:
            if rel.iri in local_relations:
                known = relations[local_relations[rel.iri]]
                relations[local_relations[rel.iri]] = replace(known, kbs=[*known.kbs, kb.name])
            else:
                relations.append(replace(rel, kbs=[kb.name], service=url))
        local_types = {iri for info in types for iri in info.iris}
        types += [replace(info, kbs=[kb.name], service=url) for info in kb.schema.types
                  if not set(info.iris) & local_types]
    return replace(schema, relations=relations, types=types)


def _build(folder: Path, everyone: Sequence[KnowledgeBase], generation: str) -> Manifest:
    members = [kb for kb in everyone if not kb.is_remote]
    remote = [kb for kb in everyone if kb.is_remote]
    store = OxStore(str(folder / "store"))
    store.bulk_extend(_merged_quads(members))
    store.flush()
    profile = merged_profile([kb.profile for kb in members])
    schema = with_remote(tag_schema(compute_schema(OxigraphStore(store), profile), members), remote)
    prefixes: dict[str, str] = {}
    for kb in members:
        for prefix, iri in kb.manifest.prefixes.items():
            prefixes.setdefault(prefix, iri)
    added = _merge_added(folder, members)  # what ingest added beside the sources: not data
    data_triples = len(store) - sum(1 for triple in added if Quad(*triple, DefaultGraph()) in store)
    manifest = Manifest(
        name="+".join(kb.name for kb in members), generation=generation, store={"kind": "oxigraph"},
        base_iri=members[0].manifest.base_iri,
        sources=[{**source, "kb": kb.name} for kb in members for source in kb.manifest.sources],
        schema=schema.to_dict(), profile=profile.to_dict(),
        counts={"triples": schema.triple_count, "nodes": schema.node_count, "types": len(schema.types),
                "relations": len(schema.relations), "sources": sum(len(kb.manifest.sources) for kb in members),
                "data_triples": data_triples},
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"), sparqlqa_version=__version__,
        extra=_group_extra(everyone), prefixes=prefixes,
    )
    store.optimize()
    del store
    gc.collect()
    manifest.write(folder)
    return manifest


def _group_extra(members: Sequence[KnowledgeBase]) -> dict[str, Any]:
    return {"group": {"members": [{"name": kb.name, "generation": kb.manifest.generation} for kb in members],
                      "remote": [{"name": kb.name, "endpoint": kb.endpoint_url() or ""}
                                 for kb in members if kb.is_remote]}}


def _merge_added(folder: Path, members: Sequence[KnowledgeBase]) -> list[tuple[Any, Any, Any]]:
    """The triples ingest added beside the members' sources (``added.nt``), once each, written to the
    group's ``added.nt``; returned as (s, p, o) terms."""
    lines: dict[str, None] = {}
    for kb in members:
        path = kb.directory / ADDED_FILE if kb.directory is not None else None
        if path is not None and path.is_file():
            lines.update(dict.fromkeys(line for line in path.read_text("utf-8").splitlines() if line.strip()))
    text = "".join(line + "\n" for line in lines)
    atomic_write_text(folder / ADDED_FILE, text)
    return [(t.subject, t.predicate, t.object) for t in parse(text.encode("utf-8"), format=RdfFormat.N_TRIPLES)]


def is_group(kb: KnowledgeBase) -> bool:
    return isinstance(kb, GroupKB)
