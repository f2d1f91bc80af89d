"""Embedder backends: the ONNX default against torch (real bundled model), offline failures, quiet loading."""

from __future__ import annotations

import socket
from pathlib import Path

import numpy as np
import pytest

from sparqlqa.embed.embedders import SentenceTransformerEmbedder, get_embedder, hub_reachable
from sparqlqa.errors import ConfigError

TEXTS = ["Alien (film). Alien directed by Ridley Scott. Sigourney Weaver starred actors Alien.",
         "green tea", "who is the mother of the director of Gladiator?",
         "Paris is the capital and most populous city of France. " * 40]  # past 256 tokens: truncated


@pytest.fixture(scope="module")
def onnx_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One $SPARQLQA_HOME for the module, so the ONNX export happens once."""
    return tmp_path_factory.mktemp("onnx-home")


def test_onnx_backend_matches_sentence_transformers(onnx_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("sentence_transformers")
    monkeypatch.setenv("SPARQLQA_HOME", str(onnx_home))
    fast = get_embedder("onnx:all-MiniLM-L6-v2").embed(TEXTS)
    torch = SentenceTransformerEmbedder().embed(TEXTS)
    assert fast.shape == torch.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)
    assert float((fast * torch).sum(axis=1).min()) >= 0.99
    assert (onnx_home / "models" / "onnx" / "all-MiniLM-L6-v2" / "model.onnx").is_file()
    assert get_embedder("onnx:all-MiniLM-L6-v2").model_id == "onnx-all-MiniLM-L6-v2"


def test_the_default_embedder_is_the_onnx_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPARQLQA_EMBEDDER")
    assert get_embedder().name == "onnx"


def test_onnx_refuses_models_it_has_no_copy_of(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="no local copy"):
        get_embedder("onnx:someone/other-model").embed(["x"])


def test_an_unknown_model_fails_at_once_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sentence_transformers")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("tried the network")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    assert hub_reachable() is False
    with pytest.raises(ConfigError, match="not in the local Hugging Face cache") as caught:
        SentenceTransformerEmbedder("no-such-owner/no-such-model-15").embed(["x"])
    assert "bundled default" in (caught.value.hint or "")


def test_a_gpu_device_needs_a_torch_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPARQLQA_DEVICE", raising=False)
    with pytest.raises(ConfigError, match="runs on the CPU only") as caught:
        get_embedder("fake", device="cuda")
    assert "sentence-transformers:all-MiniLM-L6-v2" in (caught.value.hint or "")
    assert get_embedder("fake", device="cpu").embed(["a b"]).shape == (1, 64)  # cpu is every embedder's device
    monkeypatch.setenv("SPARQLQA_DEVICE", "cuda:1")  # what --device sets
    with pytest.raises(ConfigError, match="'cuda:1'"):
        get_embedder("fake")
    assert get_embedder("sentence-transformers", device="cuda")._device == "cuda"  # type: ignore[attr-defined]


def test_cuda_without_a_gpu_fails_before_loading_the_model() -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(ConfigError, match="torch sees no CUDA GPU"):
        SentenceTransformerEmbedder(device="cuda").embed(["a text"])


def test_the_cli_device_option_reaches_the_embedder(movies_kb: object, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from sparqlqa.cli import main

    monkeypatch.setenv("SPARQLQA_DEVICE", "cpu")  # so the variable --device sets is restored afterwards
    result = CliRunner().invoke(main, ["index", "movies", "--embedder", "fake", "--device", "cuda"])
    assert result.exit_code == 2 and "runs on the CPU only" in result.output


def _tiny_graph(path: Path) -> Path:
    """A one-MatMul ONNX graph whose weights (64×64 float32) go to the external weights file."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    weights = numpy_helper.from_array(np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 4096, name="w")
    node = helper.make_node("MatMul", ["x", "w"], ["y"])
    graph = helper.make_graph([node], "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 64])], [weights])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def _run(session: object, x: np.ndarray) -> np.ndarray:
    return np.asarray(session.run(None, {"x": x})[0])  # type: ignore[attr-defined]


def test_the_optimised_graph_is_made_once_and_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("onnxruntime")
    from sparqlqa.embed import onnx as onnx_backend

    graph = _tiny_graph(tmp_path / "model.onnx")
    x = np.ones((2, 64), dtype=np.float32)
    expected = _run(onnx_backend.optimized_session(graph, 1), x)
    copy = tmp_path / "optimized-model"
    assert {p.name for p in copy.iterdir()} == {"model.onnx", "model.data", "source.json"}
    made: list[Path] = []
    monkeypatch.setattr(onnx_backend, "_optimize", lambda *args: made.append(args[0]))
    assert np.array_equal(_run(onnx_backend.optimized_session(graph, 1), x), expected)
    assert made == []  # loaded from the copy, not optimised again


def test_a_damaged_or_stale_optimised_graph_is_rebuilt(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("onnxruntime")
    import os

    from sparqlqa.embed.onnx import optimized_session

    graph = _tiny_graph(tmp_path / "model.onnx")
    x = np.ones((1, 64), dtype=np.float32)
    expected = _run(optimized_session(graph, 1), x)
    copy = tmp_path / "optimized-model"
    (copy / "model.onnx").write_bytes(b"not a graph")  # damaged: same stamp, unreadable graph
    with caplog.at_level("WARNING", logger="sparqlqa.embed.onnx"):
        assert np.array_equal(_run(optimized_session(graph, 1), x), expected)
    assert any("cannot be loaded" in r.getMessage() for r in caplog.records)
    assert (copy / "model.onnx").read_bytes() != b"not a graph"
    with open(copy / "model.data", "ab") as data:  # weights not those it wrote: not trusted, remade silently
        data.write(b"\0" * 16)
    caplog.clear()
    assert np.array_equal(_run(optimized_session(graph, 1), x), expected)
    assert caplog.records == []
    os.utime(graph, ns=(0, 0))  # the source graph changed: the copy is stale
    before = (copy / "source.json").read_text("utf-8")
    optimized_session(graph, 1)
    assert (copy / "source.json").read_text("utf-8") != before
