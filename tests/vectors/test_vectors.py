"""Node texts, the on-disk node index (resumable) and exact vector search."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sparqlqa.embed.embedders import FakeEmbedder, get_embedder
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.node_text import node_texts
from sparqlqa.kb.store import OxigraphStore
from sparqlqa.stages.ranking import query_text, rank_candidates, vector_search
from sparqlqa.vectors.index import (
    NodeIndex,
    build_index,
    embed_query,
    index_nodes,
    index_status,
    load_index,
)

EX = "https://example.org/movies/"


class CountingEmbedder(FakeEmbedder):
    """The fake embedder, counting the texts it embeds; ``fail_after`` simulates a kill."""

    name = "counting"

    def __init__(self, fail_after: int | None = None) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.fail_after = fail_after

    def _embed(self, texts: list[str], batch_size: int) -> np.ndarray:
        if self.fail_after is not None and len(self.texts) >= self.fail_after:
            raise KeyboardInterrupt("killed")
        self.texts.extend(texts)
        return super()._embed(texts, batch_size)


@pytest.fixture
def triples_kb(tmp_path: Path) -> KnowledgeBase:
    """A MetaQA-like KB without any text: names and relations only."""
    from sparqlqa.ingest import ingest

    source = tmp_path / "kb.txt"
    source.write_text("Alien|directed_by|Ridley Scott\nAlien|starred_actors|Sigourney Weaver\n"
                      "Gladiator|directed_by|Ridley Scott\nAvatar|directed_by|James Cameron\n", "utf-8")
    return ingest([source], kb="tiny", format="triples", options={"sep": "|"})


def test_text_less_nodes_are_verbalised_from_their_relations(triples_kb: KnowledgeBase) -> None:
    base = triples_kb.manifest.base_iri
    alien, scott = f"{base}entity/Alien", f"{base}entity/Ridley%20Scott"
    texts = node_texts(triples_kb, [alien, scott])
    assert texts[alien].startswith("Alien")
    assert "Alien directed by Ridley Scott" in texts[alien]
    assert "starred actors Sigourney Weaver" in texts[alien]
    assert "Alien, Gladiator directed by Ridley Scott" in texts[scott]  # incoming edges too


def test_nodes_with_text_use_their_document(movies_kb: KnowledgeBase) -> None:
    texts = node_texts(movies_kb, [f"{EX}alien"])
    assert "deadly creature aboard a spaceship" in texts[f"{EX}alien"]
    assert "directed by" not in texts[f"{EX}alien"]  # the document suffices for the index
    full = node_texts(movies_kb, [f"{EX}alien"], mode="full")[f"{EX}alien"]
    assert "Alien directed by Ridley Scott" in full and "spaceship" in full


def test_index_nodes_skips_classes_and_properties(movies_kb: KnowledgeBase) -> None:
    ids, types = index_nodes(movies_kb)
    assert f"{EX}alien" in ids and f"{EX}ridley_scott" in ids
    assert f"{EX}Movie" not in ids and f"{EX}rel/directed_by" not in ids
    assert types[f"{EX}alien"] == [f"{EX}Movie"]
    assert len(ids) == 19


def test_index_is_stored_next_to_the_kb_and_searchable(movies_kb: KnowledgeBase) -> None:
    embedder = get_embedder("fake")
    index = build_index(movies_kb, embedder, chunk_size=4)
    folder = movies_kb.artifacts_dir("embeddings") / embedder.model_id  # type: ignore[operator]
    assert (folder / "ids.txt").is_file() and (folder / "types.json").is_file()
    assert index_status(movies_kb, embedder).record.chunks == 5  # 19 nodes / 4 per chunk
    assert not list(folder.glob("chunk-*.npy"))  # joined into one memory-mapped file
    assert index_status(movies_kb, embedder).record.complete is True
    assert isinstance(index.vectors, np.memmap) and Path(str(index.vectors.filename)).samefile(folder / "vectors.npy")
    assert index.vectors.dtype == np.float32 and index.vectors.shape == (19, 64)
    query = embed_query(embedder, "Sigourney Weaver American actress")
    assert index.search(query, 1)[0][0] == f"{EX}sigourney_weaver"
    movies_only = index.search(query, 3, type_iri=f"{EX}Movie")
    assert {iri for iri, _ in movies_only} <= {f"{EX}{m}" for m in
                                                ("alien", "blade_runner", "gladiator", "avatar", "aliens",
                                                 "witness", "top_gun")}


def test_a_killed_build_resumes_without_redoing_finished_chunks(movies_kb: KnowledgeBase) -> None:
    first = CountingEmbedder(fail_after=8)  # dies while embedding the third chunk of 4
    with pytest.raises(KeyboardInterrupt):
        build_index(movies_kb, first, chunk_size=4)
    assert index_status(movies_kb, first).record.complete is False
    assert index_status(movies_kb, first).record.chunks_done == 2
    second = CountingEmbedder()
    resumed = build_index(movies_kb, second, chunk_size=4)
    assert len(second.texts) == 19 - 8  # only the unfinished chunks
    fresh = build_index(KnowledgeBase.in_memory("m", movies_kb.store), CountingEmbedder())
    assert resumed.ids == fresh.ids
    assert np.allclose(resumed.vectors, fresh.vectors)


def test_load_index_builds_once_then_reuses(movies_kb: KnowledgeBase) -> None:
    embedder = CountingEmbedder()
    load_index(movies_kb, embedder)
    load_index(movies_kb, embedder)
    assert len(embedder.texts) == 19
    assert load_index(movies_kb, embedder) is load_index(movies_kb, embedder)


def test_in_memory_kbs_keep_their_index_in_memory(movies_ttl: Path) -> None:
    store = OxigraphStore.in_memory()
    store.oxstore.load(path=str(movies_ttl))
    kb = KnowledgeBase.in_memory("mem", store)
    index = load_index(kb, get_embedder("fake"))
    assert kb.artifacts_dir("embeddings") is None
    assert f"{EX}alien" in index.row_of


def test_search_is_exact_deterministic_and_honours_exclusions() -> None:
    vectors = np.array([[1, 0], [0.6, 0.8], [0.6, 0.8], [0, 1]], dtype=np.float32)
    index = NodeIndex("m", ["a", "b", "c", "d"], vectors, {"T": np.array([1, 3])})
    query = np.array([1, 0], dtype=np.float32)
    assert [i for i, _ in index.search(query, 3)] == ["a", "b", "c"]  # tie b/c: lower row first
    assert [i for i, _ in index.search(query, 2, exclude=["a"])] == ["b", "c"]
    assert [i for i, _ in index.search(query, 5, type_iri="T")] == ["b", "d"]
    assert index.search(query, 2, type_iri="unknown") == []
    assert index.similarities(query, ["d", "zz"]) == {"d": 0.0}
    assert index.dominant_type(["b", "d"]) == "T" and index.dominant_type(["a"]) is None


def test_question_embeddings_are_cached_per_process() -> None:
    embedder = CountingEmbedder()
    first = embed_query(embedder, "who directed alien")
    second = embed_query(embedder, "who directed alien")
    assert np.array_equal(first, second) and len(embedder.texts) == 1


def test_filtered_candidates_stay_above_top_up(movies_kb: KnowledgeBase) -> None:
    from sparqlqa.stages.execute import Candidate, Candidates, Evidence

    items = [Candidate(f"{EX}gladiator", 0, 2, Evidence()), Candidate(f"{EX}witness", 1, 1, Evidence()),
             Candidate(f"{EX}alien", 0, 2, Evidence())]
    candidates = Candidates(target="?x", items=items)
    build_index(movies_kb, get_embedder("fake"))  # the top-up needs the built index
    ranking = rank_candidates(movies_kb, "spaceship creature film", candidates, k=6,
                              embedder=get_embedder("fake"), target_type=f"{EX}Movie")
    iris = [n.iri for n in ranking.items]
    assert iris[:3] == [f"{EX}alien", f"{EX}gladiator", f"{EX}witness"]  # tier 0 by similarity, then tier 1
    assert [n.source for n in ranking.items] == ["filtered"] * 3 + ["vector"] * 3
    assert ranking.added == 3 and len(set(iris)) == 6
    assert all(i.startswith(EX) and i[len(EX):] in ("avatar", "aliens", "blade_runner", "top_gun")
               for i in iris[3:])  # the top-up is restricted to the target type


@pytest.fixture
def big(monkeypatch: pytest.MonkeyPatch) -> None:
    """The movie fixture treated as a KB too big to index on first use (it has 19 nodes)."""
    import sparqlqa.vectors.index as vectors

    monkeypatch.setattr(vectors, "INDEX_ON_FIRST_USE", 0)


def test_unbuilt_index_ranks_the_candidates_alike_without_embedding_the_kb(movies_kb: KnowledgeBase,
                                                                          big: None) -> None:
    """Issue 36: before the node index is built, stage 3 embeds only the SPARQL candidates (no whole-KB
    embedding, nothing written), orders them exactly as the built index does, and says why there is no
    fill-in; once built, the same candidates come first in the same order with the same scores."""
    from sparqlqa.stages.execute import Candidate, Candidates, Evidence
    from sparqlqa.stages.ranking import unbuilt_note

    items = [Candidate(f"{EX}{name}", tier, 1, Evidence()) for name, tier in
             (("gladiator", 0), ("witness", 1), ("alien", 0), ("blade_runner", 0), ("aliens", 1))]
    candidates = Candidates(target="?x", items=items)
    embedder = CountingEmbedder()
    before = rank_candidates(movies_kb, "spaceship creature film", candidates, k=6, embedder=embedder)
    assert len(embedder.texts) == 1 + 5  # the question and the five candidates, not the KB's 19 nodes
    assert index_status(movies_kb, embedder).record is None  # no index started
    assert [n.source for n in before.items] == ["filtered"] * 5 and before.added == 0
    assert unbuilt_note(movies_kb, embedder) in before.notes and "sparqlqa index movies" in before.notes[-1]
    build_index(movies_kb, embedder)
    after = rank_candidates(movies_kb, "spaceship creature film", candidates, k=6, embedder=embedder)
    filtered = [(n.iri, n.tier, round(n.score, 6)) for n in after.items if n.source == "filtered"]
    assert filtered == [(n.iri, n.tier, round(n.score, 6)) for n in before.items]
    assert after.added == 1 and unbuilt_note(movies_kb, embedder) not in after.notes


def test_query_text_adds_requirements_and_vss_ranks_globally(movies_kb: KnowledgeBase) -> None:
    assert query_text("films", ["about space", "films"]) == "films. about space"
    ranking = vector_search(movies_kb, "Harrison Ford American actor", k=3, embedder=get_embedder("fake"))
    assert ranking.items[0].iri == f"{EX}harrison_ford" and len(ranking.items) == 3


@pytest.mark.parametrize("members", [5, 60, 100])
def test_typed_search_matches_brute_force(members: int) -> None:
    rng = np.random.default_rng(members)
    vectors = rng.normal(size=(100, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = np.sort(rng.choice(100, size=members, replace=False))
    index = NodeIndex("m", [f"n{i}" for i in range(100)], vectors, {"T": rows})
    query = vectors[int(rows[0])]
    expected = sorted(rows, key=lambda r: -float(vectors[r] @ query))[:4]
    assert [iri for iri, _ in index.search(query, 4, type_iri="T")] == [f"n{r}" for r in expected]


def test_progress_moves_within_a_chunk_and_rows_keep_their_order(movies_kb: KnowledgeBase,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Progress is reported per embedding slice, not per chunk (MetaQA's first line came after ~100 s);
    slicing by text length must not reorder the rows."""
    import sparqlqa.vectors.index as vectors

    monkeypatch.setattr(vectors, "PROGRESS_BATCH", 3)
    seen: list[tuple[int, int]] = []
    index = build_index(movies_kb, get_embedder("fake"), chunk_size=8,
                        progress=lambda done, total: seen.append((done, total)))
    assert (3, 19) in seen and (6, 19) in seen and (11, 19) in seen  # inside chunks 1 and 2, not only 8, 16, 19
    assert seen[-1] == (19, 19) and all(a[0] <= b[0] for a, b in itertools.pairwise(seen))
    fresh = build_index(KnowledgeBase.in_memory("m", movies_kb.store), get_embedder("fake"))
    assert index.ids == fresh.ids and np.allclose(index.vectors, fresh.vectors)


# --- a damaged index is rebuilt, not a crash ---------------------------------------------------------


def _folder(kb: KnowledgeBase, embedder: FakeEmbedder) -> Path:
    root = kb.artifacts_dir("embeddings")
    assert root is not None
    return root / embedder.model_id


def _cut(path: Path, keep: int) -> None:
    path.write_bytes(path.read_bytes()[:keep])


DAMAGE = {  # what is done to a finished index (movies: 19 nodes of 64 dimensions) → the warning's words
    "vectors header cut": (lambda f: _cut(f / "vectors.npy", 100), "vectors.npy is unreadable"),
    "vectors truncated": (lambda f: _cut(f / "vectors.npy", 2000), "vectors.npy is truncated (2,000 of 4,992 bytes)"),
    "vectors one row short": (lambda f: np.save(f / "vectors.npy", np.load(f / "vectors.npy")[:-1]),
                              "vectors.npy has 18 rows, expected 19"),
    "vectors other dimension": (lambda f: np.save(f / "vectors.npy", np.load(f / "vectors.npy")[:, :32]),
                                "vectors.npy has 32 dimensions, the embedder gives 64"),
    "ids line removed": (lambda f: (f / "ids.txt").write_text(
        "".join((f / "ids.txt").read_text().splitlines(keepends=True)[1:])), "ids.txt lists 18 nodes"),
    "types garbage": (lambda f: (f / "types.json").write_text("{not json"), "types.json is not readable JSON"),
    "types row out of range": (lambda f: (f / "types.json").write_text('{"urn:T": [3, 19]}'),
                               "types.json: <urn:T> lists rows outside 0..18"),
    "progress garbage": (lambda f: (f / "progress.json").write_bytes(b"\x00" * 40), "progress.json is not readable"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_finished_index_is_rebuilt_after_one_warning(movies_kb: KnowledgeBase, damage: str) -> None:
    embedder = CountingEmbedder()
    first = build_index(movies_kb, embedder, chunk_size=4)
    expected, query = np.array(first.vectors), embed_query(embedder, "Sigourney Weaver American actress")
    before = first.search(query, 5)
    del first
    harm, words = DAMAGE[damage]
    harm(_folder(movies_kb, embedder))
    warnings: list[str] = []
    again = CountingEmbedder()
    index = build_index(movies_kb, again, chunk_size=4, warn=warnings.append)
    assert len(warnings) == 1 and words in warnings[0] and warnings[0].endswith("; rebuilding it"), warnings
    assert f"the node index of movies (fake) in {_folder(movies_kb, embedder)} is damaged: " in warnings[0]
    assert len(again.texts) == 19  # derived data: embedded again, whole
    assert np.array_equal(np.asarray(index.vectors), expected) and index.search(query, 5) == before
    assert [p.name for p in _folder(movies_kb, embedder).parent.iterdir()] == ["fake"]  # no trash left
    quiet: list[str] = []
    build_index(movies_kb, CountingEmbedder(), chunk_size=4, warn=quiet.append)
    assert quiet == []  # healthy again


def test_without_a_warn_callback_the_warning_is_logged(movies_kb: KnowledgeBase,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    embedder = get_embedder("fake")
    build_index(movies_kb, embedder)
    _cut(_folder(movies_kb, embedder) / "vectors.npy", 100)  # the reproduction: `head -c 100`
    with caplog.at_level("WARNING", logger="sparqlqa.vectors.index"):
        index = build_index(movies_kb, embedder)
    assert len(index) == 19
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert "vectors.npy is unreadable (EOF: reading array header" in caplog.records[0].getMessage()


def _half_built(kb: KnowledgeBase) -> Path:
    """A build of 5 chunks of 4 nodes killed while embedding the fifth: chunks 0-3 are on disk."""
    with pytest.raises(KeyboardInterrupt):
        build_index(kb, CountingEmbedder(fail_after=16), chunk_size=4)
    folder = _folder(kb, CountingEmbedder())
    assert sorted(p.name for p in folder.glob("chunk-*")) == [f"chunk-0000{n}.npy" for n in range(4)]
    return folder


@pytest.mark.parametrize(("harm", "words"), [
    (lambda p: _cut(p, 150), "chunk-00003.npy is truncated (150 of 1,152 bytes)"),
    (lambda p: np.save(p, np.zeros((3, 64), dtype=np.float32)), "chunk-00003.npy has 3 rows, expected 4"),
    (lambda p: p.write_bytes(b""), "chunk-00003.npy is empty (0 bytes)"),
], ids=["truncated", "wrong rows", "empty"])
def test_a_damaged_chunk_of_a_resumed_build_is_re_embedded_alone(movies_kb: KnowledgeBase, harm: Any,
                                                                  words: str) -> None:
    harm(_half_built(movies_kb) / "chunk-00003.npy")
    warnings: list[str] = []
    resumed = CountingEmbedder()
    index = build_index(movies_kb, resumed, chunk_size=4, warn=warnings.append)
    assert len(warnings) == 1 and words in warnings[0] and warnings[0].endswith("re-embedding its 4 nodes")
    assert len(resumed.texts) == 4 + 3  # the damaged chunk 3, then chunk 4 (never done)
    fresh = build_index(KnowledgeBase.in_memory("m", movies_kb.store), CountingEmbedder())
    assert index.ids == fresh.ids and np.allclose(index.vectors, fresh.vectors)


def test_garbage_progress_of_a_half_built_index_restarts_it_cleanly(movies_kb: KnowledgeBase) -> None:
    folder = _half_built(movies_kb)
    (folder / "progress.json").write_text("garbage")
    warnings: list[str] = []
    again = CountingEmbedder()
    index = build_index(movies_kb, again, chunk_size=4, warn=warnings.append)
    assert len(warnings) == 1 and "progress.json is not readable JSON" in warnings[0]
    assert len(again.texts) == 19 and len(index) == 19
    assert sorted(p.name for p in folder.iterdir()) == ["ids.txt", "progress.json", "types.json", "vectors.npy"]


def test_a_damaged_graph_alone_is_rebuilt(movies_kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    import sparqlqa.vectors.index as vectors

    monkeypatch.setattr(vectors, "ANN_THRESHOLD", 10)
    first = build_index(movies_kb, CountingEmbedder(), chunk_size=4)
    query = embed_query(get_embedder("fake"), "alien spaceship")
    before = first.search(query, 5)
    graph = _folder(movies_kb, CountingEmbedder()) / "ann-faiss.index"
    _cut(graph, graph.stat().st_size // 2)
    warnings: list[str] = []
    again = CountingEmbedder()
    index = build_index(movies_kb, again, chunk_size=4, warn=warnings.append)
    assert len(warnings) == 1 and "ann-faiss.index is unreadable" in warnings[0]
    assert warnings[0].endswith("; rebuilding its search graph") and again.texts == []  # nothing re-embedded
    assert index.ann is not None and index.search(query, 5) == before


def test_rebuild_discards_the_index_first(movies_kb: KnowledgeBase) -> None:
    embedder = CountingEmbedder()
    load_index(movies_kb, embedder)
    again = CountingEmbedder()
    index = load_index(movies_kb, again, rebuild=True)
    assert len(again.texts) == 19 and len(index) == 19
    assert load_index(movies_kb, again) is index  # the rebuilt index replaces the process's copy


def test_a_kill_while_discarding_leaves_trash_the_next_run_removes(movies_kb: KnowledgeBase,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import sparqlqa.vectors.index_files as files

    build_index(movies_kb, CountingEmbedder())
    folder = _folder(movies_kb, CountingEmbedder())

    def killed(path: Any, ignore_errors: bool = False) -> None:
        raise KeyboardInterrupt("killed")

    monkeypatch.setattr(files.shutil, "rmtree", killed)
    with pytest.raises(KeyboardInterrupt):
        build_index(movies_kb, CountingEmbedder(), rebuild=True)
    assert not folder.exists() and [p.name[:12] for p in folder.parent.iterdir()] == [".trash-fake-"]
    monkeypatch.undo()
    again = CountingEmbedder()
    assert len(build_index(movies_kb, again)) == 19 and len(again.texts) == 19
    assert [p.name for p in folder.parent.iterdir()] == ["fake"]


def test_an_index_that_cannot_be_written_is_a_clean_error(movies_kb: KnowledgeBase,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    import sparqlqa.vectors.index_files as files
    from sparqlqa.errors import NodeIndexError

    folder = _half_built(movies_kb)
    _cut(folder / "chunk-00002.npy", 10)

    def full(path: Path, data: bytes, **_: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(files, "atomic_write_bytes", full)  # every chunk write fails, as on a full disk
    with pytest.raises(NodeIndexError) as caught:
        build_index(movies_kb, CountingEmbedder(), chunk_size=4, warn=lambda text: None)
    error = caught.value
    assert f"{folder}/chunk-00002.npy: No space left on device" in error.message
    assert "cannot be written" in error.message and "'sparqlqa index movies --rebuild'" in (error.hint or "")
    monkeypatch.undo()
    again = CountingEmbedder()
    assert len(build_index(movies_kb, again, chunk_size=4)) == 19 and len(again.texts) == 4 + 3  # resumed


def test_an_index_damaged_again_after_its_rebuild_is_a_clean_error(movies_kb: KnowledgeBase,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import sparqlqa.vectors.index as vectors
    from sparqlqa.errors import NodeIndexDamaged

    monkeypatch.setattr(vectors.files, "npy_problem", lambda path, rows, dimension: f"{path.name} is bad")
    warnings: list[str] = []
    with pytest.raises(NodeIndexDamaged, match=r"vectors\.npy is bad") as caught:
        build_index(movies_kb, CountingEmbedder(), chunk_size=4, warn=warnings.append)
    assert len(warnings) == 1 and "--rebuild" in (caught.value.hint or "")


def test_a_tiny_kb_is_indexed_on_first_use(movies_kb: KnowledgeBase) -> None:
    """Up to ``INDEX_ON_FIRST_USE`` nodes (a couple of seconds of embedding) the first question builds the index."""
    from sparqlqa.stages.execute import Candidate, Candidates, Evidence

    candidates = Candidates(target="?x", items=[Candidate(f"{EX}alien", 0, 1, Evidence())])
    ranking = rank_candidates(movies_kb, "spaceship creature film", candidates, k=3, embedder=get_embedder("fake"))
    assert ranking.added == 2 and index_status(movies_kb, get_embedder("fake")).record is not None


def test_cli_ask_answers_before_the_index_and_vss_builds_it(movies_kb: KnowledgeBase, runner: Any,
                                                            big: None) -> None:
    """Issue 36: the default ``ask`` on a fresh KB neither builds nor starts the node index, and its note names
    ``sparqlqa index``; ``--strategy vss`` (vectors alone) builds it first, as before; then ``ask`` tops up."""
    import json

    from sparqlqa.cli import main

    question = "who directed the movies that Harrison Ford acted in"
    first = runner.invoke(main, ["ask", "movies", question, "--json"])
    assert first.exit_code == 0, first.output
    assert "building the node index" not in first.output and "'sparqlqa index movies' builds it" in first.output
    assert index_status(movies_kb, get_embedder("fake")).record is None
    matched = [(i["iri"], i["score"]) for i in json.loads(first.stdout)["items"]]
    assert matched and all(i["source"] == "filtered" for i in json.loads(first.stdout)["items"])
    vss = runner.invoke(main, ["ask", "movies", question, "--strategy", "vss", "--json"])
    assert vss.exit_code == 0 and "building the node index of movies (fake)" in vss.output, vss.output
    again = json.loads(runner.invoke(main, ["ask", "movies", question, "--json"]).stdout)["items"]
    assert [(i["iri"], i["score"]) for i in again if i["source"] == "filtered"] == matched
    assert any(i["source"] == "vector" for i in again)  # the fill-in, now that the index is built


def test_ingest_index_builds_the_index_at_ingest(runner: Any, movies_ttl: Path) -> None:
    from sparqlqa.cli import main
    from sparqlqa.kb.knowledge_base import open_kb

    result = runner.invoke(main, ["ingest", str(movies_ttl), "--kb", "m", "--index"])
    assert result.exit_code == 0 and "building the node index of m (fake)" in result.output, result.output
    with open_kb("m") as kb:
        record = index_status(kb, get_embedder("fake")).record
    assert record is not None and record.complete and record.count == 19
