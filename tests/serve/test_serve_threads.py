"""Per-process caches a served process shares between request threads."""

from __future__ import annotations

from typing import Any

import numpy as np

from sparqlqa.embed.embedders import FakeEmbedder
from sparqlqa.strategies.offline import scoring


class ClearingEmbedder(FakeEmbedder):
    """Clears the span-vector cache while embedding: what a concurrent request does when the cache is full."""

    def _embed(self, texts: list[str], batch_size: int) -> Any:
        scoring._VECTORS.clear()
        return super()._embed(texts, batch_size)


def test_span_vectors_survive_a_concurrent_clear() -> None:
    embedder = ClearingEmbedder()
    scoring.embed_cached(embedder, ["directed by"])           # cached
    vectors = scoring.embed_cached(embedder, ["directed by", "acted in"])  # one hit, one miss (clears the cache)
    assert vectors.shape == (2, embedder.dimension)
    assert np.allclose(vectors, FakeEmbedder().embed(["directed by", "acted in"]))
