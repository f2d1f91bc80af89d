"""What a KB's first question would build, built at ingest (issue 36): the derived files kept with the KB
generation that the offline reader opens on every ask.

Each is built by the very function an ask calls (it loads the file when there is one, else builds and saves
it): :meth:`LabelIndex.for_kb <sparqlqa.kb.labels.LabelIndex.for_kb>` (``artifacts/labels``), the table
model of a graph mapped from tables (:func:`~sparqlqa.strategies.offline.tables.model_file.table_model`,
``artifacts/offline/table-model.json``) and the value-relation samples
(:func:`~sparqlqa.strategies.offline.form_triplets.value_relations`, ``artifacts/offline/value-relations.json``).
A KB ingested without them (an older version, a killed ingest) still gets them on its first ask.

Not built here: the relation and type verbalisations' vectors and the node index, which need an embedder
(``sparqlqa index``, or the first ask for the few relation texts).

>>> from sparqlqa.kb.knowledge_base import KnowledgeBase
>>> from sparqlqa.kb.store import OxigraphStore
>>> store = OxigraphStore.in_memory()
>>> _ = store.oxstore.update('INSERT DATA { <http://x/g> <http://www.w3.org/2000/01/rdf-schema#label> "Green" }')
>>> [built.name for built in build_kb_artifacts(KnowledgeBase.in_memory("colours", store))]
['label index', 'value relations']
"""

from __future__ import annotations

__all__ = ["BuiltArtifact", "build_kb_artifacts"]

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sparqlqa.kb.knowledge_base import KnowledgeBase

#: ``progress(done, total)`` over the artefacts
ArtifactProgress = Callable[[int, int], None]


@dataclass(frozen=True)
class BuiltArtifact:
    """One artefact built (or found already built) and the wall seconds it took."""

    name: str
    seconds: float

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "seconds": round(self.seconds, 3)}


def _label_index(kb: KnowledgeBase) -> None:
    from sparqlqa.kb.labels import LabelIndex

    LabelIndex.for_kb(kb)


def _table_model(kb: KnowledgeBase) -> None:
    from sparqlqa.strategies.offline.tables.model_file import table_model

    table_model(kb)


def _value_relations(kb: KnowledgeBase) -> None:
    from sparqlqa.strategies.offline.form_triplets import value_relations

    value_relations(kb)


def _builders(kb: KnowledgeBase) -> list[tuple[str, Callable[[KnowledgeBase], None]]]:
    """The artefacts ``kb`` uses: none for a remote endpoint; the table model only for a graph mapped from
    tables (other KBs' asks never import it)."""
    from sparqlqa.kb.data_names import mapped_from_tables

    if not kb.can_scan():
        return []
    tables = [("table model", _table_model)] if mapped_from_tables(kb) else []
    return [("label index", _label_index), *tables, ("value relations", _value_relations)]


def build_kb_artifacts(kb: KnowledgeBase, progress: ArtifactProgress | None = None) -> list[BuiltArtifact]:
    """Build (and save with the generation) what the first ask of ``kb`` would otherwise build; each
    builder loads an artefact already saved instead. ``progress(done, total)`` after each."""
    builders = _builders(kb)
    built = []
    if progress is not None and builders:
        progress(0, len(builders))
    for done, (name, build) in enumerate(builders, start=1):
        started = time.perf_counter()
        build(kb)
        built.append(BuiltArtifact(name, time.perf_counter() - started))
        if progress is not None:
            progress(done, len(builders))
    return built
