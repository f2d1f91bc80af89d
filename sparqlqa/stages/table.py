"""An answer as a table: named columns and rows of terms — the one shape every answer also has.

What people ask of their own data is often a table: "the names and ages of singers from France" (two
columns), "for each stadium, how many concerts" (a group and its count), "the average and maximum
capacity" (two aggregates).  :class:`Table` holds such an answer as the query returned it: its columns
(each a variable of the query, of kind ``node``, ``value`` or ``aggregate``) and its rows of answer keys
(:mod:`sparqlqa.kb.terms`: a node is its IRI, a value its N-Triples form; ``None`` where a variable is
unbound), with the names of the node cells and the query that produced it.

Every answer carries one (:attr:`Answer.table <sparqlqa.stages.answer.Answer.table>`): a list is a
one-column table, a count a single cell, a yes/no a single boolean cell, so a script reads one shape.

>>> from pyoxigraph import Literal, NamedNode
>>> from sparqlqa.kb.store import QueryResult
>>> result = QueryResult(query="SELECT ?s ?age ...", form="SELECT", variables=["s", "age"],
...                      rows=[(NamedNode("http://x/joe"), Literal("52", datatype=NamedNode(XSD_INTEGER)))])
>>> table = Table.from_result(result, aggregates={"age"})
>>> [f"{c.name}: {c.kind}" for c in table.columns], table.rows
(['s: node', 'age: aggregate'], [['http://x/joe', '"52"^^<http://www.w3.org/2001/XMLSchema#integer>']])
>>> table.names["http://x/joe"] = "Joe"
>>> table.text_rows(), table.to_dict()["rows"]
([['Joe', '52']], [['http://x/joe', '52']])
"""

from __future__ import annotations

__all__ = ["Column", "Table"]

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sparqlqa.kb.naming import display_name
from sparqlqa.kb.terms import is_blank_key, is_node_key, is_value_key, term_key, value_text
from sparqlqa.kb.vocab import XSD_BOOLEAN, XSD_INTEGER
from sparqlqa.stages.modes import ColumnKind, Form

if TYPE_CHECKING:
    from sparqlqa.kb.store import QueryResult

@dataclass(frozen=True)
class Column:
    """One column: the query's variable (no ``?``) and what it holds (a :class:`ColumnKind`; its plain
    string is read as one)."""

    name: str
    kind: ColumnKind = ColumnKind.VALUE

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", ColumnKind(self.kind))

    @property
    def heading(self) -> str:
        """The column's name for people: ``singer_name`` → ``singer name``."""
        return self.name.replace("_", " ").strip() or self.name

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "kind": self.kind}


@dataclass
class Table:
    """Columns and rows of answer keys (``None``: unbound), the names of node cells, the query's order.

    ``ordered``: the rows are in the query's order (it has ORDER BY); ``matched``: the rows satisfied a
    query (``False`` when they are fill-in, e.g. a vector ranking's nodes); ``query``: the SPARQL that
    produced the rows, when one did; ``truncated``: a row limit cut the rows short.
    """

    columns: list[Column]
    rows: list[list[str | None]] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    ordered: bool = False
    matched: bool = True
    query: str | None = None
    truncated: bool = False

    @classmethod
    def from_result(cls, result: QueryResult, variables: Sequence[str] | None = None, *,
                    aggregates: Iterable[str] = (), ordered: bool = False) -> Table:
        """The rows of a SELECT (``variables``: the columns, in this order; default: all it projects) or
        the single boolean cell of an ASK.  A column is ``aggregate`` when named in ``aggregates``, else
        ``node`` when every bound cell is an IRI, else ``value``.  Blank nodes are left out (unbound)."""
        if result.form == "ASK":
            return cls.single("answer", _boolean_key(bool(result.boolean)), kind=ColumnKind.VALUE, query=result.query)
        wanted = [v for v in (variables or result.variables) if v in result.variables]
        index = [result.variables.index(v) for v in wanted]
        rows = [[_cell(row[n]) for n in index] for row in result.rows]
        summed = set(aggregates)
        columns = [Column(name, ColumnKind.AGGREGATE if name in summed else _kind(row[n] for row in rows))
                   for n, name in enumerate(wanted)]
        return cls(columns=columns, rows=rows, ordered=ordered, query=result.query, truncated=result.truncated)

    @classmethod
    def single(cls, name: str, key: str, *, kind: ColumnKind = ColumnKind.AGGREGATE,
               query: str | None = None) -> Table:
        """One cell: a count (``kind="aggregate"``), a yes/no or one value."""
        return cls(columns=[Column(name, kind)], rows=[[key]], query=query)

    @classmethod
    def of_count(cls, count: int, query: str | None = None) -> Table:
        """A count as a single ``count`` cell."""
        return cls.single("count", f'"{int(count)}"^^<{XSD_INTEGER}>', query=query)

    @classmethod
    def of_boolean(cls, value: bool, query: str | None = None) -> Table:
        """A yes/no as a single ``answer`` cell."""
        return cls.single("answer", _boolean_key(value), kind=ColumnKind.VALUE, query=query)

    @classmethod
    def of_keys(cls, name: str, keys: Sequence[str], *, ordered: bool = False, matched: bool = True) -> Table:
        """A list of answers as a one-column table (``node`` unless every key is a value)."""
        column = Column(name or "answer", _kind(keys))
        return cls(columns=[column], rows=[[key] for key in keys], ordered=ordered, matched=matched)

    @property
    def width(self) -> int:
        return len(self.columns)

    def form(self) -> tuple[str, int | str | None]:
        """The answer form of a query's table and its value: a single ``count`` cell is a count, another
        single cell a value, one column a list, more a table."""
        if len(self.rows) == 1 and self.width == 1:
            key = self.rows[0][0]
            text = value_text(key) if key is not None and is_value_key(key) else key
            if self.columns[0].name == "count" and text is not None and text.isdigit():
                return Form.COUNT, int(text)
            return Form.VALUE, text
        return (Form.LIST, None) if self.width == 1 else (Form.TABLE, None)

    def node_keys(self) -> list[str]:
        """The IRIs in the table's cells, each once, in reading order (what needs a name)."""
        seen = (key for row in self.rows for key in row if key is not None and is_node_key(key))
        return list(dict.fromkeys(seen))

    def column(self, name: str) -> list[str | None]:
        """The cells of one column, in row order."""
        index = [c.name for c in self.columns].index(name)
        return [row[index] for row in self.rows]

    def text(self, key: str | None) -> str:
        """A cell for people: a node's name (its IRI's last segment when it has none), a value's lexical form."""
        if key is None:
            return ""
        if is_value_key(key):
            return value_text(key)
        return self.names.get(key) or display_name(key)

    def text_rows(self) -> list[list[str]]:
        """The rows as people read them (see :meth:`text`)."""
        return [[self.text(key) for key in row] for row in self.rows]

    def lexical_rows(self) -> list[list[str | None]]:
        """The rows as scripts read them: IRIs for nodes, lexical forms for values, ``None`` unbound."""
        return [[value_text(key) if key is not None and is_value_key(key) else key for key in row]
                for row in self.rows]

    def to_dict(self) -> dict[str, Any]:
        """``{"columns": [{name, kind}], "rows": [[IRI | lexical form | null]], "names": {IRI: name}, ...}``."""
        return {"columns": [c.to_dict() for c in self.columns], "rows": self.lexical_rows(),
                "names": {key: self.names[key] for key in self.node_keys() if key in self.names},
                "ordered": self.ordered, "matched": self.matched, "query": self.query, "truncated": self.truncated}

    def named(self, labels: Mapping[str, str]) -> Table:
        """The same table, its node cells named from ``labels`` (names it has already are kept)."""
        self.names.update({key: labels[key] for key in self.node_keys() if key in labels and key not in self.names})
        return self


def _cell(term: object) -> str | None:
    key = term_key(term) if term is not None else None
    return None if key is None or is_blank_key(key) else key


def _kind(keys: Iterable[str | None]) -> ColumnKind:
    bound = [key for key in keys if key is not None]
    return ColumnKind.NODE if bound and all(is_node_key(key) for key in bound) else ColumnKind.VALUE


def _boolean_key(value: bool) -> str:
    return f'"{"true" if value else "false"}"^^<{XSD_BOOLEAN}>'
