"""The files of an on-disk node index, read back checked (the layout is in :mod:`sparqlqa.vectors.index`).

A node index is derived data, so a damaged file is never fatal: each reader here raises
:class:`~sparqlqa.errors.NodeIndexDamaged` naming the file and what is wrong with it (a
disk that filled, an interrupted copy, a stray edit), and :func:`sparqlqa.vectors.index.build_index`
warns and rebuilds.  Array files are checked from their header and size alone, so checking a
memory-mapped ``vectors.npy`` reads none of its rows.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> np.save(folder / "chunk-00000.npy", np.zeros((3, 4), dtype=np.float32))
>>> npy_problem(folder / "chunk-00000.npy", 3, 4) is None
True
>>> npy_problem(folder / "chunk-00000.npy", 5, 4)
'chunk-00000.npy has 3 rows, expected 5'
>>> _ = (folder / "x.npy").write_bytes((folder / "chunk-00000.npy").read_bytes()[:140])
>>> npy_problem(folder / "x.npy", 3, 4)
'x.npy is truncated (140 of 176 bytes)'
"""

from __future__ import annotations

__all__ = ["ANN_FILE", "IDS_FILE", "PROGRESS_FILE", "TYPES_FILE", "VECTORS_FILE", "BuildRecord", "IndexStatus",
           "chunk_path", "discard_folder", "fingerprint_problem", "join_arrays", "load_graph", "npy_problem",
           "open_vectors", "progress_status", "read_ids", "read_record", "read_type_rows", "recorded_fingerprint",
           "save_array"]

import io
import json
import mmap
import os
import re
import shutil
import time
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from sparqlqa.errors import NodeIndexDamaged
from sparqlqa.kb.records import JsonRecord
from sparqlqa.paths import atomic_write_bytes
from sparqlqa.vectors.ann import AnnIndex

INDEX_FORMAT = 1
PROGRESS_FILE = "progress.json"
IDS_FILE = "ids.txt"
TYPES_FILE = "types.json"
VECTORS_FILE = "vectors.npy"
ANN_FILE = "ann-faiss.index"
#: a discarded index folder is renamed to ``.trash-NAME-...`` (atomic) before it is deleted
TRASH_PREFIX = ".trash-"
_FLOAT32 = np.dtype(np.float32)
_HEADER_READERS: dict[tuple[int, int], Callable[[BinaryIO], tuple[Any, bool, np.dtype[Any]]]] = {
    (1, 0): np.lib.format.read_array_header_1_0,
    (2, 0): np.lib.format.read_array_header_2_0,
}
#: progress.json's fields and the types they must have
_RECORD_FIELDS: dict[str, tuple[type, ...]] = {
    "format": (int,), "model_id": (str,), "chunk_size": (int,), "count": (int,), "chunks": (int,),
    "chunks_done": (int,), "dimension": (int, type(None)), "complete": (bool,),
}


# --- progress.json -----------------------------------------------------------------------------


def _record_problem(record: Any) -> str | None:
    """What is wrong with a parsed ``progress.json`` (``None``: a well-formed record)."""
    if not isinstance(record, dict):
        return f"{PROGRESS_FILE} is not a JSON object"
    for name, kinds in _RECORD_FIELDS.items():
        if not isinstance(record.get(name), kinds):
            return f"{PROGRESS_FILE} has no valid {name!r}"
    if not isinstance(record.get("embedder", {}), dict):
        return f"{PROGRESS_FILE} has no valid 'embedder'"
    if record["format"] != INDEX_FORMAT:
        return f"{PROGRESS_FILE} is index format {record['format']}, this version reads {INDEX_FORMAT}"
    size, count = record["chunk_size"], record["count"]
    if size <= 0 or count < 0 or record["chunks"] != (count + size - 1) // size:
        return f"{PROGRESS_FILE} has inconsistent counts ({count} nodes, {record['chunks']} chunks of {size})"
    return None


@dataclass
class BuildRecord(JsonRecord):
    """``progress.json``: how far the build of an index got (``chunks_done`` of ``chunks`` chunks of
    ``chunk_size`` nodes, ``count`` in all), the vectors' ``dimension`` once known, and ``embedder``: the
    fingerprint of the embedder that built it (``None`` in indexes built before fingerprints were kept)."""

    model_id: str
    chunk_size: int
    count: int
    chunks: int
    dimension: int | None = None
    chunks_done: int = 0
    complete: bool = False
    embedder: dict[str, Any] | None = None
    format: int = INDEX_FORMAT

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BuildRecord:
        """A record already checked by :func:`_record_problem`."""
        return cls(model_id=data["model_id"], chunk_size=data["chunk_size"], count=data["count"],
                   chunks=data["chunks"], dimension=data["dimension"], chunks_done=data["chunks_done"],
                   complete=data["complete"], embedder=data.get("embedder"), format=data["format"])

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"format": self.format, "model_id": self.model_id, "chunk_size": self.chunk_size,
                                "count": self.count, "chunks": self.chunks, "dimension": self.dimension,
                                "chunks_done": self.chunks_done, "complete": self.complete}
        if self.embedder is not None:
            data["embedder"] = self.embedder
        return data


@dataclass
class IndexStatus(JsonRecord):
    """The build record for display: ``record`` ``None`` before a build, ``damaged`` when unreadable."""

    record: BuildRecord | None = None
    damaged: str | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.damaged is not None:
            return {"damaged": self.damaged}
        return self.record.to_dict() if self.record is not None else {}


def read_record(folder: Path) -> BuildRecord | None:
    """The build record of ``folder`` (``None`` when there is none yet), checked."""
    path = folder / PROGRESS_FILE
    try:
        record = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise NodeIndexDamaged(folder, f"{PROGRESS_FILE} is not readable JSON ({_short(exc)})") from exc
    problem = _record_problem(record)
    if problem is not None:
        raise NodeIndexDamaged(folder, problem)
    return BuildRecord.from_dict(record)


def progress_status(folder: Path) -> IndexStatus:
    """The build record for display (JSON: ``{}`` before a build, ``{"damaged": problem}`` when unreadable)."""
    try:
        return IndexStatus(record=read_record(folder))
    except NodeIndexDamaged as damage:
        return IndexStatus(damaged=damage.problem)


def recorded_fingerprint(record: BuildRecord) -> dict[str, Any]:
    """The fingerprint of the embedder that built an index (``Embedder.fingerprint()``), from its record;
    an index built before fingerprints were recorded has its model id and dimension."""
    fingerprint = {"dimension": 0, **(record.embedder or {}), "embedder": record.model_id}
    if record.dimension:
        fingerprint["dimension"] = record.dimension
    return fingerprint


def fingerprint_problem(built: dict[str, Any], asked: dict[str, Any]) -> str | None:
    """Why an index built by the embedder of fingerprint ``built`` cannot serve ``asked`` (``None``: it can).

    >>> fingerprint_problem({"embedder": "onnx-m", "dimension": 384}, {"embedder": "static-m", "dimension": 256})
    'it was built with onnx-m (384 dimensions), not static-m (256 dimensions)'
    >>> fingerprint_problem({"embedder": "static-m", "dimension": 256, "weights": "ab12"},
    ...                     {"embedder": "static-m", "dimension": 256, "weights": "cd34"})
    'it was built with another table of static-m (weights ab12, now cd34: the model was distilled again)'
    >>> fingerprint_problem({"embedder": "fake", "dimension": 0}, {"embedder": "fake", "dimension": 64}) is None
    True
    """
    name, size = built.get("embedder"), int(built.get("dimension") or 0)
    own, own_size = asked.get("embedder"), int(asked.get("dimension") or 0)
    if name != own:
        return (f"it was built with {name}{f' ({size} dimensions)' if size else ''}, "
                f"not {own}{f' ({own_size} dimensions)' if own_size else ''}")
    if size and own_size and size != own_size:
        return f"its vectors have {size} dimensions, {own} now gives {own_size}"
    weights, own_weights = built.get("weights"), asked.get("weights")
    if weights and own_weights and weights != own_weights:
        return (f"it was built with another table of {own} (weights {weights}, now {own_weights}: "
                "the model was distilled again)")
    return None


# --- ids.txt, types.json -----------------------------------------------------------------------


def read_ids(folder: Path, count: int) -> list[str]:
    """The node IRIs of ``folder`` in row order; there must be ``count``."""
    try:
        text = (folder / IDS_FILE).read_text("utf-8")
    except FileNotFoundError as exc:
        raise NodeIndexDamaged(folder, f"{IDS_FILE} is missing") from exc
    except (OSError, ValueError) as exc:
        raise NodeIndexDamaged(folder, f"{IDS_FILE} is unreadable ({_short(exc)})") from exc
    ids = [line for line in text.split("\n") if line]
    if len(ids) != count:
        raise NodeIndexDamaged(folder, f"{IDS_FILE} lists {len(ids):,} nodes, {PROGRESS_FILE} says {count:,}")
    return ids


def read_type_rows(folder: Path, count: int) -> dict[str, np.ndarray]:
    """``{type IRI: rows}`` of ``folder``; every row must be one of the ``count`` nodes."""
    try:
        raw = json.loads((folder / TYPES_FILE).read_text("utf-8"))
    except FileNotFoundError as exc:
        raise NodeIndexDamaged(folder, f"{TYPES_FILE} is missing") from exc
    except (OSError, ValueError) as exc:
        raise NodeIndexDamaged(folder, f"{TYPES_FILE} is not readable JSON ({_short(exc)})") from exc
    if not isinstance(raw, dict):
        raise NodeIndexDamaged(folder, f"{TYPES_FILE} is not a JSON object of type: [rows]")
    rows: dict[str, np.ndarray] = {}
    for kind, members in raw.items():
        try:
            rows[kind] = np.asarray(members, dtype=np.int64)
        except (TypeError, ValueError, OverflowError) as exc:
            raise NodeIndexDamaged(folder, f"{TYPES_FILE}: the rows of <{kind}> are not row numbers") from exc
        found = rows[kind]
        if found.ndim != 1 or (found.size and (found.min() < 0 or found.max() >= count)):
            raise NodeIndexDamaged(folder, f"{TYPES_FILE}: <{kind}> lists rows outside 0..{count - 1}")
    return rows


# --- arrays (chunks, vectors.npy) and the graph ---------------------------------------------------


def chunk_path(folder: Path, number: int) -> Path:
    return folder / f"chunk-{number:05d}.npy"


def save_array(path: Path, array: np.ndarray) -> None:
    """``array`` as float32 ``.npy``, written atomically."""
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array, dtype=np.float32))
    atomic_write_bytes(path, buffer.getvalue())


def open_vectors(path: Path, *, random_access: bool = False) -> np.ndarray:
    """The vectors of ``path`` memory-mapped; ``random_access`` (ANN re-scoring reads scattered rows)
    turns off the kernel's read-ahead, so a search maps the rows it reads, not their neighbours."""
    vectors = np.load(path, mmap_mode="r")
    handle = getattr(vectors, "_mmap", None)
    if random_access and handle is not None and hasattr(mmap, "MADV_RANDOM"):
        handle.madvise(mmap.MADV_RANDOM)
    return vectors


def _npy_header(path: Path) -> tuple[tuple[int, ...], bool, np.dtype[Any], int]:
    """Shape, Fortran order, dtype and data offset of the ``.npy`` file ``path``."""
    with path.open("rb") as handle:
        version = np.lib.format.read_magic(handle)
        if version not in _HEADER_READERS:
            raise ValueError(f"unknown .npy version {version}")
        shape, fortran, dtype = _HEADER_READERS[version](handle)
        return tuple(shape), bool(fortran), dtype, handle.tell()


def npy_problem(path: Path, rows: int, dimension: int | None) -> str | None:
    """What is wrong with ``path`` as ``rows`` float32 rows of ``dimension`` (any when falsy);
    ``None``: nothing.  Reads the header and the file size only."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return f"{path.name} is missing"
    except OSError as exc:
        return f"{path.name} is unreadable ({_short(exc)})"
    try:
        shape, fortran, dtype, offset = _npy_header(path)
    except (OSError, ValueError) as exc:
        return f"{path.name} is empty (0 bytes)" if size == 0 else f"{path.name} is unreadable ({_short(exc)})"
    if dtype != _FLOAT32 or len(shape) != 2 or fortran:
        return f"{path.name} holds a {dtype} array of shape {shape}, not rows of float32"
    if shape[0] != rows:
        return f"{path.name} has {shape[0]:,} rows, expected {rows:,}"
    if dimension and shape[1] != dimension:
        return f"{path.name} has {shape[1]} dimensions, the embedder gives {dimension}"
    expected = offset + rows * shape[1] * _FLOAT32.itemsize
    if size != expected:
        return f"{path.name} is {'truncated' if size < expected else 'too long'} ({size:,} of {expected:,} bytes)"
    return None


def join_arrays(folder: Path, parts: Iterable[Path], count: int, dimension: int) -> None:
    """Write ``parts`` (checked chunk files, in row order) as one ``vectors.npy``: streamed with plain
    writes (a full disk is an ``OSError``, not a fault in a memory map), then renamed into place."""
    tmp = folder / f".{VECTORS_FILE}.tmp"
    header = {"descr": np.lib.format.dtype_to_descr(_FLOAT32), "fortran_order": False, "shape": (count, dimension)}
    written = 0
    try:
        with tmp.open("wb") as out:
            np.lib.format.write_array_header_1_0(out, header)
            for path in parts:
                part = _load_chunk(folder, path)
                out.write(np.ascontiguousarray(part, dtype=np.float32).tobytes())
                written += len(part)
            out.flush()
            os.fsync(out.fileno())
        if written != count:
            raise NodeIndexDamaged(folder, f"the chunks hold {written:,} rows for {count:,} nodes")
        tmp.replace(folder / VECTORS_FILE)
    finally:
        tmp.unlink(missing_ok=True)


def _load_chunk(folder: Path, path: Path) -> np.ndarray:
    try:
        return np.asarray(np.load(path))
    except (OSError, ValueError) as exc:
        raise NodeIndexDamaged(folder, f"{path.name} is unreadable ({_short(exc)})") from exc


def load_graph(folder: Path, count: int, dimension: int) -> AnnIndex:
    """The ANN graph of ``folder``; it must hold ``count`` nodes of ``dimension``."""
    try:
        ann = AnnIndex.load(folder / ANN_FILE)
    except RuntimeError as exc:  # faiss reports an unreadable file so
        problem = f"{ANN_FILE} is unreadable ({_short(exc, folder / ANN_FILE)})"
        raise NodeIndexDamaged(folder, problem, graph_only=True) from exc
    held, size = int(ann.index.ntotal), int(ann.index.d)
    if (held, size) != (count, dimension):
        raise NodeIndexDamaged(folder, f"{ANN_FILE} holds {held:,} nodes of dimension {size}, "
                                       f"the index {count:,} of {dimension}", graph_only=True)
    return ann


# --- discarding ------------------------------------------------------------------------------------


def discard_folder(folder: Path) -> None:
    """Delete ``folder`` so that a kill at any moment leaves it whole or gone: it is first renamed
    (atomically) to a ``.trash-`` name beside it, then deleted with any trash of earlier kills."""
    with suppress(FileNotFoundError):  # absent, or discarded by another process just now
        folder.rename(folder.parent / f"{TRASH_PREFIX}{folder.name}-{os.getpid()}-{time.time_ns()}")
    for trash in folder.parent.glob(f"{TRASH_PREFIX}*"):
        shutil.rmtree(trash, ignore_errors=True)


def _short(exc: BaseException, path: Path | None = None) -> str:
    """An exception's message on one line, without faiss's source locations (``path`` by its name)."""
    text = " ".join(str(exc).split())
    text = re.sub(r"^Error in .*? at \S+:\d+: (Error: )?", "", text)
    text = text.replace(str(path), path.name) if path is not None else text
    return text if len(text) <= 160 else text[:159] + "…"
