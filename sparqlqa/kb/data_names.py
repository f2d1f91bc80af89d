"""Names found in the data: the columns that name a class's nodes in a graph mapped from a database.

A graph mapped from tables (R2RML, Ontop, CSV → RDF) has no ``rdfs:label``: a row is an IRI such as
``…/singer/singer_id=3`` and its name is a column, ``…/singer#name``.  At ingest, for each class whose
nodes mostly have no name from the label predicates, :func:`find_data_names` looks among the class's
literal-valued relations for

- its **naming predicate**: a text column whose local name says name (``name``, ``title``, ``label``,
  ``*_name``, ``*name``, or the class's own name in the singular: ``continents#continent``,
  ``model_list#model``) and whose
  values are mostly unique within the class (at least :data:`NAME_UNIQUE` of its nodes have their own);
  the best is kept (an exact ``name`` first, then ``<class>_name``, then ``title``/``label``, then other
  ``*name``; more unique values break a tie);
- its **key columns**: ``id``, ``*_id``, ``*id``, ``code``, ``*_code`` with a value unique to each node —
  identifiers a question may quote ("the airport with code 'AKO'", "student 1001").

The naming predicates join the schema's label predicates *after* the vocabularies' own (``rdfs:label``
and the others still come first), so labels, linking, answers, evidence and prompts use them unchanged.
A profile's ``name_predicates`` (``sparqlqa ingest --name-predicate IRI``) replace the search.

>>> name_rank("http://x/singer#name", "http://x/singer"), name_rank("http://x/singer#song_name", "http://x/singer")
(0, 3)
>>> name_rank("http://x/continents#continent", "http://x/continents"), name_rank("http://x/a#age", "http://x/a")
(1, None)
>>> name_rank("http://x/model_list#model", "http://x/model_list")  # a table named "<noun> list"
1
>>> is_key_name("http://x/airports#airportcode"), is_key_name("http://x/singer#singer_id")
(True, True)
"""

from __future__ import annotations

__all__ = ["NAME_UNIQUE", "DataName", "find_data_names", "is_key_name", "mapped_from_tables", "name_rank",
           "stored_data_names", "with_data_names"]

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from pyoxigraph import Literal, NamedNode

from sparqlqa.english import GENERIC_TABLE_WORDS, KEY_COLUMN_ENDINGS, name_column_rank, name_singular
from sparqlqa.kb.schema import local_name
from sparqlqa.kb.vocab import TEXT_DATATYPES
from sparqlqa.query.built_query import BuiltQuery

if TYPE_CHECKING:
    from sparqlqa.kb.knowledge_base import KnowledgeBase
    from sparqlqa.kb.schema import Schema
    from sparqlqa.kb.store import Store

#: share of a class's nodes whose value of a naming predicate is their own (mostly unique text)
NAME_UNIQUE = 0.5
#: share of a class's nodes that must have a value for a column to name or key it
NAME_COVERAGE = 0.5
#: a class whose nodes have a label-predicate name this often needs none from the data
LABELLED_ENOUGH = 0.5


@dataclass(frozen=True)
class DataName:
    """One column found to name (``kind="name"``) or identify (``kind="key"``) the nodes of a class."""

    type_iri: str
    predicate: str
    kind: str = "name"
    unique: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DataName:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})

    def describe(self) -> str:
        """``singer: names from singer#name``."""
        what = "names from" if self.kind == "name" else "identified by"
        return f"{local_name(self.type_iri)}: {what} {_short(self.predicate)}"


def _short(iri: str) -> str:
    """The last two segments of an IRI: ``…/singer#name`` → ``singer#name``."""
    head, sep, tail = iri.rpartition("#")
    return f"{head.rsplit('/', 1)[-1]}#{tail}" if sep else iri.rsplit("/", 1)[-1]


def _column(predicate: str) -> str:
    return local_name(predicate).lower().replace("-", "_")


def name_rank(predicate: str, type_iri: str) -> int | None:
    """How clearly a column's local name says it names the class's nodes (0 best), None when it does not."""
    column, table = _column(predicate), name_singular(local_name(type_iri).lower())
    parts = table.split("_")
    head = name_singular(parts[0]) if len(parts) > 1 and parts[-1] in GENERIC_TABLE_WORDS else table
    return name_column_rank(column, table, head)


def is_key_name(predicate: str) -> bool:
    """A column named like an identifier: ``id``, ``*_id``, ``*id``, ``code``, ``*_code``, ``*code``."""
    column = _column(predicate)
    return column.endswith(KEY_COLUMN_ENDINGS) and not column.startswith("ref_")


@dataclass(frozen=True)
class _Column:
    type_iri: str
    predicate: str
    nodes: int  # nodes of the class with a value
    values: int  # distinct values
    text: bool  # the values are text (no number, date or boolean datatype)


COLUMNS_QUERY = """SELECT ?c ?p (COUNT(DISTINCT ?s) AS ?n) (COUNT(DISTINCT ?o) AS ?d) (MIN(DATATYPE(?o)) AS ?t)
  (MAX(DATATYPE(?o)) AS ?u) WHERE {{ VALUES ?c {{ {classes} }} ?s {type} ?c . ?s ?p ?o . FILTER(isLiteral(?o)) }}
  GROUP BY ?c ?p"""
SIZES_QUERY = """SELECT ?c (COUNT(DISTINCT ?s) AS ?n) (COUNT(DISTINCT ?l) AS ?m) WHERE {{
  ?s {type} ?c . OPTIONAL {{ VALUES ?lp {{ {labels} }} ?s ?lp ?l }} }} GROUP BY ?c"""


def _int(term: Any) -> int:
    return int(term.value) if isinstance(term, Literal) else 0


def _unlabelled(store: Store, schema: Schema) -> dict[str, int]:
    """The classes whose nodes mostly have no name from a label predicate, with their sizes."""
    labels = " ".join(str(NamedNode(p)) for p in schema.label_predicates) or "<urn:sparqlqa:none>"
    rows = store.query(BuiltQuery.select(SIZES_QUERY.format(type=NamedNode(schema.type_predicate), labels=labels))).rows
    return {row[0].value: _int(row[1]) for row in rows
            if isinstance(row[0], NamedNode) and _int(row[2]) < LABELLED_ENOUGH * _int(row[1])}


def _columns(store: Store, schema: Schema, classes: dict[str, int]) -> list[_Column]:
    found = []
    values = " ".join(str(NamedNode(c)) for c in sorted(classes))
    for row in store.query(BuiltQuery.select(COLUMNS_QUERY.format(type=NamedNode(schema.type_predicate),
                                                           classes=values))).rows:
        if not (isinstance(row[0], NamedNode) and row[0].value in classes and isinstance(row[1], NamedNode)):
            continue
        kinds = {term.value for term in row[4:6] if isinstance(term, NamedNode)}
        found.append(_Column(row[0].value, row[1].value, _int(row[2]), _int(row[3]), kinds <= TEXT_DATATYPES))
    return found


def _best_name(columns: Sequence[_Column], size: int) -> DataName | None:
    ranked = []
    for column in columns:
        rank = name_rank(column.predicate, column.type_iri)
        unique = column.values / max(1, size)
        if rank is not None and column.text and column.nodes >= NAME_COVERAGE * size and unique >= NAME_UNIQUE:
            ranked.append((rank, -unique, column.predicate, DataName(column.type_iri, column.predicate, "name",
                                                                       round(unique, 3))))
    return min(ranked)[3] if ranked else None


def _keys(columns: Sequence[_Column], size: int) -> list[DataName]:
    return [DataName(c.type_iri, c.predicate, "key", round(c.values / max(1, size), 3)) for c in columns
            if is_key_name(c.predicate) and c.nodes >= NAME_COVERAGE * size and c.values == c.nodes]


def find_data_names(store: Store, schema: Schema) -> list[DataName]:
    """The naming predicate (if any) and key columns of each class lacking names (two grouped scans)."""
    classes = _unlabelled(store, schema)
    if not classes:
        return []
    by_class: dict[str, list[_Column]] = {}
    for column in _columns(store, schema, classes):
        by_class.setdefault(column.type_iri, []).append(column)
    found: list[DataName] = []
    for type_iri in sorted(by_class):
        best = _best_name(by_class[type_iri], classes[type_iri])
        found += ([best] if best else []) + _keys(by_class[type_iri], classes[type_iri])
    return found


def with_data_names(schema: Schema, names: Sequence[DataName]) -> Schema:
    """``schema`` with the naming predicates found appended to its label predicates (theirs first)."""
    extra = [n.predicate for n in names if n.kind == "name" and n.predicate not in schema.label_predicates]
    return replace(schema, label_predicates=[*schema.label_predicates, *dict.fromkeys(extra)])


def stored_data_names(kb: KnowledgeBase) -> list[DataName]:
    """The columns ingest found to name or identify the KB's nodes (its manifest's record; none for a KB
    whose nodes are labelled)."""
    return [DataName.from_dict(d) for d in kb.manifest.extra.get("data_names", [])]


def mapped_from_tables(kb: KnowledgeBase) -> bool:
    """Whether ingest found a naming column of a class: the KB is read as tables (its manifest alone)."""
    return any(d.kind == "name" and d.type_iri for d in stored_data_names(kb))
