"""Ingest benchmark: ``sparqlqa.ingest`` against raw pyoxigraph ``bulk_load`` of the same N-Triples.

Every measured run happens in a fresh child process (so peak RSS is that run's
own ``ru_maxrss``), in a scratch folder under ``--tmp`` that is deleted after it.
Runs are interleaved (raw, ours, delimited, raw, ours, ...) so machine noise
hits all of them alike; the headline figure is the median of the per-pair
ratios ours/raw.

Usage::

    .venv/bin/python benchmarks/bench_ingest.py            # 1M triples, 3 repetitions
    .venv/bin/python benchmarks/bench_ingest.py --quick    # ~60K triples, sanity check
    .venv/bin/python benchmarks/bench_ingest.py --big      # PRIME-sized graph (~8.4M triples), once
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
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from generate_graph import GraphSpec, GraphStats, write_graph  # noqa: E402

ONE_MILLION = GraphSpec(nodes=16_000, edges=952_000, types=10, relations=18)
QUICK = GraphSpec(nodes=2_000, edges=54_000, types=10, relations=18)
PRIME = GraphSpec(nodes=129_000, edges=8_000_000, types=10, relations=18)


# --------------------------------------------------------------------------- child side


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _timed(record: dict[str, float], key: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``func`` so each call adds its duration to ``record[key]``."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            record[key] = record.get(key, 0.0) + time.perf_counter() - start
            record[key + "_end"] = time.perf_counter()

    return wrapper


def child_raw(source: Path, work: Path) -> dict[str, Any]:
    """Raw ``Store(dir).bulk_load(path=...)``: the baseline."""
    from pyoxigraph import RdfFormat, Store

    rss_base = _maxrss_mb()
    start = time.perf_counter()
    store = Store(str(work / "raw"))
    store.bulk_load(path=str(source), format=RdfFormat.N_TRIPLES)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "store_triples": len(store), "rss_base_mb": rss_base}


def child_ours(source: Path, work: Path, fmt: str) -> dict[str, Any]:
    """``sparqlqa.ingest.ingest`` with load / schema / optimize timed by wrapping its stages."""
    os.environ["SPARQLQA_HOME"] = str(work / "home")
    import sparqlqa.ingest as ingest_module

    phases: dict[str, float] = {}
    ingest_module._load_sources = _timed(phases, "load", ingest_module._load_sources)
    ingest_module.compute_schema = _timed(phases, "schema", ingest_module.compute_schema)
    ingest_module._build = _timed(phases, "build", ingest_module._build)
    options = {"sep": "|"} if fmt == "triples" else {}
    rss_base = _maxrss_mb()
    start = time.perf_counter()
    kb = ingest_module.ingest([source], kb="bench", format=fmt, options=options)
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds, "store_triples": kb.manifest.counts["triples"], "rss_base_mb": rss_base,
        "load": phases["load"], "schema": phases["schema"],
        "optimize": phases["build_end"] - phases["schema_end"],  # optimize + manifest write
        "other": seconds - phases["load"] - phases["schema"] - (phases["build_end"] - phases["schema_end"]),
    }


def child_main(mode: str, source: Path, work: Path) -> None:
    """Run one measurement and print it as one JSON line."""
    result = child_raw(source, work) if mode == "raw" else child_ours(source, work, mode)
    result["rss_peak_mb"] = _maxrss_mb()
    result["store_mb"] = sum(p.stat().st_size for p in work.rglob("*") if p.is_file()) / 2**20
    print(json.dumps(result))


# --------------------------------------------------------------------------- parent side


@dataclass
class Graph:
    """A generated benchmark graph on disk."""

    nt: Path
    delimited: Path
    stats: GraphStats


def make_graph(spec: GraphSpec, folder: Path) -> Graph:
    start = time.perf_counter()
    stats = write_graph(spec, folder / "graph.nt", folder / "graph.psv")
    print(f"generated {stats.triples:,} triples ({stats.nt_bytes / 2**20:.0f} MiB) and "
          f"{stats.delimited_lines:,} delimited lines in {time.perf_counter() - start:.1f}s", flush=True)
    return Graph(folder / "graph.nt", folder / "graph.psv", stats)


def run_child(mode: str, source: Path, tmp: Path) -> dict[str, Any]:
    """One measurement in a fresh process and a fresh scratch folder (deleted afterwards)."""
    work = Path(tempfile.mkdtemp(prefix=f"run-{mode}-", dir=tmp))
    try:
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", mode,
                               "--source", str(source), "--work", str(work)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{mode} run failed:\n{done.stderr[-3000:]}")
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _fmt_run(mode: str, triples: int, result: dict[str, Any]) -> str:
    phases = ""
    if "load" in result:
        phases = (f"  load {result['load']:.1f}s schema {result['schema']:.1f}s "
                  f"optimize {result['optimize']:.1f}s other {result['other']:.1f}s")
    return (f"  {mode:<9} {result['seconds']:7.2f}s {triples / result['seconds']:>11,.0f} t/s "
            f"peak RSS {result['rss_peak_mb']:6.0f} MiB (base {result['rss_base_mb']:.0f}) "
            f"store {result['store_mb']:.0f} MiB{phases}")


def compare(graph: Graph, reps: int, tmp: Path) -> dict[str, list[dict[str, Any]]]:
    """Interleaved repetitions of raw / ours (nt) / ours (delimited)."""
    runs: dict[str, list[dict[str, Any]]] = {"raw": [], "nt": [], "triples": []}
    for rep in range(reps):
        print(f"repetition {rep + 1}/{reps}", flush=True)
        for mode in runs:
            source = graph.delimited if mode == "triples" else graph.nt
            result = run_child(mode, source, tmp)
            runs[mode].append(result)
            count = graph.stats.delimited_lines if mode == "triples" else graph.stats.triples
            print(_fmt_run(mode, count, result), flush=True)
    return runs


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def summary(graph: Graph, runs: dict[str, list[dict[str, Any]]]) -> None:
    """Print the summary table: medians, and the median of per-repetition ratios."""
    triples, lines = graph.stats.triples, graph.stats.delimited_lines
    ratios = [raw["seconds"] / ours["seconds"] for raw, ours in zip(runs["raw"], runs["nt"], strict=True)]
    print(f"\n{'path':<33}{'median s':>10}{'triples/s':>13}{'peak RSS MiB':>14}{'store MiB':>11}")
    rows = [("raw bulk_load (nt)", "raw", triples), ("sparqlqa ingest (nt)", "nt", triples),
            ("sparqlqa ingest (head|rel|tail)", "triples", lines)]
    for label, mode, count in rows:
        seconds = _median(runs[mode], "seconds")
        print(f"{label:<33}{seconds:>10.2f}{count / seconds:>13,.0f}"
              f"{_median(runs[mode], 'rss_peak_mb'):>14.0f}{_median(runs[mode], 'store_mb'):>11.0f}")
    print(f"\ndelimited: {lines:,} lines -> {_median(runs['triples'], 'store_triples'):,.0f} store triples, "
          f"{lines / _median(runs['triples'], 'seconds'):,.0f} lines/s")
    print(f"ratio ours/raw throughput: median of per-repetition ratios {statistics.median(ratios):.2f} "
          f"(each: {', '.join(f'{r:.2f}' for r in ratios)}); goal >= 0.5")
    for key in ("load", "schema", "optimize", "other"):
        print(f"  ours (nt) median {key}: {_median(runs['nt'], key):.2f}s")


def big(tmp: Path, with_raw: bool) -> None:
    """One PRIME-sized run through ``ingest`` (and optionally raw bulk_load for reference)."""
    folder = Path(tempfile.mkdtemp(prefix="graph-", dir=tmp))
    try:
        graph = make_graph(PRIME, folder)
        graph.delimited.unlink()
        ours = run_child("nt", graph.nt, tmp)
        print(_fmt_run("nt", graph.stats.triples, ours), flush=True)
        if with_raw:
            print(_fmt_run("raw", graph.stats.triples, run_child("raw", graph.nt, tmp)), flush=True)
        verdict = "OK" if ours["seconds"] < 180 else "OVER"
        print(f"\nPRIME-sized: {graph.stats.triples:,} triples in {ours['seconds']:.1f}s "
              f"(goal < 180s: {verdict}); load {ours['load']:.1f}s, schema {ours['schema']:.1f}s, "
              f"optimize {ours['optimize']:.1f}s, other {ours['other']:.1f}s; "
              f"peak RSS {ours['rss_peak_mb']:.0f} MiB")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="sparqlqa ingest benchmark")
    parser.add_argument("--quick", action="store_true", help="small graph, 1 repetition")
    parser.add_argument("--big", action="store_true", help="one PRIME-sized run (~8.4M triples)")
    parser.add_argument("--with-raw", action="store_true", help="--big: also time raw bulk_load once")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--tmp", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--child", choices=("raw", "nt", "triples"), help=argparse.SUPPRESS)
    parser.add_argument("--source", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child_main(args.child, args.source, args.work)
        return
    tmp = Path(tempfile.mkdtemp(prefix="sparqlqa-bench-", dir=args.tmp))
    try:
        if args.big:
            big(tmp, args.with_raw)
            return
        folder = tmp / "graph"
        folder.mkdir()
        graph = make_graph(QUICK if args.quick else ONE_MILLION, folder)
        summary(graph, compare(graph, 1 if args.quick else args.reps, tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
