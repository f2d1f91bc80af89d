"""SPARQL for an analytical reading, built from terms: one class's nodes, the columns and linked classes the
question names, their conditions, and the form (rows, a count, aggregates, groups, an order and a limit).

:class:`QueryBuilder` keeps one variable per class reached (``?x`` the focus, ``?n1``… the classes joined
to it through a link) and per column read (``?v1``…); every IRI and literal in the text is a pyoxigraph
term's ``str()``, the rest is fixed syntax.
"""

from __future__ import annotations

__all__ = ["QueryBuilder", "TableQuery"]

from dataclasses import dataclass, field

from pyoxigraph import Literal, NamedNode

from sparqlqa.kb.vocab import XSD
from sparqlqa.strategies.offline.tables.model import Column, TableModel

#: links a join may follow from the classes reached to a class the question names
MAX_HOPS = 3
DECIMAL = XSD.decimal
INTEGER = NamedNode("http://www.w3.org/2001/XMLSchema#integer")


@dataclass
class TableQuery:
    """A compiled reading: the query, its answer columns (variables, no ``?``), which are aggregates, whether
    its rows are ordered, and the reading in words."""

    sparql: str
    columns: list[str]
    aggregates: set[str] = field(default_factory=set)
    ordered: bool = False
    reading: str = ""


class QueryBuilder:
    """Patterns, filters, projections, groups and order of one query over ``model`` from class ``focus``."""

    def __init__(self, model: TableModel, focus: str, type_predicate: str) -> None:
        self.model, self.focus = model, focus
        self.type = NamedNode(type_predicate)
        self.nodes: dict[str, str] = {focus: "?x"}
        self.values: dict[tuple[str, str], str] = {}
        self.patterns = [f"?x {self.type} {NamedNode(focus)} ."]
        self.filters: list[str] = []
        self.select: list[tuple[str, str]] = []  # (expression, variable)
        self.aggregates: set[str] = set()
        self.group: list[str] = []
        self.order: list[str] = []
        self.limit: int | None = None
        self.distinct = False
        self.havings: list[str] = []
        #: value variables an equality fixes (selecting only them would repeat the question's constants)
        self.fixed: set[str] = set()

    def reachable(self, cls: str) -> bool:
        return cls in self.nodes or self._path(cls) is not None

    def _path(self, cls: str) -> list[tuple[str, str]] | None:
        """The shortest chain of classes (at most :data:`MAX_HOPS` links) from a class reached to ``cls``:
        (from, to) pairs; a junction table between two classes is one class on the way."""
        frontier: list[tuple[str, list[tuple[str, str]]]] = [(known, []) for known in self.nodes]
        seen = set(self.nodes)
        for _ in range(MAX_HOPS):
            step = []
            for here, path in frontier:
                for there in sorted(self.model.neighbours(here)):
                    if there == cls:
                        return [*path, (here, there)]
                    if there not in seen:
                        seen.add(there)
                        step.append((there, [*path, (here, there)]))
            frontier = step
        return None

    def node(self, cls: str) -> str:
        """The variable of ``cls``'s node: the focus, or a class joined through links to one already reached."""
        if cls in self.nodes:
            return self.nodes[cls]
        path = self._path(cls)
        if path is None:
            raise KeyError(cls)
        for here, there in path:
            if there not in self.nodes:
                link, forward = self.model.links_between(here, there)[0]
                var, new = self.nodes[here], f"?n{len(self.nodes)}"
                pattern = (var, new) if forward else (new, var)
                self.patterns.append(f"{pattern[0]} {NamedNode(link.iri)} {pattern[1]} .")
                self.nodes[there] = new
        return self.nodes[cls]

    def value(self, column: Column) -> str:
        """The variable of a column's value (one per column)."""
        key = (column.cls, column.iri)
        if key not in self.values:
            var = f"?v{len(self.values) + 1}"
            self.patterns.append(f"{self.node(column.cls)} {NamedNode(column.iri)} {var} .")
            self.values[key] = var
        return self.values[key]

    def numeric(self, column: Column) -> str:
        """A column's value as a number (text that reads as one is cast)."""
        return f"{DECIMAL}({self.value(column)})"

    def equals(self, column: Column, literals: list[Literal]) -> None:
        var = self.value(column)
        self.fixed.add(var)
        if len(literals) == 1:
            self.filters.append(f"FILTER({var} = {literals[0]})")
        else:
            self.filters.append(f"FILTER({var} IN ({', '.join(str(v) for v in literals)}))")

    def compare(self, column: Column, op: str, numbers: list[float]) -> None:
        self.filters.append(_comparison(self.numeric(column), op, numbers))

    def compare_to_average(self, column: Column, op: str) -> None:
        """The column's value against its average over all nodes of its class (a subquery)."""
        n = len(self.filters) + 1
        inner = (f"{{ SELECT (AVG({DECIMAL}(?a{n})) AS ?avg{n}) WHERE {{ ?s{n} {self.type} {NamedNode(column.cls)} . "
                 f"?s{n} {NamedNode(column.iri)} ?a{n} }} }}")
        self.patterns.append(inner)
        self.filters.append(f"FILTER({self.numeric(column)} {op} ?avg{n})")

    def contains(self, column: Column, text: str) -> None:
        """The column's text contains ``text`` (case-insensitive)."""
        self.filters.append(f"FILTER(CONTAINS(LCASE(STR({self.value(column)})), {Literal(text.lower())}))")

    def absent(self, cls: str, column: Column | None = None, literals: tuple[Literal, ...] = (),
               compare: tuple[str, list[float]] | None = None) -> None:
        """No node of ``cls`` (with ``column`` holding one of ``literals``, or compared as ``compare``: an
        operator and numbers) is joined to the focus (``FILTER NOT EXISTS`` over the links from the focus)."""
        path = self._path_from(self.focus, cls)
        if path is None:
            raise KeyError(cls)
        patterns, var = [], "?x"
        for n, (here, there) in enumerate(path, 1):
            link, forward = self.model.links_between(here, there)[0]
            new = f"?m{n}"
            pair = (var, new) if forward else (new, var)
            patterns.append(f"{pair[0]} {NamedNode(link.iri)} {pair[1]} .")
            var = new
        patterns.append(f"{var} {self.type} {NamedNode(cls)} .")
        if column is not None and literals:
            patterns.append(f"{var} {NamedNode(column.iri)} ?mv . FILTER(?mv IN ({', '.join(map(str, literals))}))")
        if column is not None and compare is not None:
            patterns.append(f"{var} {NamedNode(column.iri)} ?mv . {_comparison(f'{DECIMAL}(?mv)', *compare)}")
        self.filters.append(f"FILTER NOT EXISTS {{ {' '.join(patterns)} }}")

    def _path_from(self, start: str, cls: str) -> list[tuple[str, str]] | None:
        saved = self.nodes
        self.nodes = {start: "?x"}
        try:
            return self._path(cls) if cls != start else []
        finally:
            self.nodes = saved

    def having(self, cls: str, op: str, number: float) -> None:
        """Group by the focus and keep the nodes joined to ``op number`` nodes of ``cls``."""
        var = self.node(cls)
        if "?x" not in self.group:
            self.group.insert(0, "?x")
        self.havings.append(f"(COUNT({var}) {op} {Literal(_figure(number), datatype=INTEGER)})")

    def output(self, expression: str, name: str, *, aggregate: bool = False) -> None:
        self.select.append((expression, name))
        if aggregate:
            self.aggregates.add(name)

    def query(self, reading: str) -> TableQuery:
        head = " ".join(expr if expr == f"?{name}" else f"({expr} AS ?{name})" for expr, name in self.select)
        text = f"SELECT {'DISTINCT ' if self.distinct else ''}{head} WHERE {{\n  " + "\n  ".join(
            self.patterns + self.filters) + "\n}"
        if self.group:
            plain = [expr for expr, name in self.select if name not in self.aggregates]
            text += f"\nGROUP BY {' '.join(dict.fromkeys([*self.group, *plain]))}"
        if self.havings:
            text += f"\nHAVING {' && '.join(self.havings)}"
        if self.order:
            text += f"\nORDER BY {' '.join(self.order)}"
        if self.limit is not None:
            text += f"\nLIMIT {int(self.limit)}"
        return TableQuery(text, [name for _, name in self.select], set(self.aggregates), bool(self.order), reading)


def _comparison(value: str, op: str, numbers: list[float]) -> str:
    terms = [Literal(_figure(n), datatype=DECIMAL) for n in numbers]
    if op == "between" and len(terms) == 2:
        return f"FILTER({value} >= {terms[0]} && {value} <= {terms[1]})"
    if op == "=" and len(terms) > 1:
        return f"FILTER({value} IN ({', '.join(str(t) for t in terms)}))"
    return f"FILTER({value} {op} {terms[0]})"


def _figure(number: float) -> str:
    return str(int(number)) if number == int(number) else str(number)
