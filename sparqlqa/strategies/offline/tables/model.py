"""A graph mapped from tables, seen as tables: classes, their columns, the links between them, their values.

The analytical reader (:mod:`~sparqlqa.strategies.offline.tables.reading`) reads questions against this model.
It is built once per KB generation from three grouped scans (kept with it: :mod:`.model_file`), and only
for a KB whose ingest found names in the data (:mod:`sparqlqa.kb.data_names`: a graph mapped from a
database); other KBs get ``None``.

- a **class** is a node type, said by the words of its local name in the singular (``car_makers`` →
  "car maker");
- a **column** is a literal-valued relation of a class's nodes, said by the words of its local name
  (``song_name`` → "song name"; ``fname`` is also "f… name": see :func:`column_phrases`);
- a **link** is an object relation between the nodes of two classes (a foreign key);
- the **values** of text columns are indexed by their normalised text, so a question's "France" or
  "'Live final'" finds the column(s) that hold it and the exact literal (item 2 of issue 35).
"""

from __future__ import annotations

__all__ = ["Column", "Link", "TableModel", "build_table_model", "column_phrases", "words_of"]

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyoxigraph import Literal, NamedNode

from sparqlqa.english import COMPACT_TAILS, singular
from sparqlqa.kb.data_names import mapped_from_tables, stored_data_names
from sparqlqa.kb.labels import normalize_label
from sparqlqa.kb.schema import humanize, local_name
from sparqlqa.query.built_query import BuiltQuery
from sparqlqa.stages.forms import XSD

if TYPE_CHECKING:
    from sparqlqa.kb.knowledge_base import KnowledgeBase

NUMERIC_TYPES = frozenset(f"{XSD}{t}" for t in ("integer", "decimal", "double", "float", "int", "long", "short",
                                                "nonNegativeInteger", "positiveInteger"))
#: text values longer than this are prose, not constants a question quotes
MAX_VALUE_CHARS = 80
#: distinct text values indexed at most (a larger graph keeps the first ones by column)
MAX_VALUES = 200_000


def words_of(iri: str) -> tuple[str, ...]:
    """The words of a local name, each in the singular: ``car_makers`` → ``("car", "maker")``."""
    return tuple(singular(w) or w for w in humanize(local_name(iri)).split() if w)


@dataclass(frozen=True)
class Column:
    """A literal-valued relation of a class: its IRI, the class, its words, whether its values are numbers
    (by datatype, or text that reads as one), whether it names (``name``) or identifies (``key``) the class."""

    iri: str
    cls: str
    words: tuple[str, ...]
    numeric: bool = False
    name: bool = False
    key: bool = False


@dataclass(frozen=True)
class Link:
    """An object relation from the nodes of ``head`` to those of ``tail`` (a foreign key)."""

    iri: str
    head: str
    tail: str


@dataclass
class TableModel:
    """Classes (IRI → words), columns, links and the text values of the columns."""

    classes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    columns: list[Column] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    #: normalised text value → (column IRI, class IRI, the literal as stored)
    values: dict[str, list[tuple[str, str, Literal]]] = field(default_factory=dict)

    def naming(self, cls: str) -> Column | None:
        return next((c for c in self.columns if c.cls == cls and c.name), None)

    def columns_of(self, cls: str) -> list[Column]:
        return [c for c in self.columns if c.cls == cls]

    def links_between(self, a: str, b: str) -> list[tuple[Link, bool]]:
        """Links joining classes ``a`` and ``b``: (link, True when it runs from ``a`` to ``b``)."""
        found = [(link, True) for link in self.links if link.head == a and link.tail == b]
        return found + [(link, False) for link in self.links if link.head == b and link.tail == a]

    def by_distance(self, cls: str, most: int = 3) -> list[str]:
        """The classes joined to ``cls`` through at most ``most`` links, nearest first (``cls`` not included)."""
        found, frontier = [cls], [cls]
        for _ in range(most):
            frontier = [n for here in frontier for n in sorted(self.neighbours(here)) if n not in found]
            frontier = list(dict.fromkeys(frontier))
            found += frontier
        return found[1:]

    def neighbours(self, cls: str) -> set[str]:
        return {link.tail for link in self.links if link.head == cls} | {
            link.head for link in self.links if link.tail == cls}


def column_phrases(column: Column, cls_words: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """How a question may say a column: its words (``song name``); a compact name read as a clipped word
    plus a known word (``fname`` → ("f*", "name"), ``stuid`` → ("stu*", "id")); and, when the column's
    name starts with (a clipping of) its class's word, the rest alone (``pets#pettype`` → "type",
    ``pets#pet_age`` → "age", ``student#stuid`` → "id")."""
    phrases = [column.words]
    head = cls_words[0] if cls_words else ""
    if len(column.words) == 1:
        word = column.words[0]
        for tail in COMPACT_TAILS:
            if word.endswith(tail) and len(word) > len(tail):
                phrases.append((word[: -len(tail)] + "*", tail))
                if head.startswith(word[: -len(tail)]):
                    phrases.append((tail,))
    elif head and column.words[0] == head:
        phrases.append(column.words[1:])
    elif len(column.words) > 2:  # "release year" of ``song_release_year``
        phrases.append(column.words[-2:])
    return phrases


TYPED_LITERALS = """SELECT ?c ?p (MIN(DATATYPE(?o)) AS ?t) (MAX(DATATYPE(?o)) AS ?u) (SAMPLE(?o) AS ?x)
WHERE {{ ?s {type} ?c . ?s ?p ?o . FILTER(isLiteral(?o)) }} GROUP BY ?c ?p"""
#: the edges first, then their ends' types: Oxigraph joins in the order written, and this order reads the graph
#: half as long as typing the subjects first (400K triples: 1.9 → 1.0 s CPU; the same rows)
LINKS = """SELECT DISTINCT ?c ?p ?d WHERE {{ ?s ?p ?o . FILTER(isIRI(?o)) ?o {type} ?d . ?s {type} ?c }}"""
TEXT_VALUES = """SELECT DISTINCT ?c ?p ?o WHERE {{ ?s {type} ?c . ?s ?p ?o . FILTER(isLiteral(?o)
  && STRLEN(STR(?o)) <= {most} && DATATYPE(?o) = <{XSD}string>) }} LIMIT {limit}"""


def _reads_as_number(term: Any) -> bool:
    try:
        float(term.value)
    except (AttributeError, ValueError):
        return False
    return True


def _columns(kb: KnowledgeBase, type_p: NamedNode, names: dict[str, set[str]]) -> list[Column]:
    columns = []
    for row in kb.query(BuiltQuery.select(TYPED_LITERALS.format(type=type_p))).rows:
        if not (isinstance(row[0], NamedNode) and isinstance(row[1], NamedNode)):
            continue
        cls, predicate = row[0].value, row[1].value
        kinds = {t.value for t in row[2:4] if isinstance(t, NamedNode)}
        numeric = (bool(kinds) and kinds <= NUMERIC_TYPES) or _reads_as_number(row[4])
        columns.append(Column(predicate, cls, words_of(predicate), numeric, predicate in names.get("name", set()),
                              predicate in names.get("key", set())))
    return columns


def _values(kb: KnowledgeBase, type_p: NamedNode) -> dict[str, list[tuple[str, str, Literal]]]:
    values: dict[str, list[tuple[str, str, Literal]]] = {}
    query = TEXT_VALUES.format(type=type_p, most=MAX_VALUE_CHARS, XSD=XSD, limit=MAX_VALUES)
    for cls, predicate, literal in kb.query(BuiltQuery.select(query)).rows:
        if not (isinstance(cls, NamedNode) and isinstance(predicate, NamedNode) and isinstance(literal, Literal)):
            continue
        key = normalize_label(literal.value)
        if key:
            values.setdefault(key, []).append((predicate.value, cls.value, literal))
    return values


def build_table_model(kb: KnowledgeBase) -> TableModel | None:
    """The model of a KB mapped from tables (ingest found names in its data), else None."""
    if not mapped_from_tables(kb):
        return None
    found = stored_data_names(kb)
    names: dict[str, set[str]] = {}
    for data_name in found:
        names.setdefault(data_name.kind, set()).add(data_name.predicate)
    type_p = NamedNode(kb.schema.type_predicate)
    columns = _columns(kb, type_p, names)
    rows = kb.query(BuiltQuery.select(LINKS.format(type=type_p))).rows
    links = [Link(p.value, c.value, d.value) for c, p, d in rows
             if isinstance(c, NamedNode) and isinstance(p, NamedNode) and isinstance(d, NamedNode)]
    links.sort(key=lambda link: (link.iri, link.head, link.tail))  # not the query plan's order
    classes = {cls: words_of(cls) for cls in {c.cls for c in columns} | {link.head for link in links}}
    return TableModel(classes, columns, links, _values(kb, type_p))
