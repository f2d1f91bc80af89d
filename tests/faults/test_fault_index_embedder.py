"""Fault suite, an index asked to serve another embedder than the one that built it.

A node index records its embedder's fingerprint (model id, dimension, and for the ``static`` embedder a
digest of its table).  Searching it with other vectors would rank by nonsense, so every case must end in
a clean error (exit 1, no traceback, ``{"error", "hint"}`` under ``--json``) whose hint is the
``index --rebuild`` command, the index left as it was; that command then works.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from static_table import install_tiny_table

import sparqlqa.embed.embedders as embedders_mod
from faults.helpers import assert_clean_failure, cli
from sparqlqa.errors import NodeIndexMismatch
from sparqlqa.vectors.index import NodeIndex

QUESTION = "who directed Alien"


def _folder(home: Path, model_id: str) -> Path:
    [folder] = home.glob(f"kbs/movies/*/artifacts/embeddings/{model_id}")
    return folder


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _fresh_process() -> None:
    """Forget loaded embedders, as a new ``sparqlqa`` process would (open KBs are reopened per command)."""
    embedders_mod._loaded_embedder.cache_clear()


@pytest.fixture
def static_index(movies_kb: Any, sparqlqa_home: Path) -> Path:
    """The movie fixture indexed with the static embedder (the tiny table, seed 0): its index folder."""
    install_tiny_table(seed=0)
    code, output = cli("index", "movies", "--embedder", "static")
    assert code == 0, output
    return _folder(sparqlqa_home, "static-all-MiniLM-L6-v2")


def test_a_redistilled_table_is_refused_with_the_rebuild_command(static_index: Path) -> None:
    before = _snapshot(static_index)
    install_tiny_table(seed=1)  # the cache was cleared and the model distilled again: other vectors
    code, output = cli("ask", "movies", QUESTION, "--strategy", "vss", "--embedder", "static")
    assert_clean_failure(code, output, 1, "does not fit the embedder static:all-MiniLM-L6-v2",
                         "the model was distilled again",
                         "sparqlqa index movies --embedder static:all-MiniLM-L6-v2 --rebuild")
    assert _snapshot(static_index) == before  # refused, not silently rebuilt
    _fresh_process()
    code, output = cli("index", "movies", "--embedder", "static")  # without --rebuild: the same refusal
    assert_clean_failure(code, output, 1, "--rebuild")
    code, output = cli("index", "movies", "--embedder", "static:all-MiniLM-L6-v2", "--rebuild")
    assert code == 0 and "Traceback" not in output, output
    code, output = cli("ask", "movies", QUESTION, "--strategy", "vss", "--embedder", "static", "--json")
    assert code == 0 and '"items"' in output, output
    assert _snapshot(static_index) != before


def test_the_refusal_is_json_under_json(static_index: Path) -> None:
    install_tiny_table(seed=2)
    code, output = cli("ask", "movies", QUESTION, "--strategy", "vss", "--embedder", "static", "--json")
    assert code == 1 and "Traceback" not in output, output
    data, _ = json.JSONDecoder().raw_decode(output[output.index("{"):])
    assert "distilled again" in data["error"] and "--rebuild" in data["hint"]


def test_an_index_of_another_model_in_the_folder_is_refused(movies_kb: Any, sparqlqa_home: Path) -> None:
    code, output = cli("index", "movies")  # the fake embedder (tests' default)
    assert code == 0, output
    progress = _folder(sparqlqa_home, "fake") / "progress.json"
    record = json.loads(progress.read_text("utf-8"))
    record["model_id"] = "onnx-all-MiniLM-L6-v2"  # e.g. copied over from another embedder's folder
    progress.write_text(json.dumps(record), "utf-8")
    code, output = cli("ask", "movies", QUESTION, "--strategy", "vss")
    assert_clean_failure(code, output, 1, "built with onnx-all-MiniLM-L6-v2", "not fake",
                         "sparqlqa index movies --embedder fake --rebuild")
    assert json.loads(progress.read_text("utf-8"))["model_id"] == "onnx-all-MiniLM-L6-v2"


def test_a_recorded_dimension_that_differs_is_refused(movies_kb: Any, sparqlqa_home: Path) -> None:
    code, output = cli("index", "movies")
    assert code == 0, output
    progress = _folder(sparqlqa_home, "fake") / "progress.json"
    record = json.loads(progress.read_text("utf-8"))
    assert record["embedder"] == {"embedder": "fake", "dimension": 64}
    record["dimension"] = record["embedder"]["dimension"] = 384
    progress.write_text(json.dumps(record), "utf-8")
    code, output = cli("index", "movies")
    assert_clean_failure(code, output, 1, "its vectors have 384 dimensions, fake now gives 64", "--rebuild")


def test_an_index_built_before_fingerprints_is_still_read(movies_kb: Any, sparqlqa_home: Path) -> None:
    code, output = cli("index", "movies")
    assert code == 0, output
    progress = _folder(sparqlqa_home, "fake") / "progress.json"
    record = json.loads(progress.read_text("utf-8"))
    del record["embedder"]  # the progress.json of an index built by an earlier version
    progress.write_text(json.dumps(record), "utf-8")
    code, output = cli("ask", "movies", QUESTION, "--strategy", "vss", "--json")
    assert code == 0 and "warning" not in output, output


def test_a_query_vector_of_another_embedder_is_refused() -> None:
    index = NodeIndex("onnx-all-MiniLM-L6-v2", ["urn:a", "urn:b"], np.eye(2, 384, dtype=np.float32))
    with pytest.raises(NodeIndexMismatch) as caught:
        index.search(np.ones(256, dtype=np.float32), 1)
    assert "256 dimensions, the index (onnx-all-MiniLM-L6-v2) 384" in str(caught.value)
    with pytest.raises(NodeIndexMismatch):
        index.similarities(np.ones(256, dtype=np.float32), ["urn:a"])
    assert index.search(np.eye(1, 384, dtype=np.float32)[0], 1)[0][0] == "urn:a"
