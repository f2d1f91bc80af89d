"""Export benchmark: ``sparqlqa export`` against raw pyoxigraph ``Store.dump`` of the same KB, and memory
that stays flat as the KB grows.

A synthetic graph (``generate_graph.py``) is ingested once per size (100K, 1M, 3M triples by default);
then every measured export runs in a fresh child process (peak RSS = that run's own ``ru_maxrss``),
interleaved (raw, ours turtle, ours nt, ours nt --source-only, raw, ...) so machine noise hits all
alike.  The headline figures: ours/raw time ratio (median of per-repetition ratios), and peak RSS at
1M against 100K triples (a streaming export's memory does not grow with the KB).

Usage::

    .venv/bin/python benchmarks/bench_export.py            # 100K, 1M and 3M triples, 3 repetitions
    .venv/bin/python benchmarks/bench_export.py --quick    # ~60K triples, once
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from generate_graph import GraphSpec, write_graph  # noqa: E402

SIZES = {"100K": GraphSpec(nodes=1_600, edges=95_200), "1M": GraphSpec(nodes=16_000, edges=952_000),
         "3M": GraphSpec(nodes=48_000, edges=2_856_000)}
QUICK = {"60K": GraphSpec(nodes=2_000, edges=54_000)}
MODES = ("raw", "turtle", "nt", "nt-source-only")


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _rss_now_mb() -> dict[str, float]:
    """Resident memory now: ``anon`` (the heap: what an export that held the KB would grow) and ``file``
    (pages of mapped files, e.g. the store's, which the kernel may drop at any time)."""
    found: dict[str, float] = {}
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith(("RssAnon:", "RssFile:")):
                found[line.split(":")[0][3:].lower()] = int(line.split()[1]) / 1024
    return found


class RssSampler(threading.Thread):
    """The largest resident sets seen while the export runs (sampled every 20 ms): ``ru_maxrss`` alone
    would hide an export that stays below the peak the store's opening left."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.start_mb = _rss_now_mb()
        self.peak = dict(self.start_mb)
        self.done = threading.Event()

    def sample(self) -> None:
        for key, value in _rss_now_mb().items():
            self.peak[key] = max(self.peak[key], value)

    def run(self) -> None:
        while not self.done.wait(0.02):
            self.sample()


def child_main(mode: str, home: Path, out: Path) -> None:
    """One export of KB ``bench`` under ``home`` into ``out``; prints one JSON line."""
    os.environ["SPARQLQA_HOME"] = str(home)
    from pyoxigraph import DefaultGraph, RdfFormat

    from sparqlqa.kb.export import export_prefixes, ingest_additions, oxigraph_of, write_rdf
    from sparqlqa.kb.knowledge_base import open_kb
    from sparqlqa.paths import atomic_writer

    kb = open_kb("bench")
    store = oxigraph_of(kb)
    rss_base = _maxrss_mb()
    sampler = RssSampler()
    sampler.start()
    start = time.perf_counter()
    if mode == "raw":
        store.dump(str(out), RdfFormat.N_TRIPLES, from_graph=DefaultGraph())
        triples = len(store)
    else:
        fmt, source_only = mode.split("-")[0], mode.endswith("source-only")
        skip = ingest_additions(kb) if source_only else frozenset()
        with atomic_writer(out) as handle:
            triples = write_rdf(store, handle, fmt, prefixes=export_prefixes(kb.manifest.prefixes),
                                skip=skip).triples
    seconds = time.perf_counter() - start
    sampler.done.set()
    sampler.join()
    sampler.sample()
    print(json.dumps({"seconds": seconds, "triples": triples, "rss_base_mb": rss_base,
                      "rss_peak_mb": _maxrss_mb(), "rss_start_mb": sum(sampler.start_mb.values()),
                      "anon_growth_mb": sampler.peak["anon"] - sampler.start_mb["anon"],
                      "file_growth_mb": sampler.peak["file"] - sampler.start_mb["file"],
                      "file_mb": out.stat().st_size / 2**20}))


def run_child(mode: str, home: Path, tmp: Path) -> dict[str, Any]:
    out = tmp / f"export-{mode}.out"
    try:
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", mode,
                               "--home", str(home), "--out", str(out)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{mode} export failed:\n{done.stderr[-3000:]}")
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))
    finally:
        out.unlink(missing_ok=True)


def build_kb(spec: GraphSpec, tmp: Path) -> Path:
    """Generate the graph and ingest it as KB ``bench`` under a fresh home; returns the home."""
    home = Path(tempfile.mkdtemp(prefix="home-", dir=tmp))
    source = tmp / "graph.nt"
    stats = write_graph(spec, source)
    start = time.perf_counter()
    env = {**os.environ, "SPARQLQA_HOME": str(home), "SPARQLQA_EMBEDDER": "fake"}
    subprocess.run([sys.executable, "-m", "sparqlqa", "ingest", str(source), "--kb", "bench", "--format", "nt"],
                   check=True, env=env, capture_output=True)
    print(f"ingested {stats.triples:,} triples in {time.perf_counter() - start:.1f}s", flush=True)
    source.unlink()
    return home


def measure(label: str, spec: GraphSpec, reps: int, tmp: Path) -> dict[str, list[dict[str, Any]]]:
    home = build_kb(spec, tmp)
    runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    try:
        for rep in range(reps):
            for mode in MODES:
                result = run_child(mode, home, tmp)
                runs[mode].append(result)
                print(f"  {label} rep {rep + 1} {mode:<15} {result['seconds']:6.2f}s "
                      f"{result['triples'] / result['seconds']:>10,.0f} t/s peak RSS {result['rss_peak_mb']:5.0f} "
                      f"MiB (at start {result['rss_start_mb']:.0f}; growth during the export: heap "
                      f"{result['anon_growth_mb']:.1f}, mapped files {result['file_growth_mb']:.1f}) "
                      f"file {result['file_mb']:.0f} MiB", flush=True)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return runs


def summary(results: dict[str, dict[str, list[dict[str, Any]]]]) -> None:
    print(f"\n{'size':<6}{'mode':<16}{'median s':>9}{'triples/s':>12}{'peak RSS MiB':>14}{'heap +MiB':>11}"
          f"{'mapped +MiB':>13}{'ours/raw s':>12}")
    for label, runs in results.items():
        for mode in MODES:
            seconds = statistics.median(r["seconds"] for r in runs[mode])
            ratio = statistics.median(o["seconds"] / r["seconds"] for o, r in zip(runs[mode], runs["raw"], strict=True))
            triples = runs[mode][0]["triples"]
            print(f"{label:<6}{mode:<16}{seconds:>9.2f}{triples / seconds:>12,.0f}"
                  f"{statistics.median(r['rss_peak_mb'] for r in runs[mode]):>14.0f}"
                  f"{statistics.median(r['anon_growth_mb'] for r in runs[mode]):>11.1f}"
                  f"{statistics.median(r['file_growth_mb'] for r in runs[mode]):>13.1f}{ratio:>12.2f}")
    labels = list(results)
    if len(labels) > 1:
        small, large = labels[0], labels[-1]
        for mode in MODES:
            a = statistics.median(r["rss_peak_mb"] for r in results[small][mode])
            b = statistics.median(r["rss_peak_mb"] for r in results[large][mode])
            print(f"peak RSS {mode}: {large} {b:.0f} MiB vs {small} {a:.0f} MiB (x{b / a:.2f} for "
                  f"x{results[large][mode][0]['triples'] / results[small][mode][0]['triples']:.1f} triples)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--tmp", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--child")
    parser.add_argument("--home", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.child:
        child_main(args.child, args.home, args.out)
        return
    tmp = Path(tempfile.mkdtemp(prefix="bench-export-", dir=args.tmp))
    try:
        sizes = QUICK if args.quick else SIZES
        reps = 1 if args.quick else args.reps
        summary({label: measure(label, spec, reps, tmp) for label, spec in sizes.items()})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
