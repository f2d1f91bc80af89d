"""Embedding throughput of one embedder on one device over a file of node texts (issue 15, GPU figures).

Embeds the texts (one per line, e.g. a KB's index texts) through sparqlqa's own embedder classes —
the path `sparqlqa index --embedder ...` takes — at several batch sizes, and prints nodes/s per batch
size, the time of the first (model-loading) call, and the cosine agreement with reference vectors
(``--reference``: an ``.npy`` of the first rows embedded elsewhere, e.g. by the CPU ONNX default):

    PYTHONPATH=. python benchmarks/bench_embed_device.py --texts metaqa_texts.txt \\
        --embedder sentence-transformers:/path/to/all-MiniLM-L6-v2 --device cuda --batch 64,256,1024

    # write reference vectors here (CPU, default ONNX embedder) for a later --reference
    PYTHONPATH=. python benchmarks/bench_embed_device.py --texts metaqa_texts.txt --limit 2000 \\
        --write-reference ref.npy --batch 64

No GPU in CI or on the developers' machines: the CUDA figures in RESULTS.md come from the lent device machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from sparqlqa.embed.embedders import Embedder, embedders


def make_embedder(spec: str, device: str | None) -> Embedder:
    """The embedder for ``name[:model]``; ``device`` goes to embedders that take one (torch)."""
    name, _, model = spec.partition(":")
    cls = embedders.get(name)
    if device is not None:
        return cls(model or None, device=device)  # type: ignore[call-arg]
    return cls(model or None)  # type: ignore[call-arg]


def timed(embedder: Embedder, texts: list[str], batch_size: int) -> tuple[np.ndarray, float]:
    start = time.perf_counter()
    vectors = embedder.embed(texts, batch_size=batch_size)
    _synchronise()
    return vectors, time.perf_counter() - start


def _synchronise() -> None:
    try:
        import torch
    except ImportError:
        return
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def cosine_agreement(vectors: np.ndarray, reference: np.ndarray) -> dict[str, float]:
    rows = min(len(vectors), len(reference))
    cosines = np.sum(vectors[:rows] * reference[:rows], axis=1)
    return {"rows": rows, "min": round(float(cosines.min()), 5), "mean": round(float(cosines.mean()), 5)}


def run(args: argparse.Namespace) -> dict[str, object]:
    texts = Path(args.texts).read_text(encoding="utf-8").splitlines()[: args.limit]
    embedder = make_embedder(args.embedder, args.device)
    first_vectors, first_s = timed(embedder, texts[:64], 64)
    report: dict[str, object] = {"embedder": args.embedder, "device": args.device or "default", "texts": len(texts),
                                 "first_call_s": round(first_s, 3), "host": platform.node(), "runs": []}
    runs: list[dict[str, object]] = []
    vectors = first_vectors
    for batch_size in (int(b) for b in args.batch.split(",")):
        timed(embedder, texts[: min(len(texts), 4 * batch_size)], batch_size)  # warm this batch shape
        vectors, seconds = timed(embedder, texts, batch_size)
        runs.append({"batch": batch_size, "seconds": round(seconds, 3), "nodes_per_s": round(len(texts) / seconds, 1)})
        print(json.dumps(runs[-1]), flush=True)
    report["runs"] = runs
    if args.reference:
        report["cosine_vs_reference"] = cosine_agreement(vectors, np.load(args.reference))
    if args.write_reference:
        np.save(args.write_reference, vectors.astype(np.float32))
    report["load"] = os.getloadavg()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--texts", required=True, help="a file of texts, one per line")
    parser.add_argument("--embedder", default="onnx:all-MiniLM-L6-v2", help="name[:model] as in --embedder")
    parser.add_argument("--device", help="cuda, cpu, mps (torch embedders); default: the embedder's choice")
    parser.add_argument("--batch", default="64,256", help="comma-separated batch sizes")
    parser.add_argument("--limit", type=int, help="only the first N texts")
    parser.add_argument("--reference", help="an .npy of reference vectors for the first rows (cosine agreement)")
    parser.add_argument("--write-reference", help="save the last run's vectors to this .npy")
    print(json.dumps(run(parser.parse_args()), indent=1))


if __name__ == "__main__":
    main()
