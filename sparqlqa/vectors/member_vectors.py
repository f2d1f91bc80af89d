"""A KB group's node index from its members' finished indexes: a vector is copied, not re-embedded,
when the node's text is the same in the group as in the member.

When a KB group (:mod:`sparqlqa.kb.group`) builds its node index and a member already has a complete
index built by the same embedder (same fingerprint), each chunk of the group's nodes is written here:
a node whose index text (:func:`~sparqlqa.kb.node_text.index_texts`: label, type, relations) in the group
equals its text in a member that indexed it gets that member's vector; the others — typically a node with
facts in two members, whose group text says more than either member's — are embedded.  So the group's
index is exactly the one a build from scratch would give (the same vectors, hence the same rankings as
the merged KB), for the price of reading texts instead of embedding most of them.  Without member
indexes nothing is written here and the group builds as any KB does.
"""

from __future__ import annotations

__all__ = ["prefill_from_members"]

from pathlib import Path

import numpy as np

from sparqlqa.embed.embedders import Embedder
from sparqlqa.errors import NodeIndexError
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.node_text import index_texts
from sparqlqa.vectors import index_files as files


class _MemberIndex:
    """A member's complete index for one embedder: the row of each IRI, the vectors (memory-mapped)."""

    def __init__(self, kb: KnowledgeBase, rows: dict[str, int], vectors: np.ndarray) -> None:
        self.kb = kb
        self.rows = rows
        self.vectors = vectors


def _member_index(member: KnowledgeBase, embedder: Embedder) -> _MemberIndex | None:
    if member.directory is None or not member.can_scan():
        return None
    folder = member.directory / "artifacts" / "embeddings" / embedder.model_id
    try:
        record = files.read_record(folder)
        if record is None or not record.complete or not record.count:
            return None
        if files.fingerprint_problem(files.recorded_fingerprint(record), embedder.fingerprint()) is not None:
            return None
        ids = files.read_ids(folder, record.count)
        vectors = files.open_vectors(folder / files.VECTORS_FILE, random_access=True)
    except (NodeIndexError, OSError, ValueError):  # a damaged member index: embed instead
        return None
    if vectors.shape[0] != len(ids):
        return None
    return _MemberIndex(member, {iri: row for row, iri in enumerate(ids)}, vectors)


def _chunk(group: KnowledgeBase, embedder: Embedder, iris: list[str], members: list[_MemberIndex],
           counts: dict[str, int]) -> np.ndarray:
    """The vectors of ``iris``: a member's where the node's text there is the group's, else embedded."""
    texts = index_texts(group, iris)
    vectors = np.zeros((len(iris), members[0].vectors.shape[1]), dtype=np.float32)
    missing = set(range(len(iris)))
    for member in members:
        known = [row for row in sorted(missing) if iris[row] in member.rows]
        if not known:
            continue
        theirs = index_texts(member.kb, [iris[row] for row in known])
        for row in known:
            if theirs.get(iris[row]) == texts.get(iris[row]):
                vectors[row] = member.vectors[member.rows[iris[row]]]
                missing.discard(row)
    rest = sorted(missing)
    if rest:
        vectors[rest] = embedder.embed([texts.get(iris[row], "") for row in rest])
    counts["copied"] += len(iris) - len(rest)
    counts["embedded"] += len(rest)
    return vectors


def prefill_from_members(kb: KnowledgeBase, embedder: Embedder, folder: Path, record: files.BuildRecord,
                         ids: list[str]) -> dict[str, int]:
    """Write every chunk of a group's new index (``record``, ``ids`` in ``folder``) from the members'
    finished indexes and embeddings of what they lack; ``{"copied": n, "embedded": m}`` (empty for a KB
    that is no group, or a group none of whose members has an index for ``embedder``)."""
    members = [found for member in kb.member_kbs() if (found := _member_index(member, embedder)) is not None]
    if not members:
        return {}
    counts = {"copied": 0, "embedded": 0}
    size = record.chunk_size
    for number in range(record.chunks):
        vectors = _chunk(kb, embedder, ids[number * size:(number + 1) * size], members, counts)
        files.save_array(files.chunk_path(folder, number), vectors)
        record.dimension = int(vectors.shape[1])
    return counts
