"""Delimited triple files: ``head SEP relation SEP tail`` per line (MetaQA ``|``, PathQuestion tab).

One IRI per distinct entity name, with ``rdfs:label`` = the name; one property
per relation name, labelled from it.  Names are kept exactly as given
(``_inverse`` relations included).
"""

from __future__ import annotations

__all__ = ["DelimitedTriples"]

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from pyoxigraph import Literal, NamedNode, Quad

from sparqlqa.errors import IngestError
from sparqlqa.ingest.base import IngestFormat, IngestTarget, ingest_formats, open_source, read_lines
from sparqlqa.kb.vocab import RDF, RDFS, SQA

BATCH = 50_000
#: how many recent entity names :meth:`DelimitedTriples._quads` remembers (bounded memory)
ENTITY_CACHE = 1 << 17


def _guess_separator(first_line: str) -> str:
    for candidate in ("\t", "|"):
        if first_line.count(candidate) == 2:
            return candidate
    return "\t"


@ingest_formats.register("triples")
class DelimitedTriples(IngestFormat):
    """Option ``sep``: the field separator (default: tab or ``|``, guessed from line 1)."""

    suffixes: ClassVar[tuple[str, ...]] = (".tsv", ".txt", ".psv")

    def _quads(self, source: Path, target: IngestTarget, lines: Iterator[tuple[int, str]],
               sep: str, counts: dict[str, int]) -> Iterator[Quad]:
        # An entity's label and type quads are yielded only when its name is not in ``nodes``
        # (the store would drop the repeats anyway); ``nodes`` is bounded, so memory stays
        # constant whatever the file size.
        nodes: dict[str, NamedNode] = {}
        relations: dict[str, NamedNode] = {}
        label, rdf_type, entity_class = RDFS.label, RDF.type, SQA.Entity
        for number, line in lines:
            counts["at_line"] = number
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            fields = line.split(sep)
            if len(fields) != 3 or not all(f.strip() for f in fields):
                raise IngestError(
                    f"expected 'head{sep}relation{sep}tail', found {len(fields)} field(s): {line[:80]!r}",
                    path=str(source), line=number,
                    hint="check --sep (MetaQA uses '|', PathQuestion a tab)",
                )
            head_name, relation_name, tail_name = (f.strip() for f in fields)
            if len(nodes) >= ENTITY_CACHE - 1:
                nodes.clear()
            for name in (head_name, tail_name):
                if name not in nodes:
                    node = nodes[name] = target.entity(name)
                    yield Quad(node, label, Literal(name))
                    yield Quad(node, rdf_type, entity_class)
            relation = relations.get(relation_name)
            if relation is None:
                relation = relations[relation_name] = target.relation(relation_name)
            yield Quad(nodes[head_name], relation, nodes[tail_name])
            counts["lines"] += 1

    def load(self, source: Path, target: IngestTarget) -> dict[str, Any]:
        counts = {"lines": 0, "at_line": 0}
        with open_source(source, target.progress) as raw:
            numbered = _decoded(source, read_lines(raw, source))
            first = next(numbered, None)
            if first is None:
                return {"format": "triples", "lines": 0}
            sep = self.options.get("sep") or _guess_separator(first[1])
            sep = sep.encode().decode("unicode_escape") if sep == "\\t" else sep

            def all_lines() -> Iterator[tuple[int, str]]:
                yield first
                yield from numbered

            target.add(self._quads(source, target, all_lines(), sep, counts))
        target.declare_relations()
        return {"format": "triples", "separator": sep, "lines": counts["lines"]}


def _decoded(source: Path, lines: Iterator[tuple[int, bytes]]) -> Iterator[tuple[int, str]]:
    """Lines as text; a line that is not UTF-8 is an error naming it."""
    for number, line in lines:
        try:
            yield number, line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise IngestError(f"not UTF-8 text: {exc.reason}", path=str(source), line=number) from None
