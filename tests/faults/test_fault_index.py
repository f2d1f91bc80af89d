"""Fault suite, a damaged node index: ``sparqlqa ask`` after a disk filled, a copy broke or a stray edit.

The bundled movie sample (1,317 nodes) is ingested and indexed once; each case copies it, damages one
file of its node index (``artifacts/embeddings/fake/``) and asks again.  The index is derived data, so
every case must end with exit code 0, exactly one ``warning:`` line saying what was damaged and that it
is being rebuilt, no traceback, the same answers (IRIs and scores) as before the damage, the store's
triple count unchanged, and a healthy index (the next ask warns no more).  Where the rebuild cannot
write, the error is clean and names the folder.  In-process runs start with empty index caches, as
a new process does; two cases run the real CLI as a child process (one killed with SIGKILL).
"""

from __future__ import annotations

import errno
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sparqlqa.embed.embedders as embedders_mod
import sparqlqa.vectors.index as vectors_mod
from faults.helpers import CHILD_TIMEOUT, assert_clean_failure, child_env, cli, count, run_child
from sparqlqa.embed.embedders import FakeEmbedder
from sparqlqa.errors import NodeIndexError
from sparqlqa.ingest import ingest
from sparqlqa.samples import sample_path

QUESTION = "who directed the movies that Ginger Rogers acted in"
#: the sample's node count and the fake embedder's dimension
NODES, DIMENSION = 1317, 64
#: chunk size of the resumed-build cases (1,317 nodes: chunks 0-4 of 256 and one of 37)
CHUNK = 256


def _answers(output: str) -> list[tuple[str, float]]:
    """(IRI, score) of every answer in ``ask --json`` output (stderr follows the JSON document)."""
    data, _ = json.JSONDecoder().raw_decode(output[output.index("{"):])
    return [(item["iri"], item["score"]) for item in data["items"]]


def _fresh_process() -> None:
    """Forget every index this process holds, as a new ``sparqlqa`` process would."""
    embedders_mod._loaded_embedder.cache_clear()  # each CLI call opens its KB anew; the loaded models are per process


def _folder(home: Path) -> Path:
    [folder] = home.glob("kbs/movies/*/artifacts/embeddings/fake")
    return folder


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, list[tuple[str, float]]]:
    """The sample ingested and indexed: its home, triple count, and the answers to QUESTION."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SPARQLQA_HOME", str(home))
        patch.setenv("SPARQLQA_EMBEDDER", "fake")
        ingest([sample_path("movies")], kb="movies", format="triples", options={"sep": "|"})
        _fresh_process()
        assert cli("index", "movies")[0] == 0  # ask never builds it (issue 36): it repairs a finished one
        code, output = cli("ask", "movies", QUESTION, "--json")
        assert code == 0 and "warning" not in output, output
        return home, count("movies"), _answers(output)


@pytest.fixture
def home(template: tuple[Path, int, list[tuple[str, float]]], sparqlqa_home: Path) -> Iterator[Path]:
    import shutil

    shutil.copytree(template[0] / "kbs", sparqlqa_home / "kbs")
    _fresh_process()
    yield sparqlqa_home
    _fresh_process()


def _cut(path: Path, keep: int) -> None:
    path.write_bytes(path.read_bytes()[:keep])


def _save(path: Path, array: np.ndarray) -> None:
    with path.open("wb") as handle:
        np.save(handle, array)


def _drop_line(path: Path, number: int) -> None:
    lines = path.read_text("utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:number] + lines[number + 1:]), "utf-8")


def _repeat_line(path: Path, number: int) -> None:
    lines = path.read_text("utf-8").splitlines(keepends=True)
    path.write_text("".join([*lines[:number], lines[number - 1], *lines[number + 1:]]), "utf-8")


def _edit_json(path: Path, change: Callable[[Any], Any]) -> None:
    path.write_text(json.dumps(change(json.loads(path.read_text("utf-8")))), "utf-8")


#: a damage done to the finished index → the words the warning must contain
FINISHED: dict[str, tuple[Callable[[Path], None], str]] = {
    "vectors.npy cut to 100 bytes": (lambda f: _cut(f / "vectors.npy", 100),
                                     "vectors.npy is unreadable (EOF: reading array header"),
    "vectors.npy cut in half": (lambda f: _cut(f / "vectors.npy", 168_640),
                                "vectors.npy is truncated (168,640 of 337,280 bytes)"),
    "vectors.npy empty (disk full)": (lambda f: _cut(f / "vectors.npy", 0), "vectors.npy is empty (0 bytes)"),
    "vectors.npy deleted": (lambda f: (f / "vectors.npy").unlink(), "vectors.npy is missing"),
    "vectors.npy one row short": (lambda f: _save(f / "vectors.npy", np.load(f / "vectors.npy")[:-1]),
                                  f"vectors.npy has {NODES - 1:,} rows, expected {NODES:,}"),
    "vectors.npy other dimension": (lambda f: _save(f / "vectors.npy", np.load(f / "vectors.npy")[:, :32]),
                                    f"vectors.npy has 32 dimensions, the embedder gives {DIMENSION}"),
    "vectors.npy float64": (lambda f: _save(f / "vectors.npy", np.load(f / "vectors.npy").astype(np.float64)),
                            "vectors.npy holds a float64 array of shape (1317, 64), not rows of float32"),
    "vectors.npy transposed": (lambda f: _save(f / "vectors.npy", np.load(f / "vectors.npy").T.copy()),
                               f"vectors.npy has {DIMENSION} rows, expected {NODES:,}"),
    "ids.txt a line removed": (lambda f: _drop_line(f / "ids.txt", 700),
                               f"ids.txt lists {NODES - 1:,} nodes, progress.json says {NODES:,}"),
    "ids.txt a line repeated": (lambda f: _repeat_line(f / "ids.txt", 700), "ids.txt lists a node twice"),
    "ids.txt not UTF-8": (lambda f: (f / "ids.txt").write_bytes(b"\xff\xfe" * 900), "ids.txt is unreadable"),
    "types.json garbage": (lambda f: (f / "types.json").write_text("<html>oops</html>"),
                           "types.json is not readable JSON"),
    "types.json cut in half": (lambda f: _cut(f / "types.json", 6000), "types.json is not readable JSON"),
    "types.json row out of range": (lambda f: _edit_json(f / "types.json", lambda d: {k: [*v, NODES] for k, v in
                                                                                      d.items()}),
                                    f"lists rows outside 0..{NODES - 1}"),
    "progress.json garbage": (lambda f: (f / "progress.json").write_bytes(b"\x00\x01garbage"),
                              "progress.json is not readable JSON"),
    "progress.json count edited": (lambda f: _edit_json(f / "progress.json", lambda d: {**d, "count": "many"}),
                                   "progress.json has no valid 'count'"),
}


def _assert_recovered(code: int, output: str, template: tuple[Path, int, list[tuple[str, float]]],
                      *fragments: str) -> str:
    """Exit 0, no traceback, one warning line holding ``fragments``, the old answers and count; the line."""
    assert code == 0, output
    assert "Traceback" not in output, output
    warnings = [line for line in output.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, output
    for fragment in fragments:
        assert fragment in warnings[0], output
    assert _answers(output) == template[2]
    assert count("movies") == template[1]
    return warnings[0]


def _assert_healthy(home: Path, template: tuple[Path, int, list[tuple[str, float]]]) -> None:
    """The next ask (a new process) finds the index whole: no warning, same answers, no debris."""
    _fresh_process()
    code, output = cli("ask", "movies", QUESTION, "--json")
    assert code == 0 and "warning" not in output and _answers(output) == template[2], output
    assert sorted(p.name for p in _folder(home).iterdir()) == ["ids.txt", "progress.json", "types.json",
                                                                 "vectors.npy"]
    assert [p.name for p in _folder(home).parent.iterdir()] == ["fake"]  # no trash left


@pytest.mark.parametrize("case", list(FINISHED))
def test_a_damaged_finished_index_is_rebuilt(home: Path, template: Any, case: str) -> None:
    damage, words = FINISHED[case]
    damage(_folder(home))
    code, output = cli("ask", "movies", QUESTION, "--json")
    line = _assert_recovered(code, output, template, f"the node index of movies (fake) in {_folder(home)}",
                             words, "; rebuilding it")
    assert line.endswith("; rebuilding it"), line
    _assert_healthy(home, template)


def test_the_issue_reproduction_in_a_real_process(home: Path, template: Any) -> None:
    """``head -c 100 vectors.npy > x && mv x vectors.npy``, then ``sparqlqa ask`` as its own process."""
    _cut(_folder(home) / "vectors.npy", 100)
    code, output = run_child("ask", "movies", QUESTION, "--json")
    _assert_recovered(code, output, template, "vectors.npy is unreadable", "rebuilding it")
    _assert_healthy(home, template)


@pytest.fixture
def half_built(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``sparqlqa index movies`` killed (Ctrl-C) after 4 of its 6 chunks of 256 nodes: their folder."""
    import shutil

    folder = _folder(home)
    shutil.rmtree(folder)
    monkeypatch.setattr(vectors_mod, "CHUNK_SIZE", CHUNK)
    embed = FakeEmbedder._embed
    done: list[str] = []

    def dies_after_four_chunks(self: FakeEmbedder, texts: list[str], batch_size: int) -> np.ndarray:
        if len(done) >= 4 * CHUNK:
            raise KeyboardInterrupt("killed")
        done.extend(texts)
        return embed(self, texts, batch_size)

    with monkeypatch.context() as patch:
        patch.setattr(FakeEmbedder, "_embed", dies_after_four_chunks)
        code, output = cli("index", "movies")
    assert code == 130, output
    _fresh_process()
    assert sorted(p.name for p in folder.glob("chunk-*")) == [f"chunk-{n:05d}.npy" for n in range(4)]
    return folder


@pytest.mark.parametrize(("damage", "words"), [
    (lambda p: _cut(p, 60_000), "chunk-00003.npy is truncated (60,000 of 65,664 bytes)"),
    (lambda p: _save(p, np.zeros((10, DIMENSION), dtype=np.float32)), "chunk-00003.npy has 10 rows, expected 256"),
], ids=["truncated chunk", "chunk with 10 rows"])
def test_a_damaged_chunk_of_a_resumed_build_is_re_embedded(home: Path, half_built: Path, template: Any,
                                                            damage: Callable[[Path], None], words: str) -> None:
    damage(half_built / "chunk-00003.npy")
    code, output = cli("index", "movies")  # ask never resumes an unfinished build (issue 36); index does
    assert code == 0 and "Traceback" not in output, output
    [line] = [line for line in output.splitlines() if line.startswith("warning:")]
    assert words in line and line.endswith("; re-embedding its 256 nodes"), line
    assert "resuming the node index of movies" in output
    _assert_healthy(home, template)


def test_garbage_progress_of_a_half_built_index_restarts_the_build(half_built: Path, template: Any) -> None:
    (half_built / "progress.json").write_text("{\"format\": 1, \"chu", "utf-8")  # a write cut short
    code, output = cli("ask", "movies", QUESTION, "--json")
    _assert_recovered(code, output, template, "progress.json is not readable JSON", "; rebuilding it")
    assert not list(half_built.glob("chunk-*"))


@pytest.fixture
def with_graph(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The index with an ANN graph (the threshold lowered below the sample's 1,317 nodes)."""
    monkeypatch.setattr(vectors_mod, "ANN_THRESHOLD", 1000)
    code, output = cli("index", "movies", "--rebuild")
    assert code == 0, output
    _fresh_process()
    assert (_folder(home) / "ann-faiss.index").is_file()
    return _folder(home) / "ann-faiss.index"


@pytest.mark.parametrize(("damage", "words"), [
    (lambda p: _cut(p, p.stat().st_size // 2),
     "ann-faiss.index is unreadable ('ret == (size)' failed: read error in ann-faiss.index: "),
    (lambda p: p.write_text("garbage " * 100),
     "ann-faiss.index is unreadable (Index type 0x62726167 (\"garb\") not recognized)"),
], ids=["graph cut in half", "graph overwritten"])
def test_a_damaged_graph_is_rebuilt_alone(with_graph: Path, template: Any, damage: Callable[[Path], None],
                                          words: str) -> None:
    embedded: list[int] = []
    vectors = (with_graph.parent / "vectors.npy").stat().st_mtime_ns
    damage(with_graph)
    embed = FakeEmbedder._embed

    def counted(self: FakeEmbedder, texts: list[str], batch_size: int) -> np.ndarray:
        embedded.append(len(texts))
        return embed(self, texts, batch_size)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(FakeEmbedder, "_embed", counted)
        code, output = cli("ask", "movies", QUESTION, "--json")
    line = _assert_recovered(code, output, template, words)
    assert line.endswith("; rebuilding its search graph"), line
    assert max(embedded, default=0) < CHUNK  # the question and relation names: no node was re-embedded
    assert (with_graph.parent / "vectors.npy").stat().st_mtime_ns == vectors


@pytest.mark.parametrize("cause", ["not writable", "disk full"])
def test_a_rebuild_that_cannot_write_is_a_clean_error(home: Path, template: Any, cause: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _folder(home)
    _cut(folder / "vectors.npy", 100)
    with monkeypatch.context() as patch:
        if cause == "not writable":  # renaming the folder away needs a writable parent
            rename = Path.rename

            def refuse(self: Path, target: Any) -> Any:
                if self.parent.name == "embeddings":
                    raise PermissionError(errno.EACCES, "Permission denied", str(self))
                return rename(self, target)

            patch.setattr(Path, "rename", refuse)
        else:
            import sparqlqa.paths as paths

            def full(*args: Any, **kwargs: Any) -> Any:
                raise OSError(errno.ENOSPC, "No space left on device")

            patch.setattr(paths.tempfile, "mkstemp", full)
        code, output = cli("ask", "movies", QUESTION, "--json")
    reason = "Permission denied" if cause == "not writable" else "No space left on device"
    assert_clean_failure(code, output, NodeIndexError.exit_code, "the node index of movies is damaged "
                         "(vectors.npy is unreadable", "and cannot be rebuilt", reason, str(folder.parent),
                         "'sparqlqa index movies --rebuild'")
    assert count("movies") == template[1]
    _fresh_process()
    code, output = cli("index", "movies")  # writable again: repaired by the next run (a full disk left no
    assert code == 0 and "Traceback" not in output, output  # folder: ask would answer without it, issue 36)
    _assert_healthy(home, template)


def test_index_rebuild_builds_afresh(home: Path, template: Any) -> None:
    code, output = cli("index", "movies", "--rebuild", "--json")
    assert code == 0 and "Traceback" not in output, output
    summary, _ = json.JSONDecoder().raw_decode(output[output.index("{"):])
    assert summary["rebuilt"] is True and summary["already_built"] is False and summary["nodes"] == NODES
    assert "rebuilding the node index of movies (fake) from scratch" in output
    code, output = cli("index", "movies")
    assert code == 0 and "already built" in output, output
    _assert_healthy(home, template)


def test_index_rebuild_killed_after_discarding_is_repaired_by_the_next_run(home: Path, template: Any) -> None:
    """SIGKILL while the old index is being deleted (its deletion stalled): the next ``ask`` builds anew."""
    folder = _folder(home)
    stall = "import shutil, time; shutil.rmtree = lambda *a, **k: time.sleep(60)\n" \
            "from sparqlqa.cli import main; main()"
    child = subprocess.Popen([sys.executable, "-c", stall, "index", "movies", "--rebuild"], env=child_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + CHILD_TIMEOUT
        while folder.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        assert not folder.exists() and child.poll() is None, "the child never discarded the index"
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=CHILD_TIMEOUT)
    assert [p.name[:12] for p in folder.parent.iterdir()] == [".trash-fake-"]
    code, output = cli("ask", "movies", QUESTION, "--json")  # answers at once, without the index (issue 36)
    assert code == 0 and "Traceback" not in output and "warning" not in output, output
    assert "'sparqlqa index movies' builds it" in output and count("movies") == template[1]
    code, output = cli("index", "movies")
    assert code == 0 and "building the node index of movies (fake)" in output, output
    _assert_healthy(home, template)
