"""Giant-line ingest: peak memory and time of ``sparqlqa ingest`` on 50 MB lines (issue 18).

Each case runs in a fresh child process (peak RSS = its own ``ru_maxrss``, read with ``os.wait4``)
with a private ``$SPARQLQA_HOME`` in a scratch folder that is deleted afterwards.  Every case is
expected to end in an error naming ``file:line`` (a line past ``MAX_LINE_BYTES``), never a traceback.

Usage::

    .venv/bin/python benchmarks/bench_faults.py           # 50 MB lines
    .venv/bin/python benchmarks/bench_faults.py --mb 20   # smaller
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES = {
    "field.txt": (b"", b"|r|b\n"),
    "literal.nt": (b'<http://e/s> <http://e/p> "', b'" .\n'),
    "unterminated.nt": (b'<http://e/s> <http://e/p> "', b"\n"),
    "no-newline.txt": (b"a|r|", b""),
}


def write_case(path: Path, head: bytes, tail: bytes, size: int) -> None:
    with path.open("wb") as handle:
        handle.write(head)
        chunk = b"a" * (1 << 20)
        for _ in range(size // len(chunk)):
            handle.write(chunk)
        handle.write(tail)


def run(source: Path, home: Path) -> tuple[int, float, float, str]:
    """(exit code, seconds, peak RSS MiB, last output line) of one ``sparqlqa ingest`` child."""
    env = {**os.environ, "SPARQLQA_HOME": str(home), "SPARQLQA_EMBEDDER": "fake"}
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", "from sparqlqa.cli import main; main()", "ingest",
                              str(source), "--kb", "giant"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             env=env)
    assert child.stdout is not None
    output = child.stdout.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    lines = [line for line in output.splitlines() if line.strip()]
    first = next((line for line in lines if "error" in line or "Traceback" in line), lines[-1] if lines else "")
    return os.waitstatus_to_exitcode(status), elapsed, usage.ru_maxrss / 1024, first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=50, help="size of the giant line in MB (MiB)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-faults-"))
    try:
        print(f"| case ({args.mb} MiB line) | exit | seconds | peak RSS MiB | message |")
        print("|---|---:|---:|---:|---|")
        for name, (head, tail) in CASES.items():
            source = scratch / name
            write_case(source, head, tail, args.mb << 20)
            code, elapsed, rss, message = run(source, scratch / f"home-{name}")
            print(f"| {name} | {code} | {elapsed:.1f} | {rss:.0f} | {message.replace(str(scratch), '…')[:90]} |")
            source.unlink()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
