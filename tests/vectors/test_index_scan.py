"""A big build reads its nodes' labels, types and documents by one scan each (``scan_basics``): the texts,
and so the vectors, must be those of the per-chunk ``VALUES`` lookups, on a KB with documents (movies)
and one whose texts come from relations (delimited triples)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sparqlqa.vectors.index as index_mod
from sparqlqa.embed.embedders import FakeEmbedder
from sparqlqa.kb.node_text import index_texts, node_texts, scan_basics
from sparqlqa.samples import sample_path


@pytest.fixture(params=["movies-ttl", "movies-sample"])
def kb(request: pytest.FixtureRequest, movies_kb: Any) -> Any:
    if request.param == "movies-ttl":
        return movies_kb
    from sparqlqa.ingest import ingest

    return ingest([sample_path("movies")], kb="sample", format="triples", options={"sep": "|"})


def test_scanned_texts_equal_looked_up_texts(kb: Any) -> None:
    ids, _ = index_mod.index_nodes(kb)
    basics = scan_basics(kb, set(ids))
    assert index_texts(kb, ids, basics=basics) == node_texts(kb, ids, mode="index") == index_texts(kb, ids)
    assert set(basics.labels) <= set(ids)


def test_a_scanned_build_gives_the_same_vectors(kb: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    looked_up = index_mod.build_index(kb, FakeEmbedder(), chunk_size=256)
    vectors = np.array(looked_up.vectors)
    calls: list[int] = []
    real = index_mod.scan_basics

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(index_mod, "SCAN_FROM", 1)
    monkeypatch.setattr(index_mod, "scan_basics", counted)
    scanned = index_mod.build_index(kb, FakeEmbedder(), chunk_size=256, rebuild=True)
    assert calls == [1]  # one scan for the whole build, not one per chunk
    assert scanned.ids == looked_up.ids
    assert np.array_equal(np.asarray(scanned.vectors), vectors)


def test_a_windowed_build_gives_the_same_vectors(kb: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A KB bigger than one window is scanned once per window, each scan keeping only its window's nodes;
    the vectors are those of a one-window build, byte for byte."""
    total = len(index_mod.index_nodes(kb)[0])
    chunk = max(1, total // 10)  # about five windows of two chunks
    monkeypatch.setattr(index_mod, "SCAN_FROM", 1)
    one_window = index_mod.build_index(kb, FakeEmbedder(), chunk_size=chunk)
    vectors = np.array(one_window.vectors)
    kept: list[int] = []
    real = index_mod.scan_basics

    def counted(kb_: Any, keep: set[str], **kwargs: Any) -> Any:
        kept.append(len(keep))
        basics = real(kb_, keep, **kwargs)
        assert set(basics.labels) <= keep and set(basics.texts) <= keep  # only the window's nodes
        return basics

    monkeypatch.setattr(index_mod, "SCAN_WINDOW", 3 * chunk - 1)  # rounded down to two chunks
    monkeypatch.setattr(index_mod, "scan_basics", counted)
    windowed = index_mod.build_index(kb, FakeEmbedder(), chunk_size=chunk, rebuild=True)
    window = 2 * chunk
    assert total > 2 * window and kept == [min(window, total - start) for start in range(0, total, window)]
    assert windowed.ids == one_window.ids
    assert np.array_equal(np.asarray(windowed.vectors), vectors)
