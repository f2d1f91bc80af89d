"""Output helpers shared by CLI commands: JSON, tables, progress (rich bars on a terminal, plain lines
otherwise)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from sparqlqa.text_input import NAME, TextKind, clean_text

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


class CleanText(click.ParamType):
    """A text argument or option checked by :func:`~sparqlqa.text_input.clean_text` as it is parsed
    (bad text ends the command with :class:`~sparqlqa.errors.InvalidText`, exit 2)."""

    name = "text"

    def __init__(self, kind: TextKind = NAME, field: str = "the knowledge base name") -> None:
        self.kind, self.field = kind, field

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return clean_text(value, kind=self.kind, field=self.field)


#: a KB name argument or option
KB_NAME = CleanText()


def print_json(data: Any) -> None:
    """Machine-readable output on stdout."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


#: control characters shown as themselves would drive the terminal (colours, cursor, window title)
_CONTROLS = {**{c: chr(0x2400 + c) for c in range(0x20)}, 0x7F: "\u2421",
             **{c: "\ufffd" for c in range(0x80, 0xA0)}, 0x09: " ", 0x0A: " ", 0x0D: " "}


def safe(text: object) -> str:
    r"""Text from a KB, an LLM or a user, fit for one line of a terminal: tabs and line breaks become
    spaces, other control characters visible symbols (ESC → ␛), so no data can move the cursor, recolour
    or retitle the terminal.  Print it with ``markup=False`` (or as :func:`cell`), so ``[/bold]`` in a
    label stays text.

    >>> safe("Line\nbreak \x1b[31mred")
    'Line break ␛[31mred'
    """
    return str(text).translate(_CONTROLS)


def cell(text: object, style: str = "") -> Any:
    """:func:`safe` text as a rich ``Text`` (a table cell or title that rich does not read as markup)."""
    from rich.text import Text

    return Text(safe(text), style=style)


def note(message: str) -> None:
    """A one-line note on stderr (one line in a log too: the terminal wraps it, rich does not)."""
    err_console().print(safe(message), style="dim", highlight=False, soft_wrap=True, markup=False)


def warning(message: str) -> None:
    """``warning: MESSAGE`` on stderr, one line, in bold yellow; shown even with ``--quiet``."""
    err_console().print(f"warning: {message}", style="bold yellow", markup=False, highlight=False, soft_wrap=True)


#: seconds between plain progress lines when stderr is not a terminal ($SPARQLQA_PROGRESS_EVERY overrides)
PROGRESS_EVERY = 10.0


def progress_every() -> float:
    """Seconds between plain progress lines: ``$SPARQLQA_PROGRESS_EVERY`` or :data:`PROGRESS_EVERY`."""
    try:
        return max(0.0, float(os.environ.get("SPARQLQA_PROGRESS_EVERY", PROGRESS_EVERY)))
    except ValueError:
        return PROGRESS_EVERY


def human_seconds(seconds: float) -> str:
    """``3m``, ``45s``, ``1h05m``: an ETA short enough for a log line.

    >>> human_seconds(44.6), human_seconds(200), human_seconds(3900)
    ('45s', '3m', '1h05m')
    """
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds / 60:.0f}m"
    return f"{int(seconds // 3600)}h{int(seconds % 3600 // 60):02d}m"


def _count(n: float) -> str:
    return f"{n:,.0f}"


def _megabytes(n: float) -> str:
    return f"{n / 1e6:,.2f}"


class PlainProgress:
    """Progress as periodic plain lines on stderr, for logs and pipes.

    A line when work starts, then at most one every ``every`` seconds, and one at the end:
    ``indexed 12,288/42,718 nodes (28%), 160 nodes/s, ETA 3m``.
    """

    def __init__(self, verb: str, unit: str = "", *, every: float | None = None, size: Any = _count) -> None:
        self.verb, self.unit, self.size = verb, unit, size
        self.every = progress_every() if every is None else every
        self.started = time.monotonic()
        self.last: float | None = None
        self.finished = False

    def update(self, done: int, total: int | None) -> None:
        now = time.monotonic()
        at_end = bool(total) and done >= (total or 0)
        due = self.last is None or now - self.last >= self.every
        if self.finished or not (due or at_end):
            return
        self.last, self.finished = now, at_end
        click.echo(self.line(done, total, now - self.started), err=True)

    def line(self, done: int, total: int | None, elapsed: float) -> str:
        unit = f" {self.unit}" if self.unit else ""
        if not total:
            return f"{self.verb} {self.size(done)}{unit}"
        text = f"{self.verb} {self.size(done)}/{self.size(total)}{unit} ({100 * done // total}%)"
        if done and elapsed >= 0.5:  # a rate from the first few milliseconds means nothing
            rate = done / elapsed
            per = f"{self.size(rate)}{unit}/s"
            eta = f", ETA {human_seconds((total - done) / rate)}" if done < total else f", {human_seconds(elapsed)}"
            text += f", {per}{eta}"
        return text


@contextmanager
def count_progress(description: str, verb: str = "done", unit: str = "") -> Iterator[Any]:
    """Progress over items; yields ``update(done, total)``: a rich bar on a terminal, else
    :class:`PlainProgress` lines (``verb 120/4,000 unit (3%), 40 unit/s, ETA 2m``)."""
    out = err_console()
    if not out.is_terminal:
        yield PlainProgress(verb, unit).update
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=out, transient=True) as progress:
        task = progress.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        yield update


@contextmanager
def byte_progress(description: str) -> Iterator[Any]:
    """A progress bar over bytes read; yields ``update(name, done, total)``. Plain lines when not a TTY."""
    if not err_console().is_terminal:
        plain: dict[str, PlainProgress] = {}

        def log(name: str, done: int, total: int) -> None:
            if name not in plain:
                plain[name] = PlainProgress(f"{description} {name}:", "MB", size=_megabytes)
            plain[name].update(done, total)

        yield log
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


def _use_device(_ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value:
        os.environ["SPARQLQA_DEVICE"] = value  # read by get_embedder (sparqlqa.embed.embedders.DEVICE_ENV)


#: ``--device``: where torch embedders run (the ONNX default runs on the CPU; asking it for a GPU is an error)
device_option = click.option(
    "--device", metavar="DEVICE", expose_value=False, callback=_use_device,
    help="Device of torch embedders: cpu, cuda, cuda:1, mps (default: $SPARQLQA_DEVICE). The default ONNX "
    "embedder runs on the CPU: for a GPU add --embedder sentence-transformers:all-MiniLM-L6-v2.")
