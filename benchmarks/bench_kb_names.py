"""KB names (issue 33, item 4): what ten spellings of one KB group cost a running ``sparqlqa serve``.

Two KBs in ``--home``: ``movies`` (the bundled movie sample) and ``tiny`` (tests/fixtures/group_people.ttl).
For each checkout given with ``--code`` (default: this one; pass ``--code /path/to/main`` too for the
before/after in one run) and each way of asking, a fresh ``python -m sparqlqa serve`` (no ``--kb``: both
KBs warmed at start) gets ten ``POST /api/ask`` (offline strategy) on the group, either

* ``same``: ``movies+tiny`` ten times (the cost of opening the group once), or
* ``spellings``: ten spellings of it (``tiny+movies``, ``movies +tiny``, ``movies+movies+tiny``, ...),

and the server's process tree (:mod:`tests.proc_tree`: its pids, their resident memory) is read after
start-up and after each ask.  The figures are what the ten asks added to the warm server.  The embedder
is ``--embedder`` (default ``fake``: the same for every KB, so the figures are the KBs' own cost).

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_kb_names.py --home /tmp/kbn-home --code . --code /work/main
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from proc_tree import rss, tree  # noqa: E402

SPELLINGS = ["movies+tiny", "movies +tiny", " movies+tiny", "tiny+movies", "movies+movies+tiny",
             "tiny + movies", "movies+ tiny ", "tiny+movies+tiny", " tiny+ movies", "movies+tiny+movies"]
QUESTION = "which movies did Ridley Scott direct"


def _env(home: Path, code: Path, embedder: str) -> dict[str, str]:
    return {**os.environ, "SPARQLQA_HOME": str(home), "PYTHONPATH": str(code), "SPARQLQA_EMBEDDER": embedder,
            "SPARQLQA_PROGRESS_EVERY": "3600"}


def prepare(home: Path, embedder: str) -> None:
    """The two KBs, once (with this checkout)."""
    env = _env(home, REPO, embedder)
    from sparqlqa.samples import sample_path

    for name, source in (("movies", sample_path("movies")), ("tiny", REPO / "tests" / "fixtures" / "group_people.ttl")):
        if subprocess.run([sys.executable, "-m", "sparqlqa", "schema", name], env=env, capture_output=True,
                          check=False).returncode != 0:
            subprocess.run([sys.executable, "-m", "sparqlqa", "ingest", str(source), "--kb", name], env=env,
                           check=True, capture_output=True)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def measure(home: Path, code: Path, embedder: str, names: list[str]) -> dict[str, Any]:
    """Start ``serve`` from ``code``, ask on each of ``names``; processes and RSS after start and each ask."""
    port = _free_port()
    child = subprocess.Popen([sys.executable, "-m", "sparqlqa", "serve", "--port", str(port)],
                             env=_env(home, code, embedder), cwd=code,  # -m puts the cwd first on the path
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 300
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or child.poll() is not None:
                raise RuntimeError("serve did not start")
            time.sleep(0.2)
        pids = tree(child.pid)
        steps = [(len(pids), rss(pids))]
        codes = []
        with httpx.Client(base_url=url, timeout=600) as http:
            for name in names:
                codes.append(http.post("/api/ask", json={"kb": name, "question": QUESTION,
                                                         "strategy": "offline"}).status_code)
                pids = tree(child.pid)
                steps.append((len(pids), rss(pids)))
    finally:
        child.terminate()
        child.wait(timeout=30)
    start = steps[0]
    return {"code": str(code), "asks": len(names), "distinct_names": len(set(names)), "statuses": codes,
            "processes_at_start": start[0], "processes_added": steps[-1][0] - start[0],
            "rss_at_start_mib": round(start[1] / 2**20, 1),
            "rss_added_mib": round((steps[-1][1] - start[1]) / 2**20, 1),
            "rss_added_by_first_ask_mib": round((steps[1][1] - start[1]) / 2**20, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--code", type=Path, action="append", help="checkout whose serve runs (repeatable)")
    parser.add_argument("--embedder", default="fake")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.home.mkdir(parents=True, exist_ok=True)
    prepare(args.home, args.embedder)
    print(f"load before: {Path('/proc/loadavg').read_text().split()[:3]}")
    rows = []
    for code in args.code or [REPO]:
        for label, names in (("same", ["movies+tiny"] * len(SPELLINGS)), ("spellings", SPELLINGS)):
            row = {"asked": label, **measure(args.home, code.resolve(), args.embedder, names)}
            rows.append(row)
            print(json.dumps(row))
    print(f"load after: {Path('/proc/loadavg').read_text().split()[:3]}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
