"""Short texts' vectors kept with a KB generation (vectors/text_vectors.py): read back instead of embedded
again, replaced when stale, rebuilt after a warning when damaged."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from sparqlqa.embed.embedders import FakeEmbedder
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.store import OxigraphStore
from sparqlqa.vectors.text_vectors import stored_text_vectors

TEXTS = ["directed by", "starred actors", "written by"]


class CountingEmbedder(FakeEmbedder):
    """The fake embedder, counting the texts it embeds."""

    def __init__(self, dimension: int = 64) -> None:
        super().__init__(dimension=dimension)
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        self.embedded += list(texts)
        return super().embed(texts, batch_size=batch_size)


def _files(kb: KnowledgeBase) -> Path:
    folder = kb.artifacts_dir("text-vectors")
    assert folder is not None
    return folder / "relations-fake"


def test_vectors_are_embedded_once_per_generation(movies_kb: KnowledgeBase) -> None:
    first = CountingEmbedder()
    vectors = stored_text_vectors(movies_kb, "relations", TEXTS, first)
    assert first.embedded == TEXTS
    again = CountingEmbedder()  # a new process: another embedder object, the same model
    read = stored_text_vectors(movies_kb, "relations", TEXTS, again)
    assert again.embedded == []
    assert isinstance(read, np.memmap)
    assert np.array_equal(read, vectors) and np.array_equal(vectors, FakeEmbedder().embed(TEXTS))


def test_other_texts_or_another_embedder_are_embedded_again(movies_kb: KnowledgeBase) -> None:
    stored_text_vectors(movies_kb, "relations", TEXTS, CountingEmbedder())
    changed = CountingEmbedder()
    vectors = stored_text_vectors(movies_kb, "relations", [*TEXTS, "produced by"], changed)
    assert changed.embedded == [*TEXTS, "produced by"] and vectors.shape == (4, 64)
    wider = CountingEmbedder(dimension=32)  # another fingerprint (model id and dimension)
    assert stored_text_vectors(movies_kb, "relations", TEXTS, wider).shape == (3, 32)
    assert wider.embedded == TEXTS


@pytest.mark.parametrize("damage", ["json", "npy"])
def test_damaged_vectors_are_rebuilt_after_a_warning(movies_kb: KnowledgeBase, damage: str,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    vectors = stored_text_vectors(movies_kb, "relations", TEXTS, CountingEmbedder())
    stem = _files(movies_kb)
    if damage == "json":
        stem.with_suffix(".json").write_text("{not json", "utf-8")
    else:
        data = stem.with_suffix(".npy").read_bytes()
        stem.with_suffix(".npy").write_bytes(data[: len(data) // 2])  # a cut-off write
    again = CountingEmbedder()
    with caplog.at_level("WARNING", logger="sparqlqa.vectors.text_vectors"):
        rebuilt = stored_text_vectors(movies_kb, "relations", TEXTS, again)
    assert again.embedded == TEXTS
    assert np.array_equal(rebuilt, vectors)
    assert any("damaged" in r.getMessage() and stem.name in r.getMessage() for r in caplog.records)
    healed = CountingEmbedder()
    stored_text_vectors(movies_kb, "relations", TEXTS, healed)
    assert healed.embedded == []  # stored whole again


def test_warn_callback_gets_the_line(movies_kb: KnowledgeBase) -> None:
    stored_text_vectors(movies_kb, "relations", TEXTS, CountingEmbedder())
    _files(movies_kb).with_suffix(".npy").write_bytes(b"\x93NUMPY garbage")
    lines: list[str] = []
    stored_text_vectors(movies_kb, "relations", TEXTS, CountingEmbedder(), warn=lines.append)
    assert len(lines) == 1 and "embedding them again" in lines[0]


def test_in_memory_kbs_embed_each_time() -> None:
    kb = KnowledgeBase.in_memory("demo", OxigraphStore.in_memory())
    embedder = CountingEmbedder()
    stored_text_vectors(kb, "relations", TEXTS, embedder)
    stored_text_vectors(kb, "relations", TEXTS, embedder)
    assert embedder.embedded == TEXTS * 2


def test_the_offline_strategy_reads_its_relation_vectors_from_the_generation(movies_kb: KnowledgeBase) -> None:
    from sparqlqa.kb.knowledge_base import open_kb
    from sparqlqa.strategies.offline.strategy import relation_vectors

    first = relation_vectors(movies_kb, CountingEmbedder())
    reopened = open_kb("movies")  # a new process would open it again
    try:
        counting = CountingEmbedder()
        again = relation_vectors(reopened, counting)
        assert counting.embedded == []
        relation = first.relations[0].iri
        assert np.array_equal(again.vectors(relation, "forward"), first.vectors(relation, "forward"))
    finally:
        reopened.close()
