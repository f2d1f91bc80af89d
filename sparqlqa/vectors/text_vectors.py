"""A few short texts a KB generation always has embedded the same way (its relations' and types'
verbalisations, which the offline strategy reads every question against), embedded once and kept beside the
generation: ``artifacts/text-vectors/<name>-<model id>.npy`` (the rows, memory-mapped on load) and ``.json``
(the texts, the embedder's fingerprint, the row count).  A cold ``ask`` reads them instead of embedding
again (issue 36).

They are derived data: stale ones (other texts: an ontology added since; another embedder) are replaced
silently; damaged ones (unreadable JSON, an ``.npy`` of the wrong shape) after a warning (``warn``; default a
``logging`` warning), as the node index does.  In-memory KBs embed each time.
"""

from __future__ import annotations

__all__ = ["TextVectorsRecord", "stored_text_vectors"]

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sparqlqa.errors import StorageError
from sparqlqa.paths import atomic_write_bytes

if TYPE_CHECKING:
    from sparqlqa.embed.embedders import Embedder
    from sparqlqa.kb.knowledge_base import KnowledgeBase

FORMAT = "sparqlqa-text-vectors"
VERSION = 1
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TextVectorsRecord:
    """The ``.json`` beside the ``.npy``: what the rows are (the texts, in order) and who embedded them
    (:meth:`~sparqlqa.embed.embedders.Embedder.fingerprint`, as sorted JSON); ``rows``: how many the ``.npy``
    holds."""

    fingerprint: str
    texts: list[str]
    rows: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, **asdict(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TextVectorsRecord | None:
        """The record, or None for another format or version (stale)."""
        if data.get("format") != FORMAT or data.get("version") != VERSION:
            return None
        return cls(str(data["fingerprint"]), list(data["texts"]), int(data["rows"]))


class _Damaged(Exception):
    """The files are there but cannot be what :func:`stored_text_vectors` wrote."""


def stored_text_vectors(kb: KnowledgeBase, name: str, texts: Sequence[str], embedder: Embedder, *,
                        warn: Callable[[str], None] | None = None) -> np.ndarray:
    """``embedder.embed(texts)``, read from the generation's artifacts when they hold these texts embedded by
    this embedder, else embedded now and stored there.

    >>> from sparqlqa.embed.embedders import get_embedder
    >>> from sparqlqa.kb.knowledge_base import KnowledgeBase
    >>> from sparqlqa.kb.store import OxigraphStore
    >>> kb = KnowledgeBase.in_memory("demo", OxigraphStore.in_memory())
    >>> stored_text_vectors(kb, "relations", ["directed by"], get_embedder("fake")).shape
    (1, 64)
    """
    try:
        folder = kb.artifacts_dir("text-vectors")
    except StorageError:  # a KB folder we may read but not write
        folder = None
    texts = list(texts)
    if folder is None or not texts:
        return embedder.embed(texts)
    stem = folder / f"{name}-{embedder.model_id}"
    record = TextVectorsRecord(json.dumps(embedder.fingerprint(), sort_keys=True), texts)
    try:
        vectors = _load(stem, record)
    except _Damaged as exc:
        (warn or _log_warning)(f"the stored {name} vectors of {kb.name} ({stem}.npy) are damaged ({exc}); "
                               "they are derived data: embedding them again")
        vectors = None
    if vectors is None:
        vectors = embedder.embed(texts)
        _save(stem, record, vectors)
    return vectors


def _log_warning(text: str) -> None:
    log.warning("%s", text)


def _load(stem: Path, record: TextVectorsRecord) -> np.ndarray | None:
    """The stored rows for ``record``; None when there are none or they are stale."""
    try:
        stored = TextVectorsRecord.from_dict(json.loads(stem.with_suffix(".json").read_bytes()))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _Damaged(f"{stem.name}.json: {exc or type(exc).__name__}") from exc
    if stored is None or replace(stored, rows=0) != record:
        return None
    try:
        vectors = np.load(stem.with_suffix(".npy"), mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise _Damaged(f"{stem.name}.npy: {exc}") from exc
    rows = len(record.texts)
    if vectors.dtype != np.float32 or vectors.ndim != 2 or vectors.shape[0] != rows or stored.rows != rows:
        raise _Damaged(f"{stem.name}.npy holds {vectors.dtype} {vectors.shape}, not {rows} float32 rows")
    return vectors


def _save(stem: Path, record: TextVectorsRecord, vectors: np.ndarray) -> None:
    """The ``.npy`` first, then the record that vouches for it; a KB folder we cannot write to only
    means embedding again next time."""
    import io

    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(vectors, dtype=np.float32), allow_pickle=False)
    payload = replace(record, rows=int(vectors.shape[0])).to_dict()
    try:
        atomic_write_bytes(stem.with_suffix(".npy"), buffer.getvalue())
        atomic_write_bytes(stem.with_suffix(".json"), json.dumps(payload, ensure_ascii=False).encode("utf-8"))
    except StorageError as exc:
        log.debug("text vectors not stored: %s", exc)
