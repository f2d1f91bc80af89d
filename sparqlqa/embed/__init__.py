"""Embedders: text → unit vectors, by name (``fake``, ``sentence-transformers``, ``onnx``, ``onnx-int8``,
``static``).

Pure text in, vectors out: nothing here knows about knowledge bases, so the KB layer
(label vectors for linking) and the vector index (:mod:`sparqlqa.vectors`) both build on it.
The package's public names (:data:`__all__`: ``get_embedder``, ``Embedder`` ...) live in
:mod:`sparqlqa.embed.embedders` and are imported on first use.
"""

from __future__ import annotations

__all__ = ["Embedder", "FakeEmbedder", "SentenceTransformerEmbedder", "check_device", "embedders", "get_embedder"]

from typing import Any

from sparqlqa.registry import lazy_attribute


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, dict.fromkeys(__all__, "sparqlqa.embed.embedders"), name)
