"""Step 3's machinery: node vectors, the on-disk index and its (exact or HNSW) search.

The package's public names (:data:`__all__`: ``NodeIndex``, ``build_index``, ``load_index`` ...) live in
:mod:`sparqlqa.vectors.index` and are imported on first use.
"""

from __future__ import annotations

__all__ = ["NodeIndex", "build_index", "embed_query", "index_nodes", "index_status", "index_supported", "load_index"]

from typing import Any

from sparqlqa.registry import lazy_attribute


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, dict.fromkeys(__all__, "sparqlqa.vectors.index"), name)
