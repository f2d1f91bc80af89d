"""Cold ``sparqlqa ask`` on an indexed KB (issue 36): CPU (user + system, query workers included) of each
command as a fresh process, for several checkouts in the same run, runs alternated so that load hits all
alike; answers compared (items in order, SPARQL, notes; the largest score change) against the first checkout's.

``PYTHONDONTWRITEBYTECODE`` is dropped: an installed package runs from its ``.pyc`` files, and one warm-up
run per checkout and KB compiles them (and writes what a first ask stores with the generation)::

    SPARQLQA_HOME=/tmp/ca/home PYTHONPATH=. .venv/bin/python benchmarks/bench_cold_ask.py \\
        --code main=/tmp/ca/base --code branch=. --kb movies "who directed the movies that Ginger Rogers acted in" \\
        --kb rel40 "what is the ref country of id=164" --runs 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def run(code: Path, args: list[str]) -> tuple[float, float, str]:
    """(CPU seconds, peak RSS MB, stdout) of ``python -m sparqlqa ARGS`` with ``code`` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.NamedTemporaryFile("r", suffix=".time") as times:
        done = subprocess.run(["/usr/bin/time", "-o", times.name, "-f", "%U %S %M", sys.executable, "-m", "sparqlqa",
                               *args], env=env, cwd=code, capture_output=True, text=True, timeout=600)
        user, system, rss = times.read().split()[-3:]
    if done.returncode != 0:
        raise SystemExit(f"{code}: sparqlqa {' '.join(args)} failed: {done.stderr[-2000:]}")
    return float(user) + float(system), int(rss) / 1024, done.stdout


def answer_key(text: str) -> tuple[tuple[object, ...], list[float]]:
    """(the answer's items in order, its SPARQL, its notes), and the items' scores."""
    data = json.loads(text)
    items = tuple(i.get("key") or i.get("iri") for i in data["items"])
    return (items, tuple(q["query"] for q in data["queries"]), tuple(data["notes"])), \
        [float(i.get("score", 0)) for i in data["items"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", action="append", required=True, help="NAME=PATH of a checkout (first: baseline)")
    parser.add_argument("--kb", nargs=2, action="append", metavar=("KB", "QUESTION"), required=True)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    codes = {name: Path(path).resolve() for name, path in (c.split("=", 1) for c in args.code)}
    print(f"{'KB':10} {'code':14} {'CPU s (each run)':40} median  peak RSS  same answer (max score change)")
    for kb, question in args.kb:
        keys = {name: answer_key(run(code, ["ask", kb, question, "--json"])[2]) for name, code in codes.items()}
        cpu: dict[str, list[float]] = {name: [] for name in codes}
        rss: dict[str, float] = {}
        for _ in range(args.runs):
            for name, code in codes.items():
                seconds, rss[name], _ = run(code, ["ask", kb, question])
                cpu[name].append(seconds)
        first, first_scores = next(iter(keys.values()))
        for name in codes:
            runs = " ".join(f"{s:.2f}" for s in cpu[name])
            same, scores = keys[name][0] == first, keys[name][1]
            change = max((abs(a - b) for a, b in zip(scores, first_scores)), default=0.0) if same else float("nan")
            print(f"{kb:10} {name:14} {runs:40} {statistics.median(cpu[name]):.2f}  {rss[name]:5.0f} MB  "
                  f"{same} ({change:.1e})")
    for name, code in codes.items():
        helps = [run(code, ["--help"])[0] for _ in range(3)]
        print(f"--help     {name:14} {' '.join(f'{h:.2f}' for h in helps)}")


if __name__ == "__main__":
    main()
