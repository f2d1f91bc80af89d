"""RDF files (N-Triples, N-Quads, Turtle, TriG, RDF/XML, N3, JSON-LD), plain or .gz/.bz2."""

from __future__ import annotations

__all__ = ["RDF_FORMAT_NAMES", "RdfFileFormat"]

from pathlib import Path
from typing import Any, ClassVar

from pyoxigraph import RdfFormat, parse

from sparqlqa.errors import IngestError
from sparqlqa.ingest.base import (
    MAX_LINE_BYTES,
    RDF_SYNTAXES,
    IngestFormat,
    IngestTarget,
    ingest_formats,
    open_source,
    read_lines,
    strip_compression,
)

RDF_SUFFIXES: dict[str, RdfFormat] = {
    ".nt": RdfFormat.N_TRIPLES,
    ".ntriples": RdfFormat.N_TRIPLES,
    ".nq": RdfFormat.N_QUADS,
    ".nquads": RdfFormat.N_QUADS,
    ".ttl": RdfFormat.TURTLE,
    ".turtle": RdfFormat.TURTLE,
    ".trig": RdfFormat.TRIG,
    ".rdf": RdfFormat.RDF_XML,
    ".owl": RdfFormat.RDF_XML,
    ".xml": RdfFormat.RDF_XML,
    ".n3": RdfFormat.N3,
    ".jsonld": RdfFormat.JSON_LD,
}

#: the ``--format`` names of RDF syntaxes that ``--help`` and hints list (the others are aliases)

#: ``--format`` names for RDF syntaxes
RDF_FORMAT_NAMES: dict[str, RdfFormat] = {
    "nt": RdfFormat.N_TRIPLES,
    "ntriples": RdfFormat.N_TRIPLES,
    "nq": RdfFormat.N_QUADS,
    "nquads": RdfFormat.N_QUADS,
    "turtle": RdfFormat.TURTLE,
    "ttl": RdfFormat.TURTLE,
    "trig": RdfFormat.TRIG,
    "rdfxml": RdfFormat.RDF_XML,
    "xml": RdfFormat.RDF_XML,
    "n3": RdfFormat.N3,
    "jsonld": RdfFormat.JSON_LD,
}


def _rdf_syntax(source: Path, syntax: str | None) -> RdfFormat:
    if syntax:
        try:
            return RDF_FORMAT_NAMES[syntax.lower()]
        except KeyError:
            raise IngestError(f"unknown RDF syntax {syntax!r}", path=str(source),
                              hint="use one of: " + ", ".join(sorted(RDF_FORMAT_NAMES))) from None
    name = strip_compression(source.name.lower())
    for suffix, fmt in RDF_SUFFIXES.items():
        if name.endswith(suffix):
            return fmt
    raise IngestError("cannot tell the RDF syntax from the file name", path=str(source),
                      hint="pass --format " + "|".join(RDF_SYNTAXES))


def _line_of(exc: SyntaxError) -> int | None:
    if exc.lineno:
        return int(exc.lineno)
    details = exc.args[1] if len(exc.args) > 1 else None
    if isinstance(details, tuple) and len(details) > 1 and isinstance(details[1], int):
        return details[1]
    return None


def _too_long(source: Path) -> IngestError:
    """The error for a token (a literal, an IRI) past :data:`MAX_LINE_BYTES`, naming the first long line."""
    line = None
    try:
        with open_source(source) as handle:
            for _ in read_lines(handle, source):
                pass
    except IngestError as exc:
        line = exc.line
    return IngestError(f"a literal or IRI longer than the {MAX_LINE_BYTES // (1024 * 1024)} MiB maximum"
                       " (or a literal never closed)", path=str(source), line=line,
                       hint="check the quotes on that line; split very long texts")


#: syntaxes whose prefix declarations are remembered at ingest
PREFIX_SYNTAXES = (RdfFormat.TURTLE, RdfFormat.TRIG, RdfFormat.N3)
#: the prefix declarations read are those before this many quads (they are at the top in practice);
#: the second, partial read of the file stays short whatever its size
PREFIX_SCAN_QUADS = 10_000


def _declared_prefixes(source: Path, syntax: RdfFormat) -> dict[str, str]:
    """The ``@prefix``/``PREFIX`` declarations near the top of a Turtle, TriG or N3 file (name → IRI).

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "x.ttl"
    >>> _ = path.write_text("@prefix dbo: <http://dbpedia.org/ontology/> .\\n<http://e/a> dbo:p 1 .\\n")
    >>> _declared_prefixes(path, RdfFormat.TURTLE)
    {'dbo': 'http://dbpedia.org/ontology/'}
    """
    if syntax not in PREFIX_SYNTAXES:
        return {}
    with open_source(source) as handle:
        parser = parse(input=handle, format=syntax, lenient=True)
        try:
            for count, _quad in enumerate(parser):
                if count >= PREFIX_SCAN_QUADS:
                    break
        except (SyntaxError, OSError, ValueError, MemoryError):  # the load itself has succeeded: keep what was read
            pass
        return dict(parser.prefixes)


@ingest_formats.register("rdf")
class RdfFileFormat(IngestFormat):
    """Streams an RDF file into the store with Oxigraph's bulk loader.

    Option ``syntax``: one of :data:`RDF_FORMAT_NAMES` (default: from the file name).
    """

    suffixes: ClassVar[tuple[str, ...]] = tuple(RDF_SUFFIXES)

    def load(self, source: Path, target: IngestTarget) -> dict[str, Any]:
        syntax = _rdf_syntax(source, self.options.get("syntax"))
        before = len(target.store)
        with open_source(source, target.progress) as handle:
            try:
                target.store.bulk_load(input=handle, format=syntax, base_iri=self.options.get("base_iri"))
            except SyntaxError as exc:
                message = str(exc.args[0]) if exc.args else str(exc)
                raise IngestError(f"malformed {syntax.name}: {message}", path=str(source),
                                  line=_line_of(exc), hint="fix the file and ingest again") from None
            except MemoryError:  # Oxigraph's parser buffer is full: one token longer than it allows
                raise _too_long(source) from None
            except (OSError, EOFError, ValueError) as exc:
                raise IngestError(f"cannot read: {exc}", path=str(source)) from exc
        return {"format": f"rdf/{syntax.name}", "quads_added": len(target.store) - before,
                "prefixes": _declared_prefixes(source, syntax)}
