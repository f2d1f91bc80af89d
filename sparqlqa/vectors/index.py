"""The node vector index: built once per KB, memory-mapped, searched exactly or by ANN.

What each node's vector embeds is its text (:mod:`sparqlqa.kb.node_text`: its document, else its label
and a verbalisation of its relations).

On-disk KBs keep the index in ``kb.artifacts_dir("embeddings")/<model_id>/``::

    ids.txt            one node IRI per line (row order)
    types.json         {type IRI: [row, ...]}
    chunk-00000.npy    float32 rows [0, chunk_size), written atomically
    progress.json      chunk size, dimension, chunks done, complete flag
    vectors.npy        when complete: the chunks joined (then deleted), memory-mapped when loaded
    ann-faiss.index    from ANN_THRESHOLD nodes: an HNSW graph (see :mod:`sparqlqa.vectors.ann`)

A killed build resumes where it stopped (finished chunks are skipped; an
unfinished join or graph is redone).  Loading checks each file against the others
(:mod:`sparqlqa.vectors.index_files`): a damaged index, being derived data, is rebuilt after a one-line
warning (a damaged graph, or chunk of an unfinished build, alone); ``sparqlqa index KB --rebuild``
discards it first.  Searches are exact (one mat-vec) below the threshold, for SPARQL candidate
sets and for types with few nodes; above it the graph proposes candidates that are re-scored
exactly.  In-memory KBs keep their index in memory.

>>> from sparqlqa.kb.store import OxigraphStore
>>> from sparqlqa.kb.knowledge_base import KnowledgeBase
>>> from sparqlqa.embed.embedders import get_embedder
>>> store = OxigraphStore.in_memory()
>>> store.oxstore.update('INSERT DATA { <urn:a> <http://www.w3.org/2000/01/rdf-schema#label> "green tea" }')
>>> index = load_index(KnowledgeBase.in_memory("demo", store), get_embedder("fake"))
>>> index.search(embed_query(get_embedder("fake"), "green tea"), 1)[0][0]
'urn:a'
"""

from __future__ import annotations

__all__ = ["CHUNK_SIZE", "EXACT_TYPE_ROWS", "INDEX_ON_FIRST_USE", "PROGRESS_BATCH", "SCAN_FROM", "SCAN_WINDOW",
           "IndexSummary", "NodeIndex", "build_index", "built_index", "embed_query", "ensure_index", "index_at_hand",
           "index_nodes", "index_status", "index_supported", "load_index"]

import logging
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pyoxigraph import NamedNode

from sparqlqa.embed.embedders import Embedder
from sparqlqa.errors import ConfigError, NodeIndexDamaged, NodeIndexError, NodeIndexMismatch, StorageError
from sparqlqa.kb.identity import identity_of
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.naming import unnamed_nodes
from sparqlqa.kb.node_text import NodeBasics, index_texts, label_predicates, scan_basics
from sparqlqa.kb.vocab import META_CLASSES
from sparqlqa.paths import atomic_write_json, atomic_write_text, exclusive_lock, make_folder
from sparqlqa.query.built_query import BuiltQuery
from sparqlqa.vectors import index_files as files
from sparqlqa.vectors.ann import ANN_THRESHOLD, OVERSAMPLE, AnnIndex
from sparqlqa.vectors.index_files import (
    ANN_FILE,
    IDS_FILE,
    PROGRESS_FILE,
    VECTORS_FILE,
    BuildRecord,
    IndexStatus,
    chunk_path,
    open_vectors,
)
from sparqlqa.vectors.member_vectors import prefill_from_members

CHUNK_SIZE = 1024
#: a fast embedder's chunks (``Embedder.fast``: a chunk takes about a second, not minutes, to redo)
FAST_CHUNK_SIZE = 16_384
#: texts embedded between two progress reports (a few seconds on 2 CPU cores)
PROGRESS_BATCH = 256
#: from this many nodes left to embed, their labels, types and documents are read by one scan each of the
#: KB rather than by ``VALUES`` lookups per chunk (1M nodes: ~1 min against ~6; benchmarks/RESULTS.md)
SCAN_FROM = 20_000
#: the nodes whose labels, types and documents one scan keeps (rounded down to whole chunks, at least one):
#: a bigger KB is scanned once per window, so the texts' memory stays that of a window (issue 36)
SCAN_WINDOW = 131_072
#: a KB of at most this many nodes is indexed when a question first needs it (a couple of seconds with the
#: default embedder on 2 cores); a bigger one only by ``sparqlqa index`` or a ``vss`` question (issue 36)
INDEX_ON_FIRST_USE = 200
#: a type with fewer nodes than this is searched exactly even when the index has an ANN graph
EXACT_TYPE_ROWS = 50_000
#: ``progress(done_nodes, total_nodes)``
Progress = Callable[[int, int], None]
#: ``warn(text)``: one line saying what was damaged in an index and what is done about it
Warn = Callable[[str], None]
log = logging.getLogger(__name__)


# --- the index -------------------------------------------------------------------------------


@dataclass
class NodeIndex:
    """Unit vectors of every node of a KB, searched exactly (a dot product per row)."""

    model_id: str
    ids: list[str]
    vectors: np.ndarray
    type_rows: dict[str, np.ndarray] = field(default_factory=dict)
    ann: AnnIndex | None = None

    def __post_init__(self) -> None:
        self.row_of: dict[str, int] = {iri: row for row, iri in enumerate(self.ids)}

    def __len__(self) -> int:
        return len(self.ids)

    def rows_for(self, type_iri: str | None) -> np.ndarray | None:
        """Row indexes of nodes of ``type_iri`` (``None``: every row)."""
        if type_iri is None:
            return None
        return self.type_rows.get(type_iri, np.zeros(0, dtype=np.int64))

    def search(self, query: np.ndarray, k: int, *, type_iri: str | None = None,
               exclude: Iterable[str] = ()) -> list[tuple[str, float]]:
        """The ``k`` nodes most similar to ``query`` (ties: lower row first), optionally of one type."""
        self.check_query(query)
        rows = self.rows_for(type_iri)
        skip = {self.row_of[i] for i in exclude if i in self.row_of}
        if k <= 0 or len(self.ids) == 0:
            return []
        if rows is not None and len(rows) == len(self.ids):
            rows = None  # the type covers every node: no gather needed
        if self.ann is not None and (rows is None or len(rows) >= EXACT_TYPE_ROWS):
            return self._ann_search(query, k, rows, type_iri or "", skip)
        scores = self._scores(rows, query.astype(np.float32, copy=False))
        want = min(len(scores), k + len(skip))
        if want == 0:
            return []
        top = np.argpartition(-scores, want - 1)[:want] if want < len(scores) else np.arange(len(scores))
        top = top[np.lexsort((top, -scores[top]))]
        picked = top if rows is None else rows[top]
        found = [(self.ids[int(r)], float(s)) for r, s in zip(picked, scores[top]) if int(r) not in skip]
        return found[:k]

    def check_query(self, query: np.ndarray) -> None:
        """A query vector of another dimension than the index's comes from another embedder: refused."""
        if len(self.ids) and query.shape[-1] != self.vectors.shape[1]:
            raise NodeIndexMismatch(f"the query vector has {query.shape[-1]} dimensions, the index "
                                    f"({self.model_id}) {self.vectors.shape[1]}")

    def _ann_search(self, query: np.ndarray, k: int, rows: np.ndarray | None, key: str,
                    skip: set[int]) -> list[tuple[str, float]]:
        """Candidates from the graph, re-scored exactly against the float vectors."""
        assert self.ann is not None
        found = self.ann.candidates(query, OVERSAMPLE * (k + len(skip)), allowed=rows, key=key)
        found = np.sort(found)  # memory-map reads in file order
        scores = np.asarray(self.vectors[found] @ query.astype(np.float32, copy=False))
        order = np.lexsort((found, -scores))
        return [(self.ids[int(found[i])], float(scores[i])) for i in order if int(found[i]) not in skip][:k]

    def _scores(self, rows: np.ndarray | None, query: np.ndarray) -> np.ndarray:
        """Scores of ``rows`` (all when ``None``); big subsets gather scores, not rows (no matrix copy)."""
        if rows is None:
            return self.vectors @ query
        if len(rows) * 8 < len(self.ids):
            return self.vectors[rows] @ query
        return (self.vectors @ query)[rows]

    def similarities(self, query: np.ndarray, iris: Iterable[str]) -> dict[str, float]:
        """Cosine similarity of ``query`` to each of ``iris`` that the index holds."""
        known = [(iri, self.row_of[iri]) for iri in iris if iri in self.row_of]
        if not known:
            return {}
        self.check_query(query)
        rows = np.fromiter((r for _, r in known), dtype=np.int64, count=len(known))
        scores = self.vectors[rows] @ query.astype(np.float32)
        return {iri: float(s) for (iri, _), s in zip(known, scores)}

    def dominant_type(self, iris: Iterable[str]) -> str | None:
        """The type most of ``iris`` share (``None`` when they have none)."""
        rows = np.fromiter((self.row_of[i] for i in iris if i in self.row_of), dtype=np.int64)
        if len(rows) == 0 or not self.type_rows:
            return None
        counts = {t: int(np.isin(rows, members, assume_unique=False).sum()) for t, members in self.type_rows.items()}
        best = max(counts, key=lambda t: (counts[t], -len(self.type_rows[t])))
        return best if counts[best] > 0 else None


def index_nodes(kb: KnowledgeBase) -> tuple[list[str], dict[str, list[str]]]:
    """Every answerable node (labelled or typed, not a class/property, not an ``owl:sameAs`` alias), sorted,
    and its types (a merged type by its first IRI)."""
    schema = kb.schema
    excluded = schema.type_iris | {r.iri for r in schema.relations}
    type_p = NamedNode(schema.type_predicate)
    types: dict[str, list[str]] = {}
    for s, t in kb.store.scan_rows(BuiltQuery.select(f"SELECT ?s ?t WHERE {{ ?s {type_p} ?t FILTER(isIRI(?s)) }}")):
        kinds = types.setdefault(s.value, [])
        if isinstance(t, NamedNode):
            kinds.append(t.value)
    branches = " UNION ".join(f"{{ ?s {NamedNode(p)} ?l }}" for p in label_predicates(kb))
    labelled = BuiltQuery.select(f"SELECT ?s WHERE {{ {branches} FILTER(isIRI(?s)) }}")
    nodes = {row[0].value for row in kb.store.scan_rows(labelled)}  # rows streamed, not all held (issue 36)
    nodes.update(types)  # labelled or typed (one scan each: no DISTINCT over their union)
    nodes.update(unnamed_nodes(kb, nodes, typed_known=True))
    meta_only = {s for s, ts in types.items() if ts and all(t in META_CLASSES for t in ts)}
    ids = sorted(nodes - excluded - meta_only - set(identity_of(kb).aliases))  # an alias is its canonical node
    canonical = {other: info.iri for info in schema.types for other in info.also}  # one IRI per merged type
    kept = {s: list(dict.fromkeys(canonical.get(t, t) for t in types.get(s, []) if t not in META_CLASSES))
            for s in ids}
    return ids, kept


def _type_rows(ids: list[str], types: dict[str, list[str]]) -> dict[str, list[int]]:
    rows: dict[str, list[int]] = {}
    for row, iri in enumerate(ids):
        for kind in types.get(iri, []):
            rows.setdefault(kind, []).append(row)
    return rows


def _embed_rows(kb: KnowledgeBase, embedder: Embedder, iris: Sequence[str],
                report: Callable[[int], None] | None = None, basics: NodeBasics | None = None) -> np.ndarray:
    """Vectors of ``iris`` (rows in their order), embedded shortest text first in slices of
    :data:`PROGRESS_BATCH`; ``report(n)`` after each slice, so progress moves every few seconds.
    ``basics``: the nodes' labels, types and documents, read beforehand by one scan each."""
    texts = index_texts(kb, iris, basics=basics)
    ordered = [texts[i] for i in iris]
    order = sorted(range(len(ordered)), key=lambda row: len(ordered[row]))  # similar lengths share a batch
    vectors: np.ndarray | None = None
    for start in range(0, len(order), PROGRESS_BATCH):
        rows = order[start:start + PROGRESS_BATCH]
        part = embedder.embed([ordered[row] for row in rows])
        if vectors is None:
            vectors = np.zeros((len(ordered), part.shape[1]), dtype=np.float32)
        vectors[rows] = part
        if report is not None:
            report(start + len(rows))
    return vectors if vectors is not None else embedder.embed([])


def _offset_report(progress: Progress | None, offset: int, total: int) -> Callable[[int], None] | None:
    """``progress`` for a chunk starting at row ``offset``: ``report(n)`` → ``progress(offset + n, total)``."""
    if progress is None:
        return None
    return lambda done: progress(offset + done, total)


def _log_warning(text: str) -> None:
    log.warning("%s", text)


@dataclass
class _DiskBuild:
    """One load (building what is missing, repairing what is damaged) of the index in ``folder``."""

    kb: KnowledgeBase
    embedder: Embedder
    folder: Path
    chunk_size: int
    progress: Progress | None
    warn: Warn
    rebuild: bool = False
    damage: NodeIndexDamaged | None = None
    #: the nodes' types, when this build listed them
    types: dict[str, list[str]] | None = None

    def run(self) -> NodeIndex:
        """The checked index; a damaged one is rebuilt once after a warning (a graph alone when only it
        is damaged), and a write that fails is a :class:`NodeIndexError`."""
        try:
            if self.rebuild:
                files.discard_folder(self.folder)
            try:
                return self.load_or_build()
            except NodeIndexDamaged as damage:
                self.damage = damage
                self._say(damage.problem, "rebuilding its search graph" if damage.graph_only else "rebuilding it")
                if damage.graph_only:
                    (self.folder / ANN_FILE).unlink(missing_ok=True)
                else:
                    files.discard_folder(self.folder)
            return self.load_or_build()  # damaged again right after a rebuild: a clean error
        except (OSError, StorageError) as exc:
            raise self._unwritable(exc) from exc

    def load_or_build(self) -> NodeIndex:
        """The finished index, or the build finished first (resumed, or started afresh)."""
        record = files.read_record(self.folder)
        if record is not None:
            problem = files.fingerprint_problem(files.recorded_fingerprint(record), self.embedder.fingerprint())
            if problem is not None:
                raise NodeIndexMismatch(problem, kb=self.kb.name, spec=self.embedder.spec)
        if record is not None and record.complete:
            if not record.count or (self.folder / VECTORS_FILE).is_file():
                return self.load(record)
            if not any(self.folder.glob("chunk-*.npy")):
                raise NodeIndexDamaged(self.folder, f"{VECTORS_FILE} is missing")
        return self.build(record)

    def build(self, record: BuildRecord | None) -> NodeIndex:
        """Embed the chunks not done yet (or damaged), join them into ``vectors.npy``, load it."""
        if record is None or not (record.complete or record.chunk_size == self.chunk_size):
            record = self._start()
            if prefill_from_members(self.kb, self.embedder, self.folder, record,
                                    files.read_ids(self.folder, record.count)):  # a group: members' vectors
                record.chunks_done = record.chunks
                record.embedder = {**(record.embedder or {}), "dimension": record.dimension}
                atomic_write_json(self.folder / PROGRESS_FILE, record.to_dict())
        ids = files.read_ids(self.folder, record.count)
        files.read_type_rows(self.folder, record.count)  # a damaged listing is found before embedding
        self._embed_chunks(record, ids)
        record.chunks_done, record.complete = record.chunks, True
        atomic_write_json(self.folder / PROGRESS_FILE, record.to_dict())
        if record.count:
            chunks = [chunk_path(self.folder, number) for number in range(record.chunks)]
            files.join_arrays(self.folder, chunks, record.count, self._dimension(record))
            (self.folder / ANN_FILE).unlink(missing_ok=True)  # a graph of older vectors
            for path in chunks:
                path.unlink(missing_ok=True)
        return self.load(record)

    def _start(self) -> BuildRecord:
        """A fresh folder holding the node list and their types (whatever was there is discarded)."""
        files.discard_folder(self.folder)
        make_folder(self.folder, what="the node index folder")
        ids, types = index_nodes(self.kb)
        self.types = types  # the chunks' texts need them: not scanned again
        atomic_write_text(self.folder / IDS_FILE, "".join(f"{iri}\n" for iri in ids))
        atomic_write_json(self.folder / files.TYPES_FILE, _type_rows(ids, types))
        size = self.chunk_size
        record = BuildRecord(model_id=self.embedder.model_id, chunk_size=size, count=len(ids),
                             chunks=(len(ids) + size - 1) // size, embedder=self.embedder.fingerprint())
        atomic_write_json(self.folder / PROGRESS_FILE, record.to_dict())
        return record

    def _embed_chunks(self, record: BuildRecord, ids: list[str]) -> None:
        """Embed each chunk whose file is missing or damaged (a damaged one after a warning); from
        :data:`SCAN_FROM` nodes to embed, their labels, types and documents are read by one scan each, per
        window of :data:`SCAN_WINDOW` nodes (the window's basics released before the next one's scan)."""
        size, total = record.chunk_size, len(ids)
        basics: NodeBasics | None = None
        window_end = 0  # the end (a row) of the window whose basics ``basics`` holds
        for number in range(record.chunks):
            start, end = number * size, min((number + 1) * size, total)
            path = chunk_path(self.folder, number)
            problem = files.npy_problem(path, end - start, self._dimension(record))
            if problem is not None:
                if path.exists():
                    self._say(problem, f"re-embedding its {end - start:,} nodes")
                if start >= window_end:  # the last window's basics released before the next scan
                    basics, window_end = None, min(total, start + max(size, SCAN_WINDOW // size * size))
                    if total - start >= SCAN_FROM:  # else ``VALUES`` lookups per chunk (as below SCAN_FROM)
                        basics = scan_basics(self.kb, set(ids[start:window_end]), types=self.types)
                vectors = _embed_rows(self.kb, self.embedder, ids[start:end],
                                      _offset_report(self.progress, start, total), basics)
                files.save_array(path, vectors)
                record.chunks_done, record.dimension = max(record.chunks_done, number + 1), int(vectors.shape[1])
                record.embedder = {**(record.embedder or {}), "dimension": record.dimension}
                atomic_write_json(self.folder / PROGRESS_FILE, record.to_dict())
            if self.progress is not None:
                self.progress(end, total)

    def load(self, record: BuildRecord) -> NodeIndex:
        """The finished index, each file checked against the others."""
        count, dimension = record.count, self._dimension(record)
        ids = files.read_ids(self.folder, count)
        rows = files.read_type_rows(self.folder, count)
        if not count:
            return NodeIndex(self.embedder.model_id, ids, np.zeros((0, dimension), dtype=np.float32), rows)
        graph = (self.folder / ANN_FILE).is_file() or count >= ANN_THRESHOLD
        vectors = self._vectors(count, dimension, random_access=graph)
        if graph and not (self.folder / ANN_FILE).is_file():  # a build killed before its graph was saved
            AnnIndex.build(vectors, fast=self.embedder.fast).save(self.folder / ANN_FILE)
        ann = files.load_graph(self.folder, count, dimension) if graph else None
        index = NodeIndex(self.embedder.model_id, ids, vectors, rows, ann)
        if len(index.row_of) != count:
            raise NodeIndexDamaged(self.folder, f"{IDS_FILE} lists a node twice")
        return index

    def _vectors(self, count: int, dimension: int, *, random_access: bool) -> np.ndarray:
        path = self.folder / VECTORS_FILE
        problem = files.npy_problem(path, count, dimension)
        if problem is not None:
            raise NodeIndexDamaged(self.folder, problem)
        try:
            return open_vectors(path, random_access=random_access)
        except (OSError, ValueError) as exc:
            raise NodeIndexDamaged(self.folder, f"{VECTORS_FILE} cannot be memory-mapped ({exc})") from exc

    def _dimension(self, record: BuildRecord) -> int:
        recorded, own = record.dimension, self.embedder.dimension
        if recorded and own and recorded != own:
            raise NodeIndexDamaged(self.folder, f"{PROGRESS_FILE} records dimension {recorded}, "
                                                f"the embedder gives {own}")
        return int(recorded or own)

    def _say(self, problem: str, action: str) -> None:
        self.warn(f"the node index of {self.kb.name} ({self.embedder.model_id}) in {self.folder} is damaged: "
                  f"{problem}; {action}")

    def _unwritable(self, exc: OSError | StorageError) -> NodeIndexError:
        name = self.kb.name
        what = (f"the node index of {name} is damaged ({self.damage.problem}) and cannot be rebuilt"
                if self.damage is not None else f"the node index of {name} cannot be written")
        where, reason = (exc.path, exc.reason) if isinstance(exc, StorageError) else (exc.filename,
                                                                                      exc.strerror or exc)
        return NodeIndexError(f"{what}: {where or self.folder}: {reason}",
                              hint=f"it is derived data: make {self.folder.parent} and its contents writable "
                                   f"(or free space on that disk), then run 'sparqlqa index {name} --rebuild'")


def build_index(kb: KnowledgeBase, embedder: Embedder, *, progress: Progress | None = None,
                chunk_size: int | None = None, warn: Warn | None = None, rebuild: bool = False) -> NodeIndex:
    """Build (or finish building) the node index of an on-disk KB, then load it, checked.

    A damaged index (a file missing, unreadable, truncated or disagreeing with the others) is rebuilt
    after ``warn(text)`` says what was wrong (default: a ``logging`` warning): only the ANN graph when
    only it is damaged, only the damaged chunks of an unfinished build.  ``rebuild``: discard the index
    first.  An index that cannot be written (permissions, a full disk) is a :class:`NodeIndexError`.

    One build or load of a folder at a time, across processes and threads (a lock file in ``artifacts/``): the
    folder belongs to the KB's generation, whose folder its canonical name picked
    (:func:`~sparqlqa.kb.knowledge_base.canonical_kb_name`), so every spelling of a group waits for the one
    build and then loads what it wrote.
    """
    root = kb.artifacts_dir("embeddings")
    if root is None:
        return _build_in_memory(kb, embedder, progress)
    size = chunk_size or (FAST_CHUNK_SIZE if embedder.fast else CHUNK_SIZE)
    lock = root.parent / f".lock-embeddings-{embedder.model_id}"  # beside embeddings/: that holds indexes only
    with exclusive_lock(lock, required=False):  # one builder per folder
        return _DiskBuild(kb, embedder, root / embedder.model_id, size, progress, warn or _log_warning,
                          rebuild).run()


def _build_in_memory(kb: KnowledgeBase, embedder: Embedder, progress: Progress | None) -> NodeIndex:
    ids, types = index_nodes(kb)
    parts = []
    for start in range(0, len(ids), CHUNK_SIZE):
        parts.append(_embed_rows(kb, embedder, ids[start:start + CHUNK_SIZE],
                                 _offset_report(progress, start, len(ids))))
        if progress is not None:
            progress(min(start + CHUNK_SIZE, len(ids)), len(ids))
    vectors = np.concatenate(parts) if parts else np.zeros((0, embedder.dimension), dtype=np.float32)
    rows = {t: np.asarray(r, dtype=np.int64) for t, r in _type_rows(ids, types).items()}
    return NodeIndex(embedder.model_id, ids, vectors, rows)


def index_status(kb: KnowledgeBase, embedder: Embedder) -> IndexStatus:
    """Progress of the on-disk index: no ``record`` for in-memory KBs or before any build, ``damaged``
    when its ``progress.json`` is unreadable."""
    root = kb.artifacts_dir("embeddings")
    if root is None or not (root / embedder.model_id).is_dir():
        return IndexStatus()
    return files.progress_status(root / embedder.model_id)


def index_supported(kb: KnowledgeBase) -> bool:
    """Whether ``kb`` can have a node index (local stores; not remote SPARQL endpoints)."""
    return kb.can_scan()


def built_index(kb: KnowledgeBase, embedder: Embedder, *, warn: Warn | None = None) -> NodeIndex | None:
    """The node index of ``kb`` for ``embedder`` when it needs no embedding now: finished on disk (loaded,
    checked; a damaged one is repaired as :func:`load_index` does), or an in-memory KB's (built in this
    process: small).  ``None`` for a remote KB and for an on-disk KB whose index was never built or is
    unfinished: stage 3 then embeds only the SPARQL candidates, and ``sparqlqa index`` (or a ``vss``
    question) builds or resumes the index."""
    if not index_supported(kb) or (kb.directory is not None and not index_at_hand(kb, embedder)):
        return None
    return load_index(kb, embedder, warn=warn)


def index_at_hand(kb: KnowledgeBase, embedder: Embedder) -> bool:
    """Whether the on-disk index of ``kb`` for ``embedder`` costs no long build now: finished, damaged (so it
    is repaired on load rather than left unbuilt), or the KB has at most :data:`INDEX_ON_FIRST_USE` nodes."""
    status = index_status(kb, embedder)
    if status.damaged is not None or (status.record is not None and status.record.complete):
        return True
    return 0 < int(kb.manifest.counts.get("nodes", 0)) <= INDEX_ON_FIRST_USE


def load_index(kb: KnowledgeBase, embedder: Embedder, *, progress: Progress | None = None,
               warn: Warn | None = None, rebuild: bool = False) -> NodeIndex:
    """The node index of ``kb`` for ``embedder``: from this process, from disk, or built now
    (``warn``, ``rebuild``: as in :func:`build_index`)."""
    if not index_supported(kb):
        raise ConfigError(f"knowledge base {kb.name!r} is a remote endpoint: it has no node index",
                          hint="use --strategy 4step or offline (they embed only the SPARQL candidates)")
    if kb.directory is None:
        return kb.remember(("node index", embedder.model_id), lambda: _build_in_memory(kb, embedder, progress),
                           rebuild=rebuild)
    return kb.remember(("node index", embedder.model_id),
                       lambda: build_index(kb, embedder, progress=progress, warn=warn, rebuild=rebuild),
                       rebuild=rebuild)


@dataclass
class IndexSummary:
    """What :func:`ensure_index` found and did (``supported`` False: a remote KB, nothing else set)."""

    kb: str
    supported: bool = True
    embedder: str = ""
    nodes: int = 0
    dimension: int = 0
    types: int = 0
    resumed: bool = False
    already_built: bool = False
    rebuilt: bool = False
    warnings: list[str] = field(default_factory=list)
    folder: str | None = None
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        if not self.supported:
            return {"kb": self.kb, "supported": False}
        return {k: v for k, v in self.__dict__.items() if k != "supported"}


def ensure_index(kb: KnowledgeBase, embedder: Embedder, *, progress: Progress | None = None,
                 warn: Warn | None = None, rebuild: bool = False,
                 starting: Callable[[str], None] | None = None) -> IndexSummary:
    """Build, resume or load the node index of ``kb`` for ``embedder`` — index on demand, for every caller
    (CLI, Python API, serve, MCP).  ``starting("building" | "resuming" | "rebuilding")`` is called before
    work that takes time; a damaged index is rebuilt after ``warn``; remote KBs have no index."""
    import time

    if not index_supported(kb):
        return IndexSummary(kb=kb.name, supported=False)
    started = time.perf_counter()
    before = IndexStatus() if rebuild else index_status(kb, embedder)
    built = before.record is not None and before.record.complete
    if starting is not None and not (built or before.damaged):
        starting("rebuilding" if rebuild else "resuming" if before.record is not None else "building")
    warnings: list[str] = []

    def warned(text: str) -> None:
        warnings.append(text)
        if warn is not None:
            warn(text)

    index = load_index(kb, embedder, progress=progress, warn=warned, rebuild=rebuild)
    folder = kb.artifacts_dir("embeddings")
    return IndexSummary(
        kb=kb.name, embedder=embedder.model_id, nodes=len(index),
        dimension=int(index.vectors.shape[1]) if len(index) else embedder.dimension, types=len(index.type_rows),
        resumed=before.record is not None and not built,
        already_built=built and not warnings, rebuilt=rebuild or bool(warnings),
        warnings=warnings, folder=str(folder / embedder.model_id) if folder else None,
        seconds=round(time.perf_counter() - started, 2))


@contextmanager
def _one_torch_thread() -> Iterator[None]:
    """Run a single short encode on one torch thread.

    Measured with all-MiniLM-L6-v2 on a busy 2-core machine: one thread 9.5 ms median
    (26 ms max) per question, two threads 24 ms median with 300-500 ms spikes (threads
    waiting on each other).  Batches (index builds) keep torch's default.
    """
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def embed_query(embedder: Embedder, text: str) -> np.ndarray:
    """The unit vector of a question (remembered by the embedder: :meth:`Embedder.embed_cached`)."""
    with _one_torch_thread():
        return embedder.embed_cached([text])[0]
