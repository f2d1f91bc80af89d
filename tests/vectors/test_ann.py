"""The memory-mapped index with an ANN graph: recall against exact search, filtered search, resume."""

from __future__ import annotations

import numpy as np
import pytest
from test_vectors import EX, CountingEmbedder

import sparqlqa.vectors.index as vectors_mod
from sparqlqa.embed.embedders import get_embedder
from sparqlqa.kb.knowledge_base import KnowledgeBase, open_kb
from sparqlqa.vectors.ann import AnnIndex
from sparqlqa.vectors.index import NodeIndex, build_index, embed_query, load_index


def clustered(n: int, dim: int = 32, clusters: int = 50, seed: int = 0) -> np.ndarray:
    """Unit vectors around ``clusters`` random centres (like embeddings: neighbours are close)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dim))
    points = centres[rng.integers(0, clusters, n)] + 0.5 * rng.standard_normal((n, dim))
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    return points.astype(np.float32)


def recall(approx: list[tuple[str, float]], exact: list[tuple[str, float]]) -> float:
    return len({i for i, _ in approx} & {i for i, _ in exact}) / len(exact)


def test_ann_search_agrees_with_exact_search(monkeypatch: pytest.MonkeyPatch) -> None:
    vectors = clustered(4000)
    ids = [f"n{row:05d}" for row in range(len(vectors))]
    half = np.arange(0, len(vectors), 2, dtype=np.int64)
    exact = NodeIndex("m", ids, vectors, {"T": half})
    approx = NodeIndex("m", ids, vectors, {"T": half}, AnnIndex.build(vectors, threads=1))
    monkeypatch.setattr(vectors_mod, "EXACT_TYPE_ROWS", 0)  # the type filter goes through the graph too
    queries = clustered(30, seed=1)
    plain = [recall(approx.search(q, 20), exact.search(q, 20)) for q in queries]
    typed = [recall(approx.search(q, 20, type_iri="T"), exact.search(q, 20, type_iri="T")) for q in queries]
    assert np.mean(plain) >= 0.95 and np.mean(typed) >= 0.95
    members = {ids[r] for r in half}
    assert all(iri in members for q in queries for iri, _ in approx.search(q, 20, type_iri="T"))
    top = approx.search(queries[0], 5, exclude=[exact.search(queries[0], 1)[0][0]])
    assert exact.search(queries[0], 1)[0][0] not in {i for i, _ in top}
    scores = [s for _, s in top]
    assert scores == sorted(scores, reverse=True)  # re-scored exactly, best first


def test_big_indexes_get_a_graph_on_disk(movies_kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors_mod, "ANN_THRESHOLD", 10)
    embedder = get_embedder("fake")
    index = build_index(movies_kb, embedder, chunk_size=4)
    folder = movies_kb.artifacts_dir("embeddings") / embedder.model_id  # type: ignore[operator]
    assert (folder / "ann-faiss.index").is_file() and index.ann is not None
    query = embed_query(embedder, "Sigourney Weaver American actress")
    assert index.search(query, 1)[0][0] == f"{EX}sigourney_weaver"


def test_a_finished_index_is_reloaded_not_re_embedded(movies_kb: KnowledgeBase) -> None:
    build_index(movies_kb, CountingEmbedder(), chunk_size=4)
    again = CountingEmbedder()
    index = build_index(movies_kb, again, chunk_size=4)
    assert again.texts == [] and len(index) == 19


def test_an_index_left_as_chunks_is_joined_on_load(movies_kb: KnowledgeBase) -> None:
    """A complete index of the previous layout (chunks, no vectors.npy), or a join killed midway."""
    embedder = CountingEmbedder()
    first = build_index(movies_kb, embedder, chunk_size=4)
    expected = np.array(first.vectors)
    folder = movies_kb.artifacts_dir("embeddings") / embedder.model_id  # type: ignore[operator]
    for number, start in enumerate(range(0, 19, 4)):
        np.save(folder / f"chunk-{number:05d}.npy", expected[start:start + 4])
    (folder / "vectors.npy").unlink()
    reloaded = load_index(open_kb("movies"), CountingEmbedder())  # a new opened KB reads the folder
    assert np.array_equal(np.asarray(reloaded.vectors), expected)
    assert not list(folder.glob("chunk-*.npy"))
