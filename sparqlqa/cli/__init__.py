"""The ``sparqlqa`` command line: a thin layer over the library.

Each command group lives in its own module under ``sparqlqa.cli`` and is
attached in :data:`COMMAND_MODULES`.  Modules import only light things at the
top so ``sparqlqa --help`` stays instant; heavy work is imported inside commands.
"""

from __future__ import annotations

import importlib
import sys

import click

from sparqlqa import __version__
from sparqlqa.errors import SparqlqaError

#: (module, attribute) pairs: each attribute is a click command or group
COMMAND_MODULES: list[tuple[str, str]] = [
    ("sparqlqa.cli.kb_commands", "ingest"),
    ("sparqlqa.cli.kb_commands", "kbs"),
    ("sparqlqa.cli.kb_commands", "schema"),
    ("sparqlqa.cli.kb_commands", "sparql"),
    ("sparqlqa.cli.llm_commands", "llm"),
    ("sparqlqa.cli.ask_commands", "ask"),
    ("sparqlqa.cli.ask_commands", "index"),
    ("sparqlqa.cli.eval_commands", "eval_"),
]


class SparqlqaGroup(click.Group):
    """Turns :class:`SparqlqaError` into a clean message and exit status."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except SparqlqaError as exc:
            click.secho(f"error: {exc.full_message()}", fg="red", err=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.secho("interrupted", fg="yellow", err=True)
            sys.exit(130)


@click.group(cls=SparqlqaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sparqlqa")
def main() -> None:
    """Answer questions over RDF knowledge graphs with text (4StepFocus).

    Questions become triplet patterns, the patterns become SPARQL that narrows
    the candidates, candidates are ranked by embeddings and reranked by an LLM.
    Every answer keeps the SPARQL that produced it.
    """


def _attach_commands() -> None:
    for module_name, attribute in COMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:  # not written yet
                continue
            raise
        main.add_command(getattr(module, attribute))


_attach_commands()
