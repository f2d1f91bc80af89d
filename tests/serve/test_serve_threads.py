"""Caches a served process shares between request threads."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from sparqlqa.embed.embedders import FakeEmbedder


class ClearingEmbedder(FakeEmbedder):
    """Empties its own vector cache while embedding: what a concurrent request does when the cache is full."""

    def _embed(self, texts: list[str], batch_size: int) -> Any:
        self.vector_cache.put_many({f"filler {i}": np.zeros(self.dimension) for i in range(self.vector_cache.size)})
        return super()._embed(texts, batch_size)


def test_span_vectors_survive_a_concurrent_clear() -> None:
    embedder = ClearingEmbedder()
    embedder.vector_cache.size = 4
    embedder.embed_cached(["directed by"])                         # cached
    vectors = embedder.embed_cached(["directed by", "acted in"])  # one hit, one miss (evicts everything)
    assert vectors.shape == (2, embedder.dimension)
    assert np.allclose(vectors, FakeEmbedder().embed(["directed by", "acted in"]))


def test_many_threads_share_one_cache_without_losing_vectors() -> None:
    embedder = FakeEmbedder()
    embedder.vector_cache.size = 50
    texts = [f"span {i}" for i in range(200)]
    expected = FakeEmbedder().embed(texts)
    errors: list[BaseException] = []

    def worker(offset: int) -> None:
        try:
            for start in range(offset, 200, 7):
                chunk = texts[start:start + 5]
                assert np.allclose(embedder.embed_cached(chunk), expected[start:start + len(chunk)])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(7)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len(embedder.vector_cache._vectors) <= 50
