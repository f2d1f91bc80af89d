"""The static embedder against the ONNX MiniLM default: speed (nodes/s, a 1M-node index) and quality.

Sections (each prints one JSON line; ``--json`` collects them):

* ``embed``: index texts per second of ``onnx`` and ``static`` on the same texts, one after the other
  in this process: MetaQA's (``--kb metaqa``) and the synthetic 1M-node KB's (``--big-kb``); the ONNX
  figure on ``--onnx-texts`` of them (it is ~300× slower), the static one on all.
* ``quality``: on MetaQA dev (1/2/3-hop, ``--limit`` questions each, ``random.Random(seed).shuffle`` as
  ``bench_offline.py`` does, so the same samples as RESULTS.md's offline rows): vss Hit@1 / Hit@5
  (``ask(strategy="vss", k=5)``) and offline Hits@1 (``bench_offline.evaluate``): onnx, static (question
  words read by MiniLM, node texts by the table) and the static table alone.
* ``index`` (run first): ``build_index`` of the big KB with ``static`` from scratch (``--rebuild``), wall time split
  into listing nodes, reading labels/types/documents, building texts, embedding, joining the chunks and
  the ANN graph.

Usage (KBs ingested beforehand; the 1M-node KB from ``generate_graph.py --nodes 1000000 --edges 2000000``)::

    SPARQLQA_HOME=/tmp/sqa-static/home PYTHONPATH=. .venv/bin/python benchmarks/bench_static.py \\
        --kb metaqa --questions ../shared/data/metaqa --big-kb synth1m --sections embed,quality,index
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

EMBEDDERS = ("onnx:all-MiniLM-L6-v2", "static")
#: quality rows: (label, --embedder spec, whether the static table also reads the question's words)
QUALITY_RUNS = (("onnx", "onnx:all-MiniLM-L6-v2", False), ("static", "static", False),
                ("static, table alone", "static", True))


@contextmanager
def table_alone(on: bool) -> Iterator[None]:
    """The static table also reads question words against relations and labels (no MiniLM reader)."""
    from sparqlqa.embed.static import StaticEmbedder

    if not on:
        yield
        return
    saved = StaticEmbedder.reader_spec
    StaticEmbedder.reader_spec = property(lambda self: None)  # type: ignore[assignment, method-assign]
    try:
        yield
    finally:
        StaticEmbedder.reader_spec = saved  # type: ignore[method-assign]


def load_average() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def index_texts_of(kb_name: str, limit: int | None) -> list[str]:
    """The index texts of ``kb_name``'s nodes (all, or an evenly spread ``limit`` of them)."""
    from sparqlqa.kb.knowledge_base import open_kb
    from sparqlqa.kb.node_text import index_texts, scan_basics
    from sparqlqa.vectors.index import index_nodes

    kb = open_kb(kb_name)
    listed = sorted((kb.artifacts_dir("embeddings") or Path("-")).glob("*/ids.txt"))
    ids = listed[0].read_text("utf-8").split() if listed else index_nodes(kb)[0]  # an index lists them
    if limit is not None and limit < len(ids):
        ids = ids[:: len(ids) // limit][:limit]
    basics = scan_basics(kb, set(ids)) if len(ids) >= 20_000 else None
    texts = index_texts(kb, ids, basics=basics)
    return [texts[i] for i in ids]


def rate(spec: str, texts: list[str]) -> dict[str, Any]:
    """Texts per second of ``spec`` on ``texts`` (after loading the model on a few), in slices of 256."""
    from sparqlqa.embed.embedders import get_embedder

    embedder = get_embedder(spec)
    started = time.perf_counter()
    embedder.embed(texts[:8])
    loaded = time.perf_counter() - started
    started = time.perf_counter()
    for start in range(0, len(texts), 256):
        embedder.embed(texts[start:start + 256])
    seconds = time.perf_counter() - started
    return {"embedder": spec, "texts": len(texts), "seconds": round(seconds, 2),
            "nodes_per_s": round(len(texts) / seconds, 1), "first_call_s": round(loaded, 2), "load": load_average()}


def bench_embed(kbs: list[str], onnx_texts: int) -> list[dict[str, Any]]:
    rows = []
    for kb_name in kbs:
        texts = index_texts_of(kb_name, None if kb_name == "metaqa" else 100_000)
        sample = texts[:: max(1, len(texts) // onnx_texts)][:onnx_texts]
        for spec in EMBEDDERS:
            used = sample if spec.startswith("onnx") else texts
            rows.append({"kb": kb_name, "mean_chars": round(sum(map(len, used)) / len(used)), **rate(spec, used)})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def metaqa_items(folder: Path, hops: str, limit: int, seed: int) -> list[Any]:
    from bench_offline import load_metaqa

    items = load_metaqa(folder / hops / "qa_dev.txt")
    random.Random(seed).shuffle(items)
    return items[:limit]


def vss_hits(kb: Any, items: list[Any], spec: str) -> dict[str, Any]:
    from sparqlqa.kb.labels import normalize_label
    from sparqlqa.strategies.ask import ask

    hit1 = hit5 = 0
    for item in items:
        answer = ask(kb, item.question, strategy="vss", rerank="none", k=5, embedder=spec)
        gold = {normalize_label(a) for a in item.answers}
        labels = [normalize_label(i.label) for i in answer.items[:5]]
        hit1 += bool(labels[:1] and labels[0] in gold)
        hit5 += any(label in gold for label in labels)
    return {"vss_hit@1": round(hit1 / len(items), 3), "vss_hit@5": round(hit5 / len(items), 3)}


def bench_quality(kb_name: str, folder: Path, limit: int, seed: int) -> list[dict[str, Any]]:
    from bench_offline import evaluate

    from sparqlqa.kb.knowledge_base import open_kb

    kb = open_kb(kb_name)
    rows = []
    for label, spec, alone in QUALITY_RUNS:
        os.environ["SPARQLQA_EMBEDDER"] = spec  # bench_offline's ask() takes the default embedder
        for hops in ("1-hop", "2-hop", "3-hop"):
            items = metaqa_items(folder, hops, limit, seed)
            started = time.perf_counter()
            with table_alone(alone):
                offline = evaluate(kb, items, brackets=True, check_oracle=True)
                vss = vss_hits(kb, items, spec)
            row = {"embedder": label, "set": f"MetaQA {hops} dev", "n": len(items), **vss,
                   "offline_hits@1": offline["hits@1"], "offline_n_any": offline["n_any"],
                   "offline_hits@1_any": offline["hits@1_any"], "offline_p50_ms": offline["p50_ms"],
                   "seconds": round(time.perf_counter() - started, 1), "load": load_average()}
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


@contextmanager
def stage_clock() -> Iterator[dict[str, float]]:
    """Seconds spent in each stage of an index build (wrapping the functions that do them)."""
    import sparqlqa.vectors.index as index_mod
    from sparqlqa.embed.embedders import Embedder
    from sparqlqa.vectors import index_files
    from sparqlqa.vectors.ann import AnnIndex

    spent: dict[str, float] = defaultdict(float)

    def timed(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - started
        return run

    saved = [(index_mod, "index_nodes"), (index_mod, "scan_basics"), (index_mod, "index_texts"),
             (index_files, "join_arrays"), (index_files, "save_array")]
    originals = [(owner, name, getattr(owner, name)) for owner, name in saved]
    embed, build = Embedder.embed, AnnIndex.build.__func__  # type: ignore[attr-defined]
    for owner, name, function in originals:
        setattr(owner, name, timed(name, function))
    Embedder.embed = timed("embed", embed)  # type: ignore[method-assign]
    AnnIndex.build = classmethod(timed("ann_graph", build))  # type: ignore[method-assign, assignment]
    try:
        yield spent
    finally:
        for owner, name, function in originals:
            setattr(owner, name, function)
        Embedder.embed = embed  # type: ignore[method-assign]
        AnnIndex.build = classmethod(build)  # type: ignore[method-assign, assignment]


def bench_index(kb_name: str) -> dict[str, Any]:
    import resource

    from sparqlqa.embed.embedders import get_embedder
    from sparqlqa.kb.knowledge_base import open_kb
    from sparqlqa.vectors.index import build_index

    kb = open_kb(kb_name)
    embedder = get_embedder("static")
    embedder.embed(["warm up"])  # the table is loaded (distilled before): not part of the index time
    load_before = load_average()
    with stage_clock() as spent:
        started = time.perf_counter()
        index = build_index(kb, embedder, rebuild=True)
        wall = time.perf_counter() - started
    spent["texts (without scans)"] = spent.pop("index_texts", 0.0)
    row = {"kb": kb_name, "nodes": len(index), "wall_s": round(wall, 1),
           "nodes_per_s": round(len(index) / wall, 1), **{k: round(v, 1) for k, v in spent.items()},
           "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
           "load_before": load_before, "load_after": load_average(), "graph": index.ann is not None}
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kb", default="metaqa")
    parser.add_argument("--questions", type=Path, default=Path("../shared/data/metaqa"))
    parser.add_argument("--big-kb", default="synth1m")
    parser.add_argument("--sections", default="embed,quality,index")
    parser.add_argument("--onnx-texts", type=int, default=2000)
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    sections = args.sections.split(",")
    out: dict[str, Any] = {"started_load": load_average()}
    if "index" in sections:
        out["index"] = bench_index(args.big_kb)
    if "embed" in sections:
        out["embed"] = bench_embed([args.kb, args.big_kb], args.onnx_texts)
    if "quality" in sections:
        out["quality"] = bench_quality(args.kb, args.questions, args.limit, args.seed)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), "utf-8")


if __name__ == "__main__":
    main()
