"""Files sparqlqa writes follow the user's umask (keys excepted: 0600)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from sparqlqa.paths import atomic_write_json, atomic_write_text


@pytest.fixture(params=[0o022, 0o077, 0o002])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_atomic_writes_follow_the_umask(tmp_path: Path, umask: int) -> None:
    atomic_write_text(tmp_path / "report.md", "# hello\n")
    atomic_write_json(tmp_path / "metrics.json", {"a": 1})
    plain = tmp_path / "plain.txt"
    plain.write_text("x")  # what any other program would create
    assert _mode(tmp_path / "report.md") == _mode(plain) == 0o666 & ~umask
    assert _mode(tmp_path / "metrics.json") == 0o666 & ~umask


def test_an_explicit_mode_wins(tmp_path: Path, umask: int) -> None:
    atomic_write_text(tmp_path / "keys.json", "{}", mode=0o600)
    assert _mode(tmp_path / "keys.json") == 0o600
