"""A process tree read from /proc (Linux): its pids, resident memory and CPU seconds.

Shared by the fault suite (tests/faults/test_fault_runaway.py) and benchmarks/bench_query_bounds.py.
"""

from __future__ import annotations

import os
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")
TICK = os.sysconf("SC_CLK_TCK")


def stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat from "state" on, or None when the process is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()  # fields from "state" on (the name may hold spaces)


def tree(root: int) -> list[int]:
    """``root`` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := stat_fields(int(entry.name))) is not None:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def rss(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            pass
    return total


def cpu(pids: list[int]) -> dict[int, float]:
    """Seconds of CPU each live process of ``pids`` has used (user + system)."""
    used = {}
    for pid in pids:
        fields = stat_fields(pid)
        if fields is not None:
            used[pid] = (int(fields[11]) + int(fields[12])) / TICK
    return used
