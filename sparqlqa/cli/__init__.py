"""The ``sparqlqa`` command line: a thin layer over the library.

Each command group lives in its own module under ``sparqlqa.cli`` and is
attached in :data:`COMMAND_MODULES`.  Modules import only light things at the
top so ``sparqlqa --help`` stays instant; heavy work is imported inside commands.
"""

from __future__ import annotations

__all__ = ["main"]

import atexit
import gc
import importlib
import json
import os
import sys
from typing import Any

import click

from sparqlqa.errors import SparqlqaError, os_error_hint
from sparqlqa.version import __version__

#: (command name, module, attribute): each attribute is a click command or group, imported when its command
#: is run or listed (``--help``): a command does not import every other command's module (issue 36)
COMMAND_MODULES: list[tuple[str, str, str]] = [
    ("ingest", "sparqlqa.cli.kb_commands", "ingest"),
    ("kbs", "sparqlqa.cli.kb_commands", "kbs"),
    ("schema", "sparqlqa.cli.kb_commands", "schema"),
    ("sparql", "sparqlqa.cli.kb_commands", "sparql"),
    ("export", "sparqlqa.cli.export_commands", "export"),
    ("samples", "sparqlqa.cli.kb_commands", "samples"),
    ("llm", "sparqlqa.cli.llm_commands", "llm"),
    ("ask", "sparqlqa.cli.ask_commands", "ask"),
    ("index", "sparqlqa.cli.ask_commands", "index"),
    ("eval", "sparqlqa.cli.eval_commands", "eval_"),
    ("serve", "sparqlqa.cli.serve_commands", "serve"),
    ("mcp", "sparqlqa.cli.serve_commands", "mcp"),
]


#: exit status of a usage mistake click catches (unknown option, missing argument), as click uses
USAGE_EXIT = 2


class SparqlqaGroup(click.Group):
    """Turns :class:`SparqlqaError` into a clean message and exit status (the README's table).

    With ``--json`` among a command's arguments the error is one JSON object on stdout,
    ``{"error": ..., "hint": ...}``, so a script reading stdout always gets JSON.  Any
    :class:`OSError` that no command turned into a :class:`~sparqlqa.errors.StorageError`
    (a full disk, a file where a folder is needed, ...) ends the same way, exit 1: the last
    resort, never a traceback.
    """

    def main(self, *args: Any, **kwargs: Any) -> Any:
        _skip_final_collection()
        return super().main(*args, **kwargs)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *(name for name, _, _ in COMMAND_MODULES)})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            known = [name for name, _, _ in COMMAND_MODULES]
            for name in [cmd_name] if cmd_name in known else known:  # a typo: all, for click's "Did you mean"
                _attach(name)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> object:
        as_json = "--json" in [*getattr(ctx, "_protected_args", ()), *ctx.args]
        try:
            return super().invoke(ctx)
        except SparqlqaError as exc:
            _fail(exc.message, exc.hint, exc.exit_code, as_json)
        except click.UsageError as exc:
            if not as_json:
                raise
            hint = f"see '{exc.ctx.command_path} --help'" if exc.ctx is not None else None
            _fail(exc.format_message(), hint, USAGE_EXIT, as_json)
        except BrokenPipeError:  # the reader of our output went away (``sparqlqa kbs | head -1``)
            _silence_stdout()
            sys.exit(1)
        except OSError as exc:
            _fail(_os_error_message(exc), os_error_hint(exc, _filename(exc)), 1, as_json)
        except KeyboardInterrupt:
            click.secho("interrupted", fg="yellow", err=True)
            sys.exit(130)
        return None


#: set once :func:`_skip_final_collection` registered its exit hook
_EXIT_HOOK: list[bool] = []


def _skip_final_collection() -> None:
    """At exit, take every object out of the garbage collector's reach (``gc.freeze``): CPython's
    finalisation otherwise walks the whole heap (numpy, ONNX Runtime, rich, sparqlqa's modules) once more,
    0.06 s CPU of a cold ``ask`` (benchmarks/RESULTS.md "Cold ask"), for memory the OS takes back anyway.
    Exit hooks still run and modules are still torn down; what is skipped is the ``__del__`` of objects
    left in reference cycles, which CPython does not promise at exit either (sparqlqa closes its files in
    ``with`` blocks, the KB and its query workers by ``close``)."""
    if not _EXIT_HOOK:
        _EXIT_HOOK.append(True)
        atexit.register(gc.freeze)


def _filename(exc: OSError) -> str | None:
    return None if exc.filename is None else os.fsdecode(exc.filename)


def _os_error_message(exc: OSError) -> str:
    """``FILE: reason`` (both files of a failed rename or link), or the OS's own words."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    files = [os.fsdecode(name) for name in (exc.filename, exc.filename2) if name is not None]
    if not files:
        return f"operating system error: {reason}"
    return f"{' -> '.join(files)}: {reason}"


def _silence_stdout() -> None:
    """Point stdout at /dev/null so exiting does not fail again flushing it."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file descriptor (tests' CliRunner)
        pass


def _fail(message: str, hint: str | None, code: int, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps({"error": message, "hint": hint}, ensure_ascii=False))
    else:
        click.secho(f"error: {message}" + (f"\n  hint: {hint}" if hint else ""), fg="red", err=True)
    sys.exit(code)


@click.group(cls=SparqlqaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sparqlqa")
def main() -> None:
    """Answer questions over RDF knowledge graphs with text (4StepFocus).

    Questions become triplet patterns, the patterns become SPARQL that narrows
    the candidates, candidates are ranked by embeddings and reranked by an LLM.
    Every answer keeps the SPARQL that produced it.
    """


def _attach(name: str) -> None:
    """Import the module of command ``name`` and attach the command (a module not written yet is skipped)."""
    for command, module_name, attribute in COMMAND_MODULES:
        if command != name:
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:  # not written yet
                continue
            raise
        main.add_command(getattr(module, attribute), name)
