"""Ontologies: the bundled ones (sparqlqa's core vocabulary and one file per STaRK dataset) and
:func:`annotate_kb`, which adds a user's ontology file (labels, aliases, comments) to a built KB.

The bundled files live in the repository's top-level ``ontologies/`` folder; ``sparqlqa/data/ontologies``
is a link to it, so a checkout reads them in place and a built wheel carries copies as package data.
"""

from __future__ import annotations

__all__ = ["CORE", "annotate_kb", "load_ontology", "ontology_path"]

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pyoxigraph import RdfFormat
from pyoxigraph import Store as OxStore

from sparqlqa.errors import ConfigError, IngestError

if TYPE_CHECKING:
    from sparqlqa.kb.knowledge_base import KnowledgeBase

CORE = "sparqlqa"


def _ontology_dirs() -> list[Path]:
    return [Path(__file__).resolve().parent.parent / "data" / "ontologies"]


def ontology_path(name: str) -> Path:
    """The Turtle file of the bundled ontology ``name`` (e.g. ``sparqlqa``, ``stark-prime``)."""
    for folder in _ontology_dirs():
        path = folder / f"{name}.ttl"
        if path.is_file():
            return path
    raise ConfigError(f"no bundled ontology named {name!r}", hint=f"available: {', '.join(bundled())}")


def bundled() -> list[str]:
    names: set[str] = set()
    for folder in _ontology_dirs():
        if folder.is_dir():
            names.update(p.stem for p in folder.glob("*.ttl"))
    return sorted(names)


def load_ontology(store: OxStore, path: Path) -> None:
    """Load the ontology file ``path`` into ``store``; a malformed file fails with its line."""
    try:
        store.load(path=str(path), format=RdfFormat.from_extension(path.suffix.lstrip(".")) or RdfFormat.TURTLE)
    except SyntaxError as exc:
        raise IngestError(f"malformed ontology: {exc.args[0] if exc.args else exc}", path=str(path),
                          line=exc.lineno) from None


def annotate_kb(name: str, files: Sequence[str | Path]) -> tuple[KnowledgeBase, list[str]]:
    """Add what ontology ``files`` say of KB ``name``'s relations and node types (labels, aliases,
    comments, domains, ranges) to its schema, without re-ingesting: only the manifest is rewritten
    (atomically), the store is never written, so a remote endpoint can be annotated too.

    Returns the KB, reopened, and the IRIs the files describe that the KB lacks.  A file that is not
    Turtle fails with its line; files that describe nothing of the KB fail too (wrong IRIs).
    """

    from sparqlqa.errors import KBNotFound
    from sparqlqa.kb.knowledge_base import Manifest, current_generation, kb_lock, kb_root, open_kb
    from sparqlqa.kb.schema import Schema, annotate_schema, described_iris
    from sparqlqa.kb.store import OxigraphStore

    paths = [Path(f).expanduser().resolve() for f in files]
    if not paths:
        raise IngestError("no ontology file given")
    ontology = OxStore()
    for path in paths:
        if not path.is_file():
            raise IngestError("no such file", path=str(path))
        load_ontology(ontology, path)
    with kb_lock(name):
        generation = current_generation(kb_root(name))
        if generation is None:
            raise KBNotFound(name)
        manifest = Manifest.read(generation / "manifest.json")
        schema, unknown = annotate_schema(Schema.from_dict(manifest.schema), OxigraphStore(ontology))
        if len(unknown) == len(described_iris(OxigraphStore(ontology))):
            example = f" (it describes {unknown[0]})" if unknown else ""
            raise IngestError(f"describes none of the relations or node types of KB {name!r}{example}",
                              path=", ".join(map(str, paths)),
                              hint=f"use the full IRIs that 'sparqlqa schema {name}' shows")
        manifest.schema = schema.to_dict()
        manifest.extra["ontologies"] = [*manifest.extra.get("ontologies", []), *map(str, paths)]
        manifest.write(generation)
    return open_kb(name), unknown
