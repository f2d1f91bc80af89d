"""The ingestion contract: a format turns one source into quads in a target store.

Each format implements one method, :meth:`IngestFormat.load`, and registers by
name in :data:`ingest_formats` exactly as a plugin would.
"""

from __future__ import annotations

__all__ = ["MAX_LINE_BYTES", "RDF_SYNTAXES", "IngestFormat", "IngestTarget", "SourceReport", "detect_format",
           "format_choices", "ingest_formats", "open_source", "read_lines", "strip_compression"]

import bz2
import gzip
import io
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, ClassVar, cast
from urllib.parse import quote

from pyoxigraph import Literal, NamedNode, Quad
from pyoxigraph import Store as OxStore

from sparqlqa.errors import IngestError
from sparqlqa.kb.vocab import OWL, RDF, RDFS
from sparqlqa.registry import Registry

#: ``progress(bytes_done, bytes_total)`` for the source being loaded
Progress = Callable[[int, int], None]
#: the RDF syntaxes the ``rdf`` format reads (``--format`` accepts each by name)
RDF_SYNTAXES: tuple[str, ...] = ("nt", "nq", "turtle", "trig", "rdfxml", "n3", "jsonld")
#: the longest line (delimited files) or single token/literal (RDF files, Oxigraph's own parser limit)
#: a source may hold; past it ingest stops with an error naming the line, so memory stays bounded
MAX_LINE_BYTES = 16 * 1024 * 1024
UTF8_BOM = b"\xef\xbb\xbf"


@dataclass
class IngestTarget:
    """The store being built, and how to mint IRIs in it."""

    store: OxStore
    base_iri: str
    progress: Progress | None = None
    declared_relations: dict[str, str] = field(default_factory=dict)

    def entity(self, name: str) -> NamedNode:
        """The IRI for an entity called ``name`` (same name → same node)."""
        return NamedNode(self.base_iri + "entity/" + quote(name, safe=""))

    def relation(self, name: str) -> NamedNode:
        """The IRI of a relation, declared with a label when the load finishes."""
        iri = self.base_iri + "relation/" + quote(name, safe="")
        self.declared_relations.setdefault(iri, name)
        return NamedNode(iri)

    def type_class(self, name: str) -> NamedNode:
        return NamedNode(self.base_iri + "type/" + quote(name, safe=""))

    def add(self, quads: Iterable[Quad]) -> None:
        self.store.bulk_extend(quads)

    def declare_relations(self) -> None:
        """Give each minted relation a type and a label from its name (kept as given)."""
        from sparqlqa.kb.schema import humanize

        quads = []
        for iri, name in self.declared_relations.items():
            node = NamedNode(iri)
            quads.append(Quad(node, RDF.type, OWL.ObjectProperty))
            quads.append(Quad(node, RDFS.label, Literal(humanize(name))))
        self.add(quads)


@dataclass
class SourceReport:
    """What ingest recorded of one source: its path and size, the prefixes it declares, the ontologies its
    format asks for, and the format's own report (``details``: counts, the syntax, a separator ...).
    Its JSON form (``to_dict``) is the source's entry in the manifest: path, size and the details."""

    path: str
    size: int
    details: dict[str, object] = field(default_factory=dict)
    prefixes: dict[str, str] = field(default_factory=dict)
    ontologies: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, path: str, size: int, report: Mapping[str, object]) -> SourceReport:
        """A format's report (what :meth:`IngestFormat.load` returned) with its path and size."""
        prefixes, ontologies = report.get("prefixes"), report.get("ontologies")
        return cls(path=path, size=size,
                   details={k: v for k, v in report.items() if k not in ("prefixes", "ontologies")},
                   prefixes={str(k): str(v) for k, v in prefixes.items()} if isinstance(prefixes, Mapping) else {},
                   ontologies=[str(n) for n in ontologies] if isinstance(ontologies, (list, tuple)) else [])

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "size": self.size, **self.details}


class IngestFormat(ABC):
    """One input format.  Options come as keyword arguments of the constructor."""

    #: the name the format is registered under in :data:`ingest_formats` (the registry sets it)
    name: ClassVar[str] = ""
    #: file name endings (after any .gz/.bz2) this format recognises
    suffixes: ClassVar[tuple[str, ...]] = ()

    def __init__(self, **options: Any) -> None:
        self.options = options

    @abstractmethod
    def load(self, source: Path, target: IngestTarget) -> dict[str, Any]:
        """Add ``source``'s content to ``target``; return a small report (counts)."""

    def prepare(self, source: Path) -> Path:
        """The local path to read for ``source`` (a format may download pseudo-sources like ``hf:prime``)."""
        return source

    @classmethod
    def recognises(cls, source: Path) -> bool:
        name = strip_compression(source.name.lower())
        return any(name.endswith(suffix) for suffix in cls.suffixes)


ingest_formats: Registry[type[IngestFormat]] = Registry(
    "ingest format",
    ("sparqlqa.ingest.rdf", "sparqlqa.ingest.delimited", "sparqlqa.ingest.stark"),
    name_attribute="name",
)


def strip_compression(name: str) -> str:
    for suffix in (".gz", ".bz2"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def format_choices() -> list[str]:
    """Every ``--format`` name a user may give: the registered formats, with ``rdf`` followed by its syntaxes.

    >>> format_choices()[:3]
    ['rdf', 'nt', 'nq']
    """

    names: list[str] = []
    for name in ingest_formats.names():
        names.extend([name, *RDF_SYNTAXES] if name == "rdf" else [name])
    return names


def detect_format(source: Path) -> str:
    """Guess the format name of ``source`` from its name (and, for folders, content)."""
    for name in ingest_formats.names():
        if ingest_formats.get(name).recognises(source):
            return name
    raise IngestError(
        "cannot tell the format of this source from its name",
        path=str(source),
        hint="pass --format (one of: " + ", ".join(format_choices()) + ")",
    )


class CountingReader(io.RawIOBase):
    """Wraps a binary file and reports how many compressed bytes were read."""

    def __init__(self, raw: IO[bytes], total: int, progress: Progress | None) -> None:
        self._raw = raw
        self._total = total
        self._progress = progress

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._raw.read(len(buffer))
        buffer[: len(data)] = data
        if self._progress is not None:
            self._progress(self._raw.tell(), self._total)
        return len(data)


def open_source(source: Path, progress: Progress | None = None) -> IO[bytes]:
    """Open ``source`` for binary reading, decompressing ``.gz``/``.bz2`` transparently.

    A UTF-8 byte order mark at the start is skipped (it is not part of the first name or IRI).
    """
    try:
        raw = source.open("rb")
    except OSError as exc:
        raise IngestError(f"cannot open: {exc.strerror or exc}", path=str(source)) from exc
    counted = io.BufferedReader(CountingReader(raw, source.stat().st_size, progress), 1 << 20)
    name = source.name.lower()
    handle: io.BufferedReader[CountingReader] | gzip.GzipFile | bz2.BZ2File = counted
    if name.endswith(".gz"):
        handle = gzip.GzipFile(fileobj=counted)
    elif name.endswith(".bz2"):
        handle = bz2.BZ2File(counted)
    try:
        if handle.peek(len(UTF8_BOM))[: len(UTF8_BOM)] == UTF8_BOM:
            handle.read(len(UTF8_BOM))
    except (OSError, EOFError) as exc:
        handle.close()
        raise IngestError(f"cannot read: {exc}", path=str(source)) from exc
    return cast(IO[bytes], handle)


def read_lines(handle: IO[bytes], source: Path, limit: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes]]:
    """``(line number, line bytes)`` of ``handle``, refusing any line longer than ``limit`` bytes.

    Memory stays bounded by ``limit`` whatever the file holds (one giant line, no newline at all).
    """
    number = 0
    while True:
        line = handle.readline(limit + 1)
        if not line:
            return
        number += 1
        if len(line) > limit and not line.endswith(b"\n"):
            raise IngestError(f"line longer than the {limit // (1024 * 1024)} MiB maximum", path=str(source),
                              line=number, hint="split the line, or check that this is a text file of triples")
        yield number, line
