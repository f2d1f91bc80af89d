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

__all__ = ["IngestFormat", "IngestTarget", "check_replace", "ingest", "ingest_formats", "resolve_format"]

import gc
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pyoxigraph import RdfFormat, Triple, parse, serialize
from pyoxigraph import Store as OxStore

from sparqlqa.errors import IngestError, KBError, UnknownNameError
from sparqlqa.ingest.base import (
    IngestFormat,
    IngestTarget,
    SourceReport,
    detect_format,
    format_choices,
    ingest_formats,
)
from sparqlqa.kb.data_names import DataName, find_data_names, with_data_names
from sparqlqa.kb.export import ADDED_FILE
from sparqlqa.kb.kb_names import validate_kb_name
from sparqlqa.kb.knowledge_base import KnowledgeBase, Manifest, current_generation, kb_root, write_generation
from sparqlqa.kb.ontologies import CORE, load_ontology, ontology_path
from sparqlqa.kb.profile import DEFAULT_PROFILE, Profile
from sparqlqa.kb.schema import Schema, compute_schema
from sparqlqa.kb.store import OxigraphStore
from sparqlqa.kb.vocab import default_base_iri
from sparqlqa.paths import atomic_writer
from sparqlqa.version import __version__

#: a replace keeping fewer than this share of the KB's data triples needs ``force``
MIN_REPLACE_FRACTION = 0.5
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


def _load_sources(store: OxStore, sources: Sequence[Path], fmt: str | None, options: dict[str, Any],
                  base_iri: str, progress: SourceProgress | None, ontologies: list[Path]) -> list[SourceReport]:
    """Load every source into ``store``; the ontologies a format asks for are appended to ``ontologies``."""
    reports = []
    for source in sources:
        loader = resolve_format(source, fmt, options)
        source = loader.prepare(source)
        if not source.exists():
            raise IngestError("no such file or folder", path=str(source))
        step = (lambda done, total, _n=source.name: progress(_n, done, total)) if progress else None
        target = IngestTarget(store=store, base_iri=base_iri, progress=step)
        report = SourceReport.of(str(source.resolve()), _size(source), loader.load(source, target))
        ontologies.extend(ontology_path(name) for name in report.ontologies)
        reports.append(report)
    return reports


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def _build(directory: Path, name: str, sources: Sequence[Path], fmt: str | None, options: dict[str, Any],
           base_iri: str, ontologies: Sequence[Path], progress: SourceProgress | None,
           profile: Profile, check: Callable[[int], None]) -> Manifest:
    store = OxStore(str(directory / "store"))
    loaded: list[Path] = [ontology_path(CORE), *ontologies]
    reports = _load_sources(store, sources, fmt, options, base_iri, progress, loaded)
    data_triples = len(store)
    check(data_triples)
    added = _add_ontologies(store, loaded)
    store.flush()
    schema = compute_schema(OxigraphStore(store), profile)
    if profile != DEFAULT_PROFILE:  # a dump of a known store: its own names, no bookkeeping predicates
        from sparqlqa.remote.schema_sampling import apply_profile

        schema = apply_profile(schema, OxigraphStore(store), profile)
    schema, data_names = _data_names(OxigraphStore(store), schema, profile)
    manifest = Manifest(
        name=name, generation=directory.name, store={"kind": "oxigraph"}, base_iri=base_iri,
        sources=[report.to_dict() for report in reports], schema=schema.to_dict(), profile=profile.to_dict(),
        counts={"triples": schema.triple_count, "nodes": schema.node_count, "types": len(schema.types),
                "relations": len(schema.relations), "sources": len(reports), "data_triples": data_triples},
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"), sparqlqa_version=__version__,
        extra={"ontologies": [str(p) for p in ontologies], "data_names": [n.to_dict() for n in data_names]},
        prefixes=_source_prefixes(reports),
    )
    store.optimize()
    del store
    gc.collect()
    with atomic_writer(directory / ADDED_FILE) as handle:  # once the store is closed, like the manifest
        serialize(added, handle, RdfFormat.N_TRIPLES)
    manifest.write(directory)
    return manifest


def _data_names(store: OxigraphStore, schema: Schema, profile: Profile) -> tuple[Schema, list[DataName]]:
    """The columns that name (and identify) nodes in the data: the profile's, else those found
    (:mod:`sparqlqa.kb.data_names`); the naming ones join the schema's label predicates, after theirs."""
    if profile.name_predicates:
        names = [DataName("", p) for p in profile.name_predicates]
    else:
        names = find_data_names(store, schema)
    return with_data_names(schema, names), names


def _add_ontologies(store: OxStore, paths: Sequence[Path]) -> list[Triple]:
    """Load the ontologies after the sources; the triples they add (those no source holds) are returned, to
    be written to the generation's ``added.nt``, so ``export --source-only`` can leave out exactly those."""
    ontology = OxStore()
    for path in dict.fromkeys(paths):
        load_ontology(ontology, path)
    added = [quad for quad in ontology if quad not in store]
    store.bulk_extend(added)
    return [quad.triple for quad in added]


def _source_prefixes(reports: list[SourceReport]) -> dict[str, str]:
    """The prefixes the sources declare; the first file to declare a name gives its IRI."""
    prefixes: dict[str, str] = {}
    for report in reports:
        for prefix, iri in report.prefixes.items():
            prefixes.setdefault(prefix, iri)
    return prefixes


def _old_data_triples(name: str) -> int | None:
    """Data triples (beyond the ontologies) of the current KB ``name``; ``None`` when there is none."""
    generation = current_generation(kb_root(name))
    if generation is None:  # none, or damaged (no generation left to count)
        return None
    try:
        counts = Manifest.read(generation / "manifest.json").counts
    except KBError:  # an unreadable manifest: the KB cannot be opened, rebuilding it is the way out
        return None
    if "data_triples" in counts:
        return int(counts["data_triples"])
    core = sum(1 for _ in parse(path=str(ontology_path(CORE)), format=RdfFormat.TURTLE))
    return max(0, int(counts.get("triples", 0)) - core)  # built before data_triples was recorded


def check_replace(name: str, sources: Sequence[Path], new: int, old: int | None, *, force: bool) -> None:
    """Refuse a replace that would lose the KB's data: no data triples at all, or (unless ``force``)
    fewer than :data:`MIN_REPLACE_FRACTION` of the data triples the KB has now.

    >>> check_replace("films", [Path("new.nt")], 9_000, 10_000, force=False)
    >>> check_replace("films", [Path("new.nt")], 15, 4_813, force=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sparqlqa.errors.IngestError: new.nt: refused ... 15 data triples, it has 4,813 (less than 50% would remain)...
    """
    where = ", ".join(str(s) for s in sources)
    if old is None:
        return
    if new == 0:
        raise IngestError(f"refused to replace KB {name!r} ({old:,} data triples): the sources contain no "
                          "data triples (empty, or only blank lines/comments); the old KB is kept", path=where,
                          hint=f"check the files; to delete the KB, run 'sparqlqa kbs remove {name}'")
    if not force and new < MIN_REPLACE_FRACTION * old:
        raise IngestError(f"refused to replace KB {name!r}: the sources give {new:,} data triples, it has "
                          f"{old:,} (less than {MIN_REPLACE_FRACTION:.0%} would remain); the old KB is kept",
                          path=where, hint="check the sources; pass --force (Python: force=True) to replace anyway")


def ingest(
    sources: Sequence[str | Path], *, kb: str, format: str | None = None, replace: bool = False,
    options: dict[str, Any] | None = None, base_iri: str | None = None,
    ontologies: Sequence[str | Path] = (), progress: SourceProgress | None = None,
    profile: Profile = DEFAULT_PROFILE, force: bool = False,
) -> KnowledgeBase:
    """Build the KB ``kb`` from ``sources``; the old KB of that name stays intact on any failure.

    A replace is refused (:func:`check_replace`) when the sources hold no data triples, or fewer
    than half the KB's current data triples unless ``force``.
    """
    name = validate_kb_name(kb)
    if not sources:
        raise IngestError("nothing to ingest: give at least one source file")
    paths = [Path(s).expanduser() for s in sources]

    def build(generation: Path) -> None:
        old = _old_data_triples(name) if replace else None

        def check(new: int) -> None:
            check_replace(name, paths, new, old, force=force)

        _build(generation, name, paths, format, options or {}, base_iri or default_base_iri(name),
               [Path(o) for o in ontologies], progress, profile, check)

    return write_generation(name, build, replace=replace)
