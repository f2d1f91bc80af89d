"""Step 3's machinery: node vectors, the on-disk index and its (exact or HNSW) search.

The names of the former module ``sparqlqa.vectors`` (``NodeIndex``, ``build_index``, ``load_index`` ...) are still
importable from here; they live in :mod:`sparqlqa.vectors.index`.
"""

from __future__ import annotations

import importlib
from typing import Any

#: names re-exported from :mod:`sparqlqa.vectors.index` (imported on first use)
EXPORTS = ('NodeIndex', 'build_index', 'load_index', 'index_status', 'index_supported', 'embed_query', 'index_nodes')


def __getattr__(name: str) -> Any:
    if name in EXPORTS:
        return getattr(importlib.import_module("sparqlqa.vectors.index"), name)
    raise AttributeError(f"module 'sparqlqa.vectors' has no attribute {name!r}")
