"""``sparqlqa export``: a KB back out as RDF (streamed from the store, written atomically)."""

from __future__ import annotations

__all__ = ["FORMATS", "export"]

import sys
from pathlib import Path

import click

from sparqlqa.cli.output import KB_NAME, note, print_json
from sparqlqa.errors import ConfigError

#: ``--format`` names (``sparqlqa.kb.export.EXPORT_FORMATS``, kept here so ``--help`` imports no store)
FORMATS = ("turtle", "nt", "nq", "trig", "jsonld")
#: the format a file name's ending asks for when ``--format`` is not given
SUFFIXES = {".ttl": "turtle", ".turtle": "turtle", ".nt": "nt", ".nq": "nq", ".trig": "trig",
            ".jsonld": "jsonld", ".json": "jsonld"}


def choose_format(fmt: str | None, output: Path | None) -> str:
    """``--format``, else the one the output file's ending names, else Turtle.

    >>> choose_format(None, Path("kb.nq")), choose_format(None, None), choose_format("nt", Path("x.ttl"))
    ('nq', 'turtle', 'nt')
    """
    if fmt:
        return fmt
    if output is not None:
        return SUFFIXES.get(output.suffix.lower(), "turtle")
    return "turtle"


@click.command("export")
@click.argument("name", type=KB_NAME)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="File to write (replaced only once the export is complete); default: stdout.")
@click.option("--format", "fmt", type=click.Choice(FORMATS),
              help="RDF syntax (default: from the -o file's ending, else turtle). turtle and nt merge all "
              "graphs; nq, trig and jsonld keep named graphs.")
@click.option("--graph", metavar="IRI", help="Export one graph only: its IRI, or 'default' for the default graph.")
@click.option("--source-only", is_flag=True,
              help="Leave out what ingest added beside your files: sparqlqa's core vocabulary (sqa:text, "
              "sqa:Entity, ...) and the --ontology files.")
@click.option("--json", "as_json", is_flag=True, help="With -o: print what was written as JSON.")
def export(name: str, output: Path | None, fmt: str | None, graph: str | None, source_only: bool,
           as_json: bool) -> None:
    """Write knowledge base NAME as RDF, streamed from its store (memory stays flat for any size).

    Turtle and TriG use the prefixes your source files declared, plus the well-known ones.

    \b
    What ingest adds beside the triples of your files (left out by --source-only):
      - sparqlqa's core vocabulary (a dozen triples about sqa:text, sqa:Entity, ...)
      - the ontology files given with --ontology, and a STaRK dataset's bundled ontology
    An RDF file ingested and exported with --source-only gives the same graph back.
    Delimited-triple and STaRK sources have no RDF of their own: their export is the RDF
    sparqlqa made of them (minted IRIs, rdfs:label, skos:altLabel, sqa:text, rdf:type).

    \b
    Examples:
      sparqlqa export movies -o movies.ttl
      sparqlqa export movies --format nq --source-only > movies.nq
    """
    from sparqlqa.kb.export import export_prefixes, ingest_additions, oxigraph_of, write_rdf
    from sparqlqa.kb.knowledge_base import open_kb
    from sparqlqa.paths import atomic_writer

    if as_json and output is None:
        raise ConfigError("--json needs -o FILE (without it the RDF itself goes to stdout)")
    fmt = choose_format(fmt, output)
    with open_kb(name) as kb:
        store = oxigraph_of(kb)
        skip = ingest_additions(kb) if source_only else frozenset()
        prefixes = export_prefixes(kb.manifest.prefixes, source_only=source_only)
        if output is None:
            report = write_rdf(store, sys.stdout.buffer, fmt, graph=graph, prefixes=prefixes, skip=skip)
            sys.stdout.buffer.flush()
        else:
            with atomic_writer(output) as handle:
                report = write_rdf(store, handle, fmt, graph=graph, prefixes=prefixes, skip=skip)
    if as_json:
        print_json({**report.to_dict(), "kb": name, "output": str(output)})
    else:
        where = f" to {output}" if output is not None else ""
        note(f"exported {report.triples:,} {'quads' if fmt in ('nq', 'trig', 'jsonld') else 'triples'}{where}")
