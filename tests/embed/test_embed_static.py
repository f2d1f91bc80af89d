"""The ``static`` embedder: distilled offline (once per session, from a tiny BERT), its table read back the
way model2vec reads it, the registry and CLI wiring, and the errors a user can meet."""

from __future__ import annotations

import shutil
import socket
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from static_table import VOCAB, WORDS, install_tiny_table

import sparqlqa.embed.static as static_mod
from sparqlqa.embed.embedders import embedders, get_embedder
from sparqlqa.embed.static import StaticEmbedder, ensure_static_model, static_cache_dir
from sparqlqa.errors import ConfigError, MissingExtraError

HIDDEN = 32


def _tiny_bert(folder: Path) -> Path:
    """A randomly initialised one-layer BERT over the test vocabulary, saved as a local model folder."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder.mkdir(parents=True)
    (folder / "vocab.txt").write_text("\n".join(VOCAB) + "\n", "utf-8")
    BertTokenizerFast(vocab_file=str(folder / "vocab.txt")).save_pretrained(folder)
    config = BertConfig(vocab_size=len(VOCAB), hidden_size=HIDDEN, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=37, max_position_embeddings=64)
    BertModel(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def distilled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the tiny model's folder, its distilled table's folder): distilled once, with no network at all."""
    pytest.importorskip("model2vec")
    pytest.importorskip("transformers")
    source = _tiny_bert(tmp_path_factory.mktemp("tiny") / "tiny-bert")
    home = tmp_path_factory.mktemp("static-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SPARQLQA_HOME", str(home))

        def refuse(*args: Any, **kwargs: Any) -> None:
            raise AssertionError(f"network access during distillation: {args}")

        patch.setattr(socket.socket, "connect", refuse)
        patch.setattr(socket, "create_connection", refuse)
        table = ensure_static_model(str(source))
    return source, table


def test_distils_offline_into_the_cache_atomically(distilled: tuple[Path, Path]) -> None:
    _source, table = distilled
    assert "tiny-bert" in table.name and table.name.endswith("-pca256-v1")
    assert {"model.safetensors", "tokenizer.json"} <= {p.name for p in table.iterdir()}
    assert not [p for p in table.parent.iterdir() if p.name.startswith(".")]  # no temporary folder left
    from safetensors.numpy import load_file

    vectors = load_file(str(table / "model.safetensors"))["embeddings"]
    assert vectors.shape[1] == HIDDEN  # PCA keeps at most the model's own width


def test_distilled_table_embeds_like_model2vec(distilled: tuple[Path, Path], sparqlqa_home: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from model2vec import StaticModel

    source, table = distilled
    shutil.copytree(table, static_cache_dir(str(source)))
    monkeypatch.setattr(static_mod, "_distill", lambda *a: pytest.fail("distilled again despite the cache"))
    embedder = StaticEmbedder(str(source))
    texts = ["Alien directed by Ridley Scott", "green tea", "who acted in Top Hat", "xyzzy"]
    ours = embedder.embed(texts)
    theirs = StaticModel.from_pretrained(str(table), force_download=False).encode(texts, use_multiprocessing=False)
    theirs = np.asarray(theirs, dtype=np.float32)
    theirs /= np.maximum(np.linalg.norm(theirs, axis=1, keepdims=True), 1e-12)
    assert ours.shape == (4, HIDDEN) and embedder.dimension == HIDDEN
    assert np.allclose(ours, theirs, atol=1e-3)
    assert embedder.model_id == "static-tiny-bert"


def test_registered_by_name_and_reads_the_cached_table(sparqlqa_home: Path) -> None:
    install_tiny_table()
    assert "static" in embedders.names()
    embedder = get_embedder("static")
    assert isinstance(embedder, StaticEmbedder) and embedder.fast and embedder.spec == "static:all-MiniLM-L6-v2"
    vectors = embedder.embed(["green tea", "green tea", "light green tea", "Ridley Scott directed Alien", "qqq"])
    assert vectors.shape == (5, 16)
    assert np.allclose(np.linalg.norm(vectors[:4], axis=1), 1.0, atol=1e-5)
    assert float(vectors[0] @ vectors[1]) > 0.999
    assert float(vectors[0] @ vectors[2]) > float(vectors[0] @ vectors[3])  # shared words are nearer
    assert not vectors[4].any()  # nothing known in the text: a zero vector, not NaN


def test_fingerprint_names_the_table(sparqlqa_home: Path) -> None:
    install_tiny_table(seed=0)
    first = StaticEmbedder().fingerprint()
    install_tiny_table(seed=1)
    second = StaticEmbedder().fingerprint()
    assert first["embedder"] == second["embedder"] == "static-all-MiniLM-L6-v2"
    assert first["dimension"] == second["dimension"] == 16
    assert first["weights"] != second["weights"]


def test_mean_rows_matches_a_loop() -> None:
    table = np.random.default_rng(3).standard_normal((len(VOCAB), 8)).astype(np.float32)
    ids = [[4, 5, 5], [], [7], list(range(4, 4 + len(WORDS)))]
    expected = np.stack([table[row].mean(axis=0) if row else np.zeros(8, np.float32) for row in ids])
    assert np.allclose(static_mod.mean_rows(table, ids), expected, atol=1e-6)


def test_missing_extra_names_the_install_command(sparqlqa_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "model2vec", None)
    monkeypatch.setitem(sys.modules, "model2vec.distill", None)
    folder = sparqlqa_home / "some-model"
    folder.mkdir(parents=True)
    with pytest.raises(MissingExtraError) as caught:
        StaticEmbedder(str(folder)).embed(["green tea"])
    assert "pip install 'sparqlqa[embed]'" in caught.value.full_message()
    assert not static_cache_dir(str(folder)).exists()


def test_a_model_without_a_local_copy_is_a_clear_error(sparqlqa_home: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        StaticEmbedder("no-such-model").embed(["green tea"])
    assert "no local copy of 'no-such-model'" in str(caught.value)
    assert "--embedder static:FOLDER" in (caught.value.hint or "")


def test_cli_index_and_ask_with_the_static_embedder(movies_kb: Any, sparqlqa_home: Path) -> None:
    from faults.helpers import cli

    install_tiny_table()
    code, output = cli("index", "movies", "--embedder", "static", "--json")
    assert code == 0, output
    assert '"embedder": "static-all-MiniLM-L6-v2"' in output and '"dimension": 16' in output
    [folder] = sparqlqa_home.glob("kbs/movies/*/artifacts/embeddings/static-all-MiniLM-L6-v2")
    assert '"weights"' in (folder / "progress.json").read_text("utf-8")
    code, output = cli("ask", "movies", "who directed Alien", "--strategy", "vss", "--embedder", "static",
                       "--json")
    assert code == 0 and '"items"' in output, output


def test_question_words_are_read_by_the_teacher(movies_kb: Any, sparqlqa_home: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from sparqlqa.strategies.ask import ask

    assert StaticEmbedder().reader_spec == "onnx:all-MiniLM-L6-v2"
    assert StaticEmbedder("/models/mine").reader_spec == "sentence-transformers:/models/mine"
    install_tiny_table()
    monkeypatch.setattr(StaticEmbedder, "reader_spec", property(lambda self: "fake"))  # no ONNX export here
    answer = ask(movies_kb, "who directed Alien", strategy="offline", rerank="none", k=3, embedder="static")
    assert answer.meta.embedder == "static-all-MiniLM-L6-v2" and answer.meta.reader == "fake"
    assert answer.items
