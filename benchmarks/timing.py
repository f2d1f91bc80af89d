"""The one timing helper the benchmarks share: the median wall time of a piece of work."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_seconds(work: Callable[[], object], runs: int) -> float:
    """Run ``work`` ``runs`` times; the median of its wall times, in seconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def p50_ms(work: Callable[[], object], runs: int = 300) -> float:
    """:func:`median_seconds` in milliseconds."""
    return median_seconds(work, runs) * 1000


def p50_us(work: Callable[[], object], runs: int = 2000) -> float:
    """:func:`median_seconds` in microseconds."""
    return median_seconds(work, runs) * 1e6
