"""Embedders: text → unit vectors, by name (``fake``, ``sentence-transformers``, ``onnx``, ``onnx-int8``,
``static``).

Pure text in, vectors out: nothing here knows about knowledge bases, so the KB layer
(label vectors for linking) and the vector index (:mod:`sparqlqa.vectors`) both build on it.
The names of the former module ``sparqlqa.embed`` (``get_embedder``, ``Embedder`` ...) are still
importable from here; they live in :mod:`sparqlqa.embed.embedders`.
"""

from __future__ import annotations

import importlib
from typing import Any

#: names re-exported from :mod:`sparqlqa.embed.embedders` (imported on first use)
EXPORTS = ("Embedder", "FakeEmbedder", "SentenceTransformerEmbedder", "embedders", "get_embedder", "check_device")


def __getattr__(name: str) -> Any:
    if name in EXPORTS:
        return getattr(importlib.import_module("sparqlqa.embed.embedders"), name)
    raise AttributeError(f"module 'sparqlqa.embed' has no attribute {name!r}")
