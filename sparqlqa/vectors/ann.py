"""Approximate nearest-neighbour search for big node indexes: a faiss HNSW graph over int8 codes.

Chosen by measurement against usearch and hnswlib (benchmarks/RESULTS.md "Vectors"): faiss
builds fastest on 2 cores and filters by type inside the graph walk (an ``IDSelectorBitmap``),
so a type-restricted search needs no over-fetching.  The graph stores 8-bit scalar-quantised
codes (384 bytes a node), not the float vectors; the ``oversample × k`` candidates it returns are
re-scored exactly against the memory-mapped float vectors, which keeps recall at the exact
ranking's level and the search's memory at about a quarter of the vectors' size.

Used only above :data:`ANN_THRESHOLD` nodes; smaller KBs and SPARQL candidate sets stay exact.
"""

from __future__ import annotations

__all__ = ["ANN_THRESHOLD", "EF_SEARCH", "OVERSAMPLE", "AnnIndex"]

import os
from pathlib import Path
from typing import Any

import numpy as np

from sparqlqa.errors import MissingExtraError

#: node count from which an index gets an ANN graph
ANN_THRESHOLD = 200_000
#: graph links per node, candidates kept while building, and while searching
HNSW_M = 32
EF_CONSTRUCTION = 80
#: the cheaper graph of a fast embedder's index (``Embedder.fast``): about 3× quicker to build, recall@20
#: 0.98 against 1.00 (100,000 clustered 256-d vectors; benchmarks/RESULTS.md "Static embedder")
FAST_HNSW_M = 16
FAST_EF_CONSTRUCTION = 40
EF_SEARCH = 256
#: candidates fetched per wanted result, re-scored exactly
OVERSAMPLE = 4
ADD_BATCH = 65_536


def _faiss() -> Any:
    try:
        import faiss
    except ImportError as exc:
        raise MissingExtraError("faiss-cpu", "approximate search of big node indexes",
                                "pip install 'sparqlqa[embed]'") from exc
    return faiss


class AnnIndex:
    """A faiss HNSW index over int8 codes of unit vectors (inner product = cosine)."""

    def __init__(self, index: Any) -> None:
        self.index = index
        self._bitmaps: dict[str, np.ndarray] = {}

    @classmethod
    def build(cls, vectors: np.ndarray, *, threads: int | None = None, fast: bool = False) -> AnnIndex:
        """Index ``vectors`` (rows are unit vectors; may be a memory map, read in batches); ``fast``: the
        cheaper graph (:data:`FAST_HNSW_M`, :data:`FAST_EF_CONSTRUCTION`)."""
        faiss = _faiss()
        faiss.omp_set_num_threads(threads or os.cpu_count() or 1)
        index = faiss.IndexHNSWSQ(vectors.shape[1], faiss.ScalarQuantizer.QT_8bit, FAST_HNSW_M if fast else HNSW_M,
                                  faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = FAST_EF_CONSTRUCTION if fast else EF_CONSTRUCTION
        sample = vectors[:: max(1, len(vectors) // 100_000)]
        index.train(np.ascontiguousarray(sample, dtype=np.float32))
        for start in range(0, len(vectors), ADD_BATCH):
            index.add(np.ascontiguousarray(vectors[start:start + ADD_BATCH], dtype=np.float32))
        return cls(index)

    def save(self, path: Path) -> None:
        """Write atomically (a killed build leaves no half file)."""
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        _faiss().write_index(self.index, str(tmp))
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> AnnIndex:
        return cls(_faiss().read_index(str(path)))

    def _bitmap(self, allowed: np.ndarray, key: str) -> np.ndarray:
        """The rows ``allowed`` as faiss's bitmap (bit ``row`` set), cached per ``key``."""
        if key not in self._bitmaps:
            mask = np.zeros(self.index.ntotal, dtype=bool)
            mask[allowed] = True
            self._bitmaps[key] = np.packbits(mask, bitorder="little")
        return self._bitmaps[key]

    def candidates(self, query: np.ndarray, k: int, *, allowed: np.ndarray | None = None,
                   key: str = "") -> np.ndarray:
        """Rows of about the ``k`` nearest nodes (``allowed``: only these rows, cached as ``key``)."""
        faiss = _faiss()
        faiss.omp_set_num_threads(1)
        params = faiss.SearchParametersHNSW()
        params.efSearch = max(EF_SEARCH, k)
        if allowed is not None:
            bitmap = self._bitmap(allowed, key)
            params.sel = faiss.IDSelectorBitmap(self.index.ntotal, faiss.swig_ptr(bitmap))
        _, found = self.index.search(np.ascontiguousarray(query[None], dtype=np.float32), k, params=params)
        rows = found[0]
        return np.asarray(rows[rows >= 0], dtype=np.int64)
