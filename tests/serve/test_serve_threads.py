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


def _stub_service() -> Any:
    from types import SimpleNamespace

    return SimpleNamespace(settings=SimpleNamespace(timeout_s=5.0), bounded_work=lambda work, deadline: work)


def test_the_endpoint_timeout_cap_reaches_the_api_worker_threads() -> None:
    """``serve`` caps endpoint queries in a ContextVar around the server: the thread pool must see it."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor
    from types import SimpleNamespace

    from sparqlqa.remote.endpoint import effective_timeout, timeout_override
    from sparqlqa.serve.app import blocking

    with ThreadPoolExecutor(max_workers=1) as executor:
        request: Any = SimpleNamespace(app=SimpleNamespace(state=SimpleNamespace(service=_stub_service(),
                                                                                 executor=executor)))
        with timeout_override(7, cap=True):
            seen = asyncio.run(blocking(request, lambda: effective_timeout(60.0)))
        assert seen == 7.0
        assert asyncio.run(blocking(request, lambda: effective_timeout(60.0))) == 60.0


def test_the_endpoint_timeout_cap_reaches_the_mcp_worker_threads() -> None:
    import pytest

    anyio = pytest.importorskip("anyio")
    pytest.importorskip("mcp")
    from sparqlqa.remote.endpoint import effective_timeout, timeout_override
    from sparqlqa.serve.mcp_server import _run

    with timeout_override(7, cap=True):
        assert anyio.run(_run, _stub_service(), lambda: effective_timeout(60.0)) == 7.0
