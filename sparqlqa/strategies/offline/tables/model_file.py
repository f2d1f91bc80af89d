"""The table model kept with the KB generation (``artifacts/offline/table-model.json``): built by three
grouped scans of the whole graph (1.6 s CPU on a 40K-triple graph, against 0.03 s to read back), so it is
built once per generation, not at every process start (issue 36).

It is derived data: one built from other data names or ontologies (``kbs annotate``) is stale and replaced
silently; an unreadable file is rebuilt after a warning (a ``logging`` warning), as the node index does.
"""

from __future__ import annotations

__all__ = ["FILE", "StoredModel", "table_model"]

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyoxigraph import Literal, NamedNode

from sparqlqa.errors import StorageError
from sparqlqa.paths import atomic_write_bytes
from sparqlqa.strategies.offline.tables.model import Column, Link, TableModel, build_table_model

if TYPE_CHECKING:
    from sparqlqa.kb.knowledge_base import KnowledgeBase

FORMAT = "sparqlqa-table-model"
#: bump when the model or how it is built changes: older files are then rebuilt
VERSION = 1
FILE = "table-model.json"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StoredModel:
    """What the file holds: the model (None: the KB is not read as tables) and what it was built from."""

    source: str
    model: TableModel | None

    def to_dict(self) -> dict[str, Any]:
        model = self.model
        return {"format": FORMAT, "version": VERSION, "source": self.source, "model": None if model is None else {
            "classes": {iri: list(words) for iri, words in model.classes.items()},
            "columns": [[c.iri, c.cls, list(c.words), c.numeric, c.name, c.key] for c in model.columns],
            "links": [[link.iri, link.head, link.tail] for link in model.links],
            "values": {key: [[p, c, *_literal_fields(lit)] for p, c, lit in rows]
                       for key, rows in model.values.items()}}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StoredModel | None:
        """The stored model; None for another format or version (stale)."""
        if data.get("format") != FORMAT or data.get("version") != VERSION:
            return None
        raw = data["model"]
        if raw is None:
            return cls(str(data["source"]), None)
        model = TableModel(
            {iri: tuple(words) for iri, words in raw["classes"].items()},
            [Column(i, c, tuple(w), bool(n), bool(m), bool(k)) for i, c, w, n, m, k in raw["columns"]],
            [Link(i, h, t) for i, h, t in raw["links"]],
            {key: [(p, c, _literal(v, d, lang)) for p, c, v, d, lang in rows] for key, rows in raw["values"].items()})
        return cls(str(data["source"]), model)


def _literal_fields(literal: Literal) -> list[str | None]:
    return [literal.value, literal.datatype.value, literal.language]


def _literal(value: str, datatype: str, language: str | None) -> Literal:
    return Literal(value, language=language) if language else Literal(value, datatype=NamedNode(datatype))


def _model_source(kb: KnowledgeBase) -> str:
    """What the model is built from besides the generation's data: its data names and added ontologies."""
    extra = kb.manifest.extra
    return json.dumps([extra.get("data_names", []), len(extra.get("ontologies", []))], sort_keys=True)


def table_model(kb: KnowledgeBase) -> TableModel | None:
    """The KB's table model (None: not read as tables), once per opened KB: from the generation's artifacts
    when stored for the same data names and ontologies, else built (:func:`.build_table_model`) and stored;
    in-memory KBs build it."""
    return kb.remember(("offline", "table model"), lambda: _stored_or_built(kb))


def _stored_or_built(kb: KnowledgeBase) -> TableModel | None:
    try:
        folder = kb.artifacts_dir("offline")
    except StorageError:  # a KB folder we may read but not write
        folder = None
    if folder is None:
        return build_table_model(kb)
    source = _model_source(kb)
    stored = _load(folder / FILE, kb.name)
    if stored is not None and stored.source == source:
        return stored.model
    model = build_table_model(kb)
    try:
        payload = json.dumps(StoredModel(source, model).to_dict(), ensure_ascii=False, separators=(",", ":"))
        atomic_write_bytes(folder / FILE, payload.encode("utf-8"))
    except StorageError as exc:
        log.debug("table model not stored: %s", exc)
    return model


def _load(path: Path, kb_name: str) -> StoredModel | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("the table model of %s (%s) cannot be read (%s): building it again", kb_name, path, exc)
        return None
    try:
        return StoredModel.from_dict(json.loads(data))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        log.warning("the table model of %s (%s) is damaged (%s); it is derived data: building it again",
                    kb_name, path, exc or type(exc).__name__)
        return None
