"""A tiny static embedder table written straight into the cache, so tests of the ``static`` wiring need no
distillation (no torch, no model): a WordPiece tokenizer over a few dozen words and a random table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

WORDS = ["alien", "ridley", "scott", "directed", "by", "green", "tea", "light", "film", "movie", "who",
         "ginger", "rogers", "fred", "astaire", "top", "hat", "starred", "actors", "person", "the", "of",
         "in", "acted", "movies", "that", "released", "year", "genre", "comedy", "drama", "music", "dance"]
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", *WORDS, "##s", "##ed"]
DIMENSION = 16


def write_tiny_table(folder: Path, *, seed: int = 0, dimension: int = DIMENSION) -> Path:
    """``model.safetensors`` (``embeddings``: one random row per token) and ``tokenizer.json`` in ``folder``."""
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import WordPiece

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer(WordPiece({token: i for i, token in enumerate(VOCAB)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.save(str(folder / "tokenizer.json"))
    table = np.random.default_rng(seed).standard_normal((len(VOCAB), dimension)).astype(np.float16)
    save_file({"embeddings": table}, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"model_type": "model2vec", "hidden_dim": dimension,
                                                    "normalize": True}), "utf-8")
    return folder


def install_tiny_table(*, seed: int = 0) -> Path:
    """The tiny table as the distilled copy of the bundled model in this test's ``$SPARQLQA_HOME``; the
    process forgets embedders it loaded (a new ``sparqlqa`` process would)."""
    import sparqlqa.embed.embedders as embedders_mod
    from sparqlqa.embed.static import DEFAULT_MODEL, static_cache_dir

    embedders_mod._loaded_embedder.cache_clear()
    return write_tiny_table(static_cache_dir(DEFAULT_MODEL), seed=seed)
