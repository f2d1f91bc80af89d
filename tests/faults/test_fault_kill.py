"""Fault suite, kills and concurrency: ``kill -9`` during ``ingest --replace``, two writers, 8 readers.

Writers run as child processes (the real CLI); the test watches the KB folder and kills the
writer when it reaches a given point.  Afterwards the KB must open and answer with the old count
(or the new one, once the writer switched ``CURRENT``), and the next replace must succeed.
Every wait is bounded (deadlines, child timeouts).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from faults.helpers import CHILD_TIMEOUT, assert_clean_failure, child_env, cli, count, run_child, spawn
from sparqlqa.errors import KBBusy
from sparqlqa.ingest import ingest

NEW_LINES = 10_000


@pytest.fixture
def sources(tmp_path: Path) -> tuple[Path, Path]:
    old = tmp_path / "old.txt"
    old.write_text("".join(f"e{i}|linked_to|e{i + 1}\n" for i in range(200)))
    new = tmp_path / "new.txt"
    new.write_text("".join(f"n{i}|rel{i % 7}|n{i * 7 % 10_007}\n" for i in range(NEW_LINES)))
    ingest([old], kb="k")
    return old, new


def generations(home: Path) -> list[Path]:
    root = home / "kbs" / "k"
    return [p for p in root.iterdir() if p.is_dir()] if root.is_dir() else []


def current(home: Path) -> str:
    return (home / "kbs" / "k" / "CURRENT").read_text().strip()


def wait_for(condition: Callable[[], bool], child: subprocess.Popen[str], deadline: float = 60.0) -> bool:
    """Poll ``condition`` until it holds (True) or the child ended / the deadline passed (False)."""
    end = time.monotonic() + deadline
    while time.monotonic() < end and child.poll() is None:
        if condition():
            return True
        time.sleep(0.002)
    return False


def new_generation(home: Path, old: str, inner: str | None = None) -> Callable[[], bool]:
    def seen() -> bool:
        for generation in generations(home):
            if generation.name != old and (inner is None or (generation / inner).exists()):
                return True
        return False
    return seen


POINTS = {
    "generation created": lambda home, old: new_generation(home, old),
    "store being written": lambda home, old: new_generation(home, old, "store/CURRENT"),
    "manifest written, before the switch": lambda home, old: new_generation(home, old, "manifest.json"),
}


@pytest.mark.parametrize("point", sorted(POINTS))
def test_kill_9_during_replace_keeps_a_working_kb(sources: tuple[Path, Path], sparqlqa_home: Path,
                                                    point: str) -> None:
    old_count, old_generation = count("k"), current(sparqlqa_home)
    child = spawn("ingest", str(sources[1]), "--kb", "k", "--replace")
    reached = wait_for(POINTS[point](sparqlqa_home, old_generation), child)
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=CHILD_TIMEOUT)
    after = count("k")
    if current(sparqlqa_home) == old_generation:
        assert after == old_count
    assert reached or child.returncode == 0, f"the writer ended before {point!r}"
    code, output = run_child("ingest", str(sources[1]), "--kb", "k", "--replace")
    assert code == 0, output
    assert after in (old_count, count("k"))
    assert [g.name for g in generations(sparqlqa_home)] == [current(sparqlqa_home)]  # leftovers cleaned


def test_kill_9_during_a_first_ingest_leaves_no_kb_and_no_debris(sources: tuple[Path, Path],
                                                                  sparqlqa_home: Path) -> None:
    kbs = sparqlqa_home / "kbs"
    child = spawn("ingest", str(sources[1]), "--kb", "fresh")
    assert wait_for(lambda: any(kbs.glob(".building-fresh-*/*/store/CURRENT")), child)
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=CHILD_TIMEOUT)
    code, output = cli("kbs", "--json")
    assert code == 0 and "fresh" not in output, output
    code, output = run_child("ingest", str(sources[1]), "--kb", "fresh")
    assert code == 0, output
    assert count("fresh") > NEW_LINES and not list(kbs.glob(".building-*"))


def test_a_second_writer_fails_clearly_while_the_first_runs(sources: tuple[Path, Path], sparqlqa_home: Path) -> None:
    old_generation = current(sparqlqa_home)
    first = spawn("ingest", str(sources[1]), "--kb", "k", "--replace")
    assert wait_for(new_generation(sparqlqa_home, old_generation), first)
    code, output = run_child("ingest", str(sources[0]), "--kb", "k", "--replace")
    assert_clean_failure(code, output, KBBusy.exit_code, "'k' is being written by another process")
    output, _ = first.communicate(timeout=CHILD_TIMEOUT)
    assert first.returncode == 0, output
    assert count("k") > 3 * NEW_LINES // 2


READER = """
import pathlib, sys, time
from sparqlqa.kb.knowledge_base import open_kb
counts = set()
stop, ready, end = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), time.monotonic() + 60
while not stop.exists() and time.monotonic() < end:
    with open_kb("k") as kb:
        counts.add(int(kb.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }").rows[0][0].value))
    ready.touch()
    time.sleep(0.05)
print(" ".join(map(str, sorted(counts))))
"""


def test_8_readers_during_a_replace_all_succeed(sources: tuple[Path, Path], sparqlqa_home: Path,
                                                tmp_path: Path) -> None:
    old_count, old_generation = count("k"), current(sparqlqa_home)
    stop = tmp_path / "stop"
    ready = [tmp_path / f"ready-{i}" for i in range(8)]
    readers = [subprocess.Popen([sys.executable, "-c", READER, str(stop), str(flag)], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, env=child_env()) for flag in ready]
    end = time.monotonic() + CHILD_TIMEOUT
    while not all(flag.exists() for flag in ready) and time.monotonic() < end:  # all reading the old KB
        time.sleep(0.01)
    writer = spawn("ingest", str(sources[1]), "--kb", "k", "--replace")
    output, _ = writer.communicate(timeout=CHILD_TIMEOUT)
    assert writer.returncode == 0, output
    time.sleep(0.5)  # let the readers see the new generation too
    stop.touch()
    assert current(sparqlqa_home) != old_generation
    new_count = count("k")
    seen: set[int] = set()
    for reader in readers:
        output, _ = reader.communicate(timeout=CHILD_TIMEOUT)
        assert reader.returncode == 0 and "Traceback" not in output, output
        seen |= {int(n) for n in output.split()}
    assert seen == {old_count, new_count}
    # the old generation, kept while they read it, went with the last of them
    assert [g.name for g in generations(sparqlqa_home)] == [current(sparqlqa_home)]
