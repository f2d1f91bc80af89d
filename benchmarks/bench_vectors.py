"""Vector-stage benchmark: embedding backends, and exact vs ANN search on a generated big KB.

One run measures, in the same process (so the ratios hold on a shared, loaded machine):

1. **Embedding**: the torch backend (``sentence-transformers:all-MiniLM-L6-v2``) against the ONNX one
   (``onnx``, and ``onnx-int8``) on the same node texts: nodes/s and the cosine of each text's vector
   with the torch one (min / mean).  Texts: the index texts of ``--kb`` (first ``--texts`` nodes), or
   generated MetaQA-like verbalisations when no KB is given.
2. **Search** on ``--nodes`` generated 384-d unit vectors: ``--clusters`` random centres plus
   Gaussian noise of the same norm (same-cluster cosine ≈ 0.5, as between related node texts);
   written to a memory-mapped ``vectors.npy``, as a finished index is.  Exact search (one mat-vec over
   the memory map) against the faiss HNSW graph of :mod:`sparqlqa.vectors.ann` (build time, query p50/p95,
   recall@20 against exact, with and without a type filter covering a third of the nodes).  The
   search runs in a fresh child process, whose peak RSS is reported.

Usage::

    SPARQLQA_HOME=/tmp/bench PYTHONPATH=. .venv/bin/python benchmarks/bench_vectors.py \\
        --nodes 1000000 --texts 512 [--kb pq2h] [--skip-embed] [--skip-search]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

DIM = 384
K = 20
EF_VALUES = (128, 256)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def generated_texts(n: int) -> list[str]:
    """MetaQA-like verbalisations of growing length (relations listed), deterministic."""
    rng = np.random.default_rng(0)
    words = ["Alien", "Ridley", "Scott", "Sigourney", "Weaver", "drama", "thriller", "English", "1979",
             "Gladiator", "Russell", "Crowe", "comedy", "French", "Paris", "written", "by", "starred"]
    texts = []
    for i in range(n):
        parts = [f"Film {i} (movie)"]
        for _ in range(int(rng.integers(1, 12))):
            parts.append(" ".join(rng.choice(words, size=int(rng.integers(3, 9)))))
        texts.append(". ".join(parts) + ".")
    return texts


def kb_texts(kb_name: str, n: int) -> list[str]:
    from sparqlqa.kb.knowledge_base import open_kb
    from sparqlqa.kb.node_text import node_texts
    from sparqlqa.vectors.index import index_nodes

    kb = open_kb(kb_name)
    ids = index_nodes(kb)[0][:n]
    texts = node_texts(kb, ids, mode="index")
    return [texts[i] for i in ids]


def bench_embedders(texts: list[str]) -> dict[str, Any]:
    from sparqlqa.embed.embedders import get_embedder

    out: dict[str, Any] = {"texts": len(texts), "load": load()}
    vectors = {}
    for spec in ("sentence-transformers:all-MiniLM-L6-v2", "onnx:all-MiniLM-L6-v2", "onnx-int8:all-MiniLM-L6-v2"):
        embedder = get_embedder(spec)
        started = time.perf_counter()
        embedder.embed(texts[:8])
        loaded = time.perf_counter() - started
        started = time.perf_counter()
        vectors[spec] = embedder.embed(texts)
        elapsed = time.perf_counter() - started
        out[spec] = {"first_call_s": round(loaded, 2), "nodes_per_s": round(len(texts) / elapsed, 1)}
        print(spec, out[spec], "load", load(), flush=True)
    base = vectors["sentence-transformers:all-MiniLM-L6-v2"]
    for spec, got in vectors.items():
        cosines = (got * base).sum(axis=1)
        out[spec].update(cos_min=round(float(cosines.min()), 5), cos_mean=round(float(cosines.mean()), 5))
    torch_rate = out["sentence-transformers:all-MiniLM-L6-v2"]["nodes_per_s"]
    for spec in vectors:
        out[spec]["speedup_vs_torch"] = round(out[spec]["nodes_per_s"] / torch_rate, 2)
    return out


def generate(path: Path, n: int, clusters: int, seed: int = 0) -> None:
    """``n`` clustered unit vectors into a memory-mapped .npy, 100k rows at a time."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, DIM)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, DIM))
    for start in range(0, n, 100_000):
        rows = min(100_000, n - start)
        block = centres[rng.integers(0, clusters, rows)]
        block += rng.standard_normal((rows, DIM)).astype(np.float32) / np.sqrt(DIM)
        out[start:start + rows] = block / np.linalg.norm(block, axis=1, keepdims=True)
    out.flush()


def rss_parts() -> dict[str, str]:
    """Resident memory now, split into anonymous (heap) and file-backed (page cache, reclaimable)."""
    status = Path("/proc/self/status").read_text()
    return {line.split(":")[0]: line.split(":")[1].strip() for line in status.splitlines()
            if line.startswith(("VmRSS", "RssAnon", "RssFile"))}


def timed(index: Any, queries: np.ndarray, kind: str | None, into: dict[str, Any], name: str) -> list[set[str]]:
    """Search each query, recording p50/p95 ms under ``name``; the sets of ids found."""
    times, found = [], []
    for query in queries:
        started = time.perf_counter()
        found.append({i for i, _ in index.search(query, K, type_iri=kind)})
        times.append((time.perf_counter() - started) * 1000)
    into[f"{name}_p50_ms"] = round(statistics.median(times), 2)
    into[f"{name}_p95_ms"] = round(sorted(times)[int(0.95 * len(times))], 2)
    return found


def search_child(folder: Path, queries: int) -> None:
    """In a fresh process: load the memory map and the graph, search, print figures as JSON."""
    import sparqlqa.vectors.ann as ann_mod
    from sparqlqa.vectors.ann import AnnIndex
    from sparqlqa.vectors.index import NodeIndex
    from sparqlqa.vectors.index_files import open_vectors

    vectors = open_vectors(folder / "vectors.npy", random_access=True)
    ids = [str(i) for i in range(len(vectors))]
    typed = {"T": np.arange(0, len(vectors), 3, dtype=np.int64)}
    exact = NodeIndex("bench", ids, vectors, typed)
    approx = NodeIndex("bench", ids, vectors, typed, AnnIndex.load(folder / "ann.index"))
    rng = np.random.default_rng(1)
    picks = np.asarray(vectors[np.sort(rng.choice(len(vectors), queries, replace=False))])
    picks = picks + rng.standard_normal(picks.shape).astype(np.float32) * 0.5 / np.sqrt(DIM)
    picks /= np.linalg.norm(picks, axis=1, keepdims=True)
    result: dict[str, Any] = {}
    found: dict[tuple[str, str], list[set[str]]] = {}
    for ef in EF_VALUES:  # the graph first, so the peak RSS below is the ANN search's own
        ann_mod.EF_SEARCH = ef
        for label, kind in (("all", None), ("typed_third", "T")):
            found[(label, f"ann_ef{ef}")] = timed(approx, picks, kind, result.setdefault(label, {}), f"ann_ef{ef}")
    result["peak_rss_mb_ann"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    result["rss_ann"] = rss_parts()
    for label, kind in (("all", None), ("typed_third", "T")):
        exact_found = timed(exact, picks, kind, result[label], "exact")
        for ef in EF_VALUES:
            pairs = zip(found[(label, f"ann_ef{ef}")], exact_found)
            result[label][f"ann_ef{ef}_recall_at_20"] = round(float(np.mean([len(a & b) / K for a, b in pairs])), 4)
    result["peak_rss_mb_with_exact"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    result["load"] = load()
    print(json.dumps(result))


def bench_search(nodes: int, clusters: int, queries: int, workdir: Path | None) -> dict[str, Any]:
    from sparqlqa.vectors.ann import AnnIndex

    with tempfile.TemporaryDirectory(prefix="bench-vectors-") as tmp:
        folder = workdir or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        out: dict[str, Any] = {"nodes": nodes, "clusters": clusters, "queries": queries}
        started = time.perf_counter()
        if not (folder / "vectors.npy").is_file():
            generate(folder / "vectors.npy", nodes, clusters)
            out["generate_s"] = round(time.perf_counter() - started, 1)
        started = time.perf_counter()
        if not (folder / "ann.index").is_file():
            AnnIndex.build(np.load(folder / "vectors.npy", mmap_mode="r")).save(folder / "ann.index")
            out["ann_build_s"] = round(time.perf_counter() - started, 1)
        out["build_load"] = load()
        out["ann_file_mb"] = round((folder / "ann.index").stat().st_size / 2**20, 1)
        print("built", out, flush=True)
        child = subprocess.run([sys.executable, __file__, "--child", str(folder), "--queries", str(queries)],
                               check=True, capture_output=True, text=True)
        out.update(json.loads(child.stdout.strip().splitlines()[-1]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--clusters", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--texts", type=int, default=512)
    parser.add_argument("--kb", help="embed this KB's node texts (default: generated texts)")
    parser.add_argument("--skip-embed", action="store_true")
    parser.add_argument("--skip-search", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--workdir", type=Path, help="keep (and reuse) the generated vectors and graph here")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        search_child(args.child, args.queries)
        return
    figures: dict[str, Any] = {"cpus": os.cpu_count(), "load_start": load()}
    if not args.skip_embed:
        texts = kb_texts(args.kb, args.texts) if args.kb else generated_texts(args.texts)
        figures["embed"] = bench_embedders(texts)
    if not args.skip_search:
        figures["search"] = bench_search(args.nodes, args.clusters, args.queries, args.workdir)
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), "utf-8")


if __name__ == "__main__":
    main()
