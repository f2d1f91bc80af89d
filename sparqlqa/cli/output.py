"""Output helpers shared by CLI commands: JSON, tables, progress (rich bars on a terminal, plain lines
otherwise)."""

from __future__ import annotations

__all__ = ["KB_NAME", "CleanText", "EtaEstimator", "PlainProgress", "byte_progress", "cell", "console",
           "count_progress", "device_option", "err_console", "eta_text", "note", "print_json", "safe", "safe_field",
           "warning"]

import json
import os
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click
from rich.console import Console

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


class KBName(CleanText):
    """A KB (or KB group) name: clean text, then its one canonical spelling
    (:func:`~sparqlqa.kb.knowledge_base.canonical_kb_name`: ``" tiny + movies"`` is ``movies+tiny``)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from sparqlqa.kb.kb_names import canonical_kb_name

        return canonical_kb_name(super().convert(value, param, ctx))


#: a KB name argument or option
KB_NAME = KBName()


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


#: :data:`_CONTROLS` less tab and line breaks: a CSV field keeps them (quoted), so the data stays the data
_FIELD_CONTROLS = {c: s for c, s in _CONTROLS.items() if c not in (0x09, 0x0A, 0x0D)}


def safe_field(text: object) -> str:
    r"""Text for one CSV field: like :func:`safe`, but tabs and line breaks stay (the CSV writer quotes them).

    >>> safe_field("two\nlines \x1b[31m")
    'two\nlines ␛[31m'
    """
    return str(text).translate(_FIELD_CONTROLS)


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


class EtaEstimator:
    """Rate and time left from the throughput measured after a warm-up.

    The start (loading a model, opening a store) and the first batch are no measure of what follows:
    the rate is counted from the end of the first batch that did some work, over the last ``window_s``
    seconds, and no estimate is given until ``min_span_s`` seconds of that were measured.

    >>> now = [0.0]
    >>> eta = EtaEstimator(clock=lambda: now[0])
    >>> for t, done in [(30.0, 100), (32.0, 300), (34.0, 500)]:  # 30 s of warm-up, then 100 items/s
    ...     now[0] = t
    ...     eta.update(done)
    >>> eta.rate(), eta.seconds_left(1_500)
    (100.0, 10.0)
    """

    def __init__(self, *, min_span_s: float = 2.0, window_s: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.min_span_s, self.window_s, self.clock = min_span_s, window_s, clock
        self.samples: deque[tuple[float, int]] = deque()

    def update(self, done: int) -> None:
        if done <= 0 or (self.samples and done <= self.samples[-1][1]):
            return
        now = self.clock()
        self.samples.append((now, done))
        while len(self.samples) > 2 and now - self.samples[1][0] >= self.window_s:
            self.samples.popleft()

    def rate(self) -> float | None:
        """Items per second since the warm-up, or ``None`` while too little was measured."""
        if len(self.samples) < 2:
            return None
        (t0, d0), (t1, d1) = self.samples[0], self.samples[-1]
        if t1 - t0 < self.min_span_s:
            return None
        return (d1 - d0) / (t1 - t0)

    def seconds_left(self, total: int) -> float | None:
        rate = self.rate()
        if rate is None or rate <= 0 or not self.samples:
            return None
        return max(0.0, (total - self.samples[-1][1]) / rate)


class PlainProgress:
    """Progress as periodic plain lines on stderr, for logs and pipes.

    A line when work starts, then at most one every ``every`` seconds, and one at the end:
    ``indexed 12,288/42,718 nodes (28%), 160 nodes/s, ETA 3m`` (rate and ETA from :class:`EtaEstimator`).
    """

    def __init__(self, verb: str, unit: str = "", *, every: float | None = None, size: Any = _count,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.verb, self.unit, self.size = verb, unit, size
        self.every = progress_every() if every is None else every
        self.clock = clock
        self.started = clock()
        self.estimator = EtaEstimator(clock=clock)
        self.last: float | None = None
        self.finished = False

    def update(self, done: int, total: int | None) -> None:
        now = self.clock()
        self.estimator.update(done)
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
        rate = self.estimator.rate()
        if done >= total:  # the whole run's average (when at least one a second) and duration
            if elapsed < 0.5:
                return text
            return f"{text}, {self._per_second(done / elapsed, unit)}{human_seconds(elapsed)}"
        if rate is not None and rate > 0:
            text += f", {self._per_second(rate, unit)}ETA {human_seconds((total - done) / rate)}"
        return text

    def _per_second(self, rate: float, unit: str) -> str:
        """``40 nodes/s, `` — nothing below one a second (3 slow steps are not "0 steps/s")."""
        return f"{self.size(rate)}{unit}/s, " if rate >= 1 else ""


def eta_text(estimator: EtaEstimator, total: int | None) -> str:
    """``ETA 3m`` for a progress bar, ``ETA …`` while the rate is still being measured."""
    left = estimator.seconds_left(total) if total else None
    return "ETA …" if left is None else f"ETA {human_seconds(left)}"


@contextmanager
def count_progress(description: str, verb: str = "done", unit: str = "") -> Iterator[Any]:
    """Progress over items; yields ``update(done, total)``: a rich bar on a terminal, else
    :class:`PlainProgress` lines (``verb 120/4,000 unit (3%), 40 unit/s, ETA 2m``)."""
    out = err_console()
    if not out.is_terminal:
        yield PlainProgress(verb, unit).update
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn  # a bar only: ask needs none

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[eta]}"))
    estimator = EtaEstimator()
    with Progress(*columns, console=out, transient=True) as progress:
        task = progress.add_task(description, total=None, eta="")

        def update(done: int, total: int) -> None:
            estimator.update(done)
            progress.update(task, completed=done, total=total, eta=eta_text(estimator, total))

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
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeElapsedColumn(),
               TextColumn("{task.fields[eta]}"))
    with Progress(*columns, console=err_console(), transient=True) as progress:
        tasks: dict[str, tuple[Any, EtaEstimator]] = {}

        def update(name: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = (progress.add_task(f"{description} {name}", total=total, eta=""), EtaEstimator())
            task, estimator = tasks[name]
            estimator.update(done)
            progress.update(task, completed=done, eta=eta_text(estimator, total))

        yield update


def _use_device(_ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value:
        os.environ["SPARQLQA_DEVICE"] = value  # read by get_embedder (sparqlqa.embed.embedders.DEVICE_ENV)


#: ``--device``: where torch embedders run (the ONNX default runs on the CPU; asking it for a GPU is an error)
device_option = click.option(
    "--device", metavar="DEVICE", expose_value=False, callback=_use_device,
    help="Device of torch embedders: cpu, cuda, cuda:1, mps (default: $SPARQLQA_DEVICE). The default ONNX "
    "embedder runs on the CPU: for a GPU add --embedder sentence-transformers:all-MiniLM-L6-v2.")
