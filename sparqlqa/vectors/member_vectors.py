"""A KB group's node index from its members' finished indexes: vectors copied, not re-embedded.

When a KB group (:mod:`sparqlqa.kb.group`) builds its node index and a member already has a complete
index built by the same embedder (same fingerprint), each node's vector is taken from there: a node
only one member holds gets that member's vector, a node several members hold (a shared IRI) the
normalised mean of theirs (each embeds the node's text as that member knows it; the mean stands for
the text the group knows).  Only the chunks whose every node was found are written; the rest are
embedded as usual, so a group of members without indexes builds exactly as any KB does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from sparqlqa.embed.embedders import Embedder
from sparqlqa.errors import NodeIndexError
from sparqlqa.kb.group import GroupKB
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.vectors import index_files as files

Source = tuple[dict[str, int], np.ndarray]


def _member_index(member: KnowledgeBase, embedder: Embedder) -> Source | None:
    """A member's complete index for ``embedder`` (row of each IRI, the vectors), or ``None``."""
    if member.directory is None:
        return None
    folder = member.directory / "artifacts" / "embeddings" / embedder.model_id
    try:
        record = files.read_record(folder)
        if record is None or not record["complete"] or not record["count"]:
            return None
        if files.fingerprint_problem(files.recorded_fingerprint(record), embedder.fingerprint()) is not None:
            return None
        ids = files.read_ids(folder, record["count"])
        vectors = files.open_vectors(folder / files.VECTORS_FILE, random_access=True)
    except (NodeIndexError, OSError, ValueError):  # a damaged member index: embed instead
        return None
    if vectors.shape[0] != len(ids):
        return None
    return {iri: row for row, iri in enumerate(ids)}, vectors


def _vector(iri: str, sources: list[Source]) -> np.ndarray | None:
    found = [vectors[rows[iri]] for rows, vectors in sources if iri in rows]
    if not found:
        return None
    if len(found) == 1:
        return np.asarray(found[0], dtype=np.float32)
    mean = np.mean(np.stack(found).astype(np.float32), axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm else mean


def prefill_from_members(kb: KnowledgeBase, embedder: Embedder, folder: Path, record: dict[str, Any],
                         ids: list[str]) -> int:
    """Write the chunks of a group's new index (``record``, ``ids`` in ``folder``) whose every node is
    in a member's finished index; how many chunks were written (0 for a KB that is no group)."""
    if not isinstance(kb, GroupKB):
        return 0
    sources = [source for name in kb.members if (source := _member_index(kb.member(name), embedder)) is not None]
    if not sources:
        return 0
    size, written = record["chunk_size"], 0
    for number in range(record["chunks"]):
        vectors = [_vector(iri, sources) for iri in ids[number * size:(number + 1) * size]]
        if not vectors or any(v is None for v in vectors):
            continue
        files.save_array(files.chunk_path(folder, number), np.stack(vectors))  # type: ignore[arg-type]
        record["dimension"] = int(vectors[0].shape[0])  # type: ignore[union-attr]
        written += 1
    return written
