"""Build a knowledge base from files, atomically.

The new store is built in a fresh generation folder; only when everything
loaded and the schema is computed does ``CURRENT`` switch to it (one atomic
rename).  A failure or a kill leaves the previous KB exactly as it was.

>>> import tempfile, os, pathlib
>>> os.environ["SPARQLQA_HOME"] = tempfile.mkdtemp()
>>> src = pathlib.Path(tempfile.mkdtemp()) / "kb.txt"
>>> _ = src.write_text("Alien|directed_by|Ridley Scott\\n")
>>> kb = ingest([src], kb="films", format="triples", options={"sep": "|"})
>>> kb.manifest.counts["sources"], [r.label for r in kb.schema.object_relations]
(1, ['directed by'])
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pyoxigraph import RdfFormat
from pyoxigraph import Store as OxStore

from sparqlqa import __version__
from sparqlqa.errors import IngestError, UnknownNameError
from sparqlqa.ingest.base import IngestFormat, IngestTarget, detect_format, format_choices, ingest_formats
from sparqlqa.kb import KnowledgeBase, Manifest, validate_kb_name, write_generation
from sparqlqa.ontologies import CORE, ontology_path
from sparqlqa.profile import DEFAULT_PROFILE, Profile
from sparqlqa.schema import compute_schema
from sparqlqa.store import OxigraphStore
from sparqlqa.vocab import default_base_iri

__all__ = ["IngestFormat", "IngestTarget", "ingest", "ingest_formats", "resolve_format"]

#: ``progress(source_name, bytes_done, bytes_total)``
SourceProgress = Callable[[str, int, int], None]


def resolve_format(source: Path, name: str | None, options: dict[str, Any]) -> IngestFormat:
    """The format object for ``source``: by ``name``, an RDF syntax name, or guessed."""
    from sparqlqa.ingest.rdf import RDF_FORMAT_NAMES

    if name and name.lower() in RDF_FORMAT_NAMES:
        options = {**options, "syntax": name.lower()}
        name = "rdf"
    chosen = name or detect_format(source)
    if chosen not in ingest_formats:
        raise UnknownNameError("ingest format", chosen, format_choices())
    return ingest_formats.get(chosen)(**options)


def load_ontology(store: OxStore, path: Path) -> None:
    try:
        store.load(path=str(path), format=RdfFormat.from_extension(path.suffix.lstrip(".")) or RdfFormat.TURTLE)
    except SyntaxError as exc:
        raise IngestError(f"malformed ontology: {exc.args[0] if exc.args else exc}", path=str(path),
                          line=exc.lineno) from None


def _load_sources(store: OxStore, sources: Sequence[Path], fmt: str | None, options: dict[str, Any],
                  base_iri: str, progress: SourceProgress | None) -> list[dict[str, Any]]:
    reports = []
    for source in sources:
        loader = resolve_format(source, fmt, options)
        source = loader.prepare(source)
        if not source.exists():
            raise IngestError("no such file or folder", path=str(source))
        step = (lambda done, total, _n=source.name: progress(_n, done, total)) if progress else None
        target = IngestTarget(store=store, base_iri=base_iri, progress=step)
        report = loader.load(source, target)
        for ontology in report.pop("ontologies", []):
            load_ontology(store, ontology_path(ontology))
        reports.append({"path": str(source.resolve()), "size": _size(source), **report})
    return reports


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def _build(directory: Path, name: str, sources: Sequence[Path], fmt: str | None, options: dict[str, Any],
           base_iri: str, ontologies: Sequence[Path], progress: SourceProgress | None,
           profile: Profile) -> Manifest:
    store = OxStore(str(directory / "store"))
    for ontology in [ontology_path(CORE), *ontologies]:
        load_ontology(store, ontology)
    reports = _load_sources(store, sources, fmt, options, base_iri, progress)
    store.flush()
    schema = compute_schema(OxigraphStore(store), profile)
    if profile != DEFAULT_PROFILE:  # a dump of a known store: its own names, no bookkeeping predicates
        from sparqlqa.remote.schema_sampling import apply_profile

        schema = apply_profile(schema, OxigraphStore(store), profile)
    manifest = Manifest(
        name=name, generation=directory.name, store={"kind": "oxigraph"}, base_iri=base_iri,
        sources=reports, schema=schema.to_dict(), profile=profile.to_dict(),
        counts={"triples": schema.triple_count, "nodes": schema.node_count, "types": len(schema.types),
                "relations": len(schema.relations), "sources": len(reports)},
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"), sparqlqa_version=__version__,
        extra={"ontologies": [str(p) for p in ontologies]},
    )
    store.optimize()
    del store
    gc.collect()
    manifest.write(directory)
    return manifest


def ingest(
    sources: Sequence[str | Path], *, kb: str, format: str | None = None, replace: bool = False,
    options: dict[str, Any] | None = None, base_iri: str | None = None,
    ontologies: Sequence[str | Path] = (), progress: SourceProgress | None = None,
    profile: Profile = DEFAULT_PROFILE,
) -> KnowledgeBase:
    """Build the KB ``kb`` from ``sources``; the old KB of that name stays intact on any failure."""
    name = validate_kb_name(kb)
    if not sources:
        raise IngestError("nothing to ingest: give at least one source file")
    paths = [Path(s).expanduser() for s in sources]

    def build(generation: Path) -> None:
        _build(generation, name, paths, format, options or {}, base_iri or default_base_iri(name),
               [Path(o) for o in ontologies], progress, profile)

    return write_generation(name, build, replace=replace)
