"""The first answer on a freshly ingested KB (issue 36): ingest, first and second ``ask``, cold ``ask`` on an
indexed KB, ``--help``; wall time, CPU and peak RSS of each command, for this checkout and a baseline
checkout (``--baseline``, e.g. main's) in the same run.

Each KB is a relational-shape graph from :mod:`generate_relational` (rows typed by table, columns as
literal properties, foreign keys, no ``rdfs:label``), ingested into a fresh ``$SPARQLQA_HOME`` per code and
size (the exported ONNX model is shared: ``--models``, linked in).  Every command is a new process measured by
``/usr/bin/time``; answers are compared: the first answer's SPARQL-matched items against the same
checkout's answer once the index is built, and against the baseline's first answer::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_first_answer.py --sizes 40000,400000 \\
        --baseline /work/main --baseline-sizes 40000 --models /tmp/fa/home/models --out /tmp/fa/bench.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from generate_relational import TRIPLES_PER_CUSTOMER, write_relational

QUESTION = "what is the ref country of id=164"
HERE = Path(__file__).resolve().parent.parent


@dataclass
class Run:
    """One command: wall seconds, CPU seconds (user + system, children included), peak RSS, exit code, and
    the machine's 1-minute load average as it started and ended (a shared machine: wall times follow it)."""

    wall: float = 0.0
    cpu: float = 0.0
    rss_mb: int = 0
    code: int = 0
    output: str = field(default="", repr=False)
    load: tuple[float, float] = (0.0, 0.0)


def measure(code_root: Path, home: Path, args: list[str], timeout: float) -> Run:
    """``python -m sparqlqa ARGS`` with ``code_root`` first on the path, under ``/usr/bin/time``."""
    env = {**os.environ, "PYTHONPATH": str(code_root), "SPARQLQA_HOME": str(home)}
    env.pop("SPARQLQA_EMBEDDER", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its .pyc files
    env.setdefault("PYTHONPYCACHEPREFIX", str(Path(tempfile.gettempdir()) / "bench-first-answer-pycache"))
    with tempfile.NamedTemporaryFile("r", suffix=".time") as times:
        command = ["/usr/bin/time", "-o", times.name, "-f", "%e %U %S %M", sys.executable, "-m", "sparqlqa", *args]
        started, load = time.perf_counter(), os.getloadavg()[0]
        try:
            done = subprocess.run(command, env=env, cwd=code_root, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return Run(wall=time.perf_counter() - started, code=-1, output="timed out")
        fields = times.read().split()[-4:]
    wall, user, system, rss = (float(x) for x in fields)
    return Run(wall, round(user + system, 2), int(rss / 1024), done.returncode, done.stdout + done.stderr,
               (round(load, 2), round(os.getloadavg()[0], 2)))


def answers(run: Run) -> list[tuple[str, str]]:
    """(IRI, source) of each item of an ``ask --json`` answer."""
    if run.code not in (0, 3) or "{" not in run.output:
        return []
    data, _ = json.JSONDecoder().raw_decode(run.output[run.output.index("{"):])
    return [(item["iri"], item["source"]) for item in data["items"]]


def fresh_home(root: Path, models: Path | None) -> Path:
    home = Path(tempfile.mkdtemp(dir=root))
    if models is not None:
        (home / "models").symlink_to(models)
    return home


def bench_size(code: Path, size: int, graph: Path, root: Path, models: Path | None, timeout: float,
               indexed_too: bool) -> dict[str, object]:
    home = fresh_home(root, models)
    ask = ["ask", "bench", QUESTION, "--json"]
    result: dict[str, object] = {"code": str(code), "triples": size}
    result["ingest"] = asdict(measure(code, home, ["ingest", str(graph), "--kb", "bench"], timeout))
    result["ingest"]["output"] = ""  # type: ignore[index]
    first = measure(code, home, ask, timeout)
    result["first_ask"] = asdict(first)
    second = measure(code, home, ask, timeout)
    result["second_ask"] = asdict(second)
    result["first_items"] = len(answers(first))
    result["first_matched"] = [a for a in answers(first) if a[1] == "filtered"]
    result["first_ask"]["output"] = result["second_ask"]["output"] = ""  # type: ignore[index]
    if not indexed_too:
        return result
    result["index"] = asdict(measure(code, home, ["index", "bench"], timeout))
    indexed = [measure(code, home, ask, timeout) for _ in range(3)]
    result["cold_ask_indexed"] = [asdict(run) for run in indexed]
    matched = [a for a in answers(indexed[0]) if a[1] == "filtered"]
    result["same_matched_as_indexed"] = result["first_matched"] == matched
    result["index"]["output"] = str(result["index"]["output"])[-300:]  # type: ignore[index]
    for run in result["cold_ask_indexed"]:  # type: ignore[attr-defined]
        run["output"] = ""
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="40000,400000", help="triples per KB, comma-separated")
    parser.add_argument("--baseline", type=Path, help="another checkout measured in the same run (e.g. main)")
    parser.add_argument("--baseline-sizes", help="sizes for the baseline (default: --sizes)")
    parser.add_argument("--models", type=Path, help="a $SPARQLQA_HOME/models folder holding the exported model")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "bench-first-answer")
    parser.add_argument("--index-sizes", default="40000", help="sizes also indexed, then asked cold")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds one command may take")
    parser.add_argument("--out", type=Path, help="write the results as JSON")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    base_sizes = [int(s) for s in (args.baseline_sizes or args.sizes).split(",")]
    results = []
    help_runs = {str(code): [measure(code, fresh_home(args.workdir, None), ["--help"], 60).wall for _ in range(3)]
                 for code in [HERE, *([args.baseline] if args.baseline else [])]}
    print(json.dumps({"help_wall_s": help_runs}), flush=True)
    for size in sizes:
        graph = args.workdir / f"rel{size}.nt"
        if not graph.is_file():
            write_relational(max(1, size // TRIPLES_PER_CUSTOMER), graph)
        for code in [HERE, *([args.baseline] if args.baseline and size in base_sizes else [])]:
            result = bench_size(code, size, graph, args.workdir, args.models, args.timeout,
                                size in [int(s) for s in args.index_sizes.split(",")])
            results.append(result)
            print(json.dumps({k: v for k, v in result.items() if k != "first_matched"}), flush=True)
    if args.out is not None:
        args.out.write_text(json.dumps({"help_wall_s": help_runs, "runs": results}, indent=1), "utf-8")


if __name__ == "__main__":
    main()
