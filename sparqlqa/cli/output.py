"""Output helpers shared by CLI commands: JSON, tables, progress bars."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

_stdout: Console | None = None
_stderr: Console | None = None


def console() -> Console:
    """Console on stdout (tables, results)."""
    global _stdout
    if _stdout is None:
        _stdout = Console(soft_wrap=True)
    return _stdout


def err_console() -> Console:
    """Console on stderr (progress, notes), so stdout stays clean for piping."""
    global _stderr
    if _stderr is None:
        _stderr = Console(stderr=True)
    return _stderr


def print_json(data: Any) -> None:
    """Machine-readable output on stdout."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def note(message: str) -> None:
    """A one-line note on stderr."""
    err_console().print(message, style="dim", highlight=False)


@contextmanager
def byte_progress(description: str) -> Iterator[Any]:
    """A progress bar over bytes read; yields ``update(name, done, total)``. Silent when not a TTY."""
    if not sys.stderr.isatty():
        yield lambda name, done, total: None
        return
    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeElapsedColumn(),
               TimeRemainingColumn())
    with Progress(*columns, console=err_console(), transient=True) as progress:
        tasks: dict[str, Any] = {}

        def update(name: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = progress.add_task(f"{description} {name}", total=total)
            progress.update(tasks[name], completed=done)

        yield update
