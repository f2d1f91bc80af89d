"""A read query sparqlqa writes from terms, as a structure (:class:`SparqlQuery`), and its one renderer.

The compiler (:mod:`sparqlqa.stages.compile`) builds a :class:`SparqlQuery` — projection, the group graph
pattern as elements (triples of pyoxigraph terms, ``VALUES``, ``FILTER``, ``UNION``, ``OPTIONAL``,
``SERVICE`` blocks), modifiers — and :func:`render` writes its text last.  A KB group runs a remote
member's ``SERVICE`` blocks from the same structure (:mod:`sparqlqa.kb.group_service`: each block is an
element, its patterns are elements) and writes the queries it makes from it through the same renderer, so
nothing reads the text back.  :meth:`sparqlqa.query.built_query.BuiltQuery.of` is a structure's query to run.

A ``FILTER`` or ``BIND`` expression is text written from terms (``isIRI(?v)``, a typed literal); it says
the variables it reads, so no one has to find them in its text.

>>> from pyoxigraph import NamedNode, Variable
>>> x, p = Variable("x"), NamedNode("http://e/p")
>>> query = SparqlQuery("SELECT", (Values(Variable("c"), (NamedNode("http://e/a"),)), Triple(x, p, Variable("c")),
...                                Filter.of(f"isIRI({x})", "x")), projection=(x,), distinct=True, limit=10)
>>> print(render(query))
SELECT DISTINCT ?x WHERE {
  VALUES ?c { <http://e/a> }
  ?x <http://e/p> ?c .
  FILTER(isIRI(?x))
}
LIMIT 10
>>> block = Service(NamedNode("http://s/sparql"), (Triple(x, p, Variable("c")),))
>>> render(SparqlQuery("SELECT", (block,)), one_line=True)
'SELECT * WHERE { SERVICE <http://s/sparql> { ?x <http://e/p> ?c . } }'
"""

from __future__ import annotations

__all__ = ["Bind", "EitherWay", "Element", "Filter", "Optional", "PathThen", "Projection", "Service", "SparqlQuery",
           "Triple", "Union", "Values", "ValuesTable", "inline", "lines", "merge_services", "render", "variables"]

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pyoxigraph import BlankNode, Literal, NamedNode, Variable
from pyoxigraph import Triple as QuotedTriple

#: a term in a triple pattern or a ``VALUES`` row (``None`` in a row: ``UNDEF``)
Term = NamedNode | Literal | BlankNode | Variable
Value = NamedNode | Literal | BlankNode | QuotedTriple


@dataclass(frozen=True)
class EitherWay:
    """The property path ``(p|^p)?``: a node and the nodes ``p`` links it to, either way (``owl:sameAs``)."""

    predicate: NamedNode

    def __str__(self) -> str:
        return f"({self.predicate}|^{self.predicate})?"


@dataclass(frozen=True)
class PathThen:
    """The property path ``first/then``."""

    first: EitherWay
    then: NamedNode

    def __str__(self) -> str:
        return f"{self.first}/{self.then}"


Predicate = NamedNode | Variable | EitherWay | PathThen


@dataclass(frozen=True)
class Filter:
    """``FILTER(expression)``: ``text`` is the whole ``FILTER(…)``, written from terms; ``variables`` the
    names (without ``?``) it reads."""

    text: str
    variables: frozenset[str] = frozenset()

    @classmethod
    def of(cls, expression: str, *variables: str) -> Filter:
        return cls(f"FILTER({expression})", frozenset(variables))


@dataclass(frozen=True)
class Triple:
    """``subject predicate object .``; ``guard``: a ``FILTER`` written on the same line (it holds for the
    group all the same); ``dot=False`` leaves the ``.`` out (a pattern followed only by its guard)."""

    subject: Term
    predicate: Predicate
    object: Term
    guard: Filter | None = None
    dot: bool = True


@dataclass(frozen=True)
class Values:
    """``VALUES ?var { a b }``: the one-variable form."""

    variable: Variable
    terms: tuple[Value, ...]


@dataclass(frozen=True)
class ValuesTable:
    """``VALUES (?a ?b) { (x y) (UNDEF z) }``: rows of terms, ``None`` for ``UNDEF``."""

    variables: tuple[Variable, ...]
    rows: tuple[tuple[Value | None, ...], ...]


@dataclass(frozen=True)
class Bind:
    """``BIND(expression AS ?variable)``; the expression is text written from terms."""

    expression: str
    variable: Variable
    reads: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Union:
    """``{ … } UNION { … }``: one line per branch."""

    branches: tuple[tuple[Element, ...], ...]


@dataclass(frozen=True)
class Optional:
    """``OPTIONAL { … }`` on one line."""

    elements: tuple[Element, ...]


@dataclass(frozen=True)
class Service:
    """``SERVICE <endpoint> { … }`` on one line."""

    endpoint: NamedNode
    elements: tuple[Element, ...]


Element = Triple | Values | ValuesTable | Filter | Bind | Union | Optional | Service


@dataclass(frozen=True)
class Projection:
    """``(expression AS ?variable)`` in a SELECT's projection."""

    expression: str
    variable: Variable


@dataclass(frozen=True)
class SparqlQuery:
    """A SELECT or ASK written from terms: its text is :func:`render`'s."""

    form: str  # SELECT | ASK
    where: tuple[Element, ...]
    #: SELECT's projection; empty: ``SELECT *``
    projection: tuple[Variable | Projection, ...] = ()
    distinct: bool = False
    #: ORDER BY keys, each written from terms (``?v``, ``DESC(?v)``)
    order_by: tuple[str, ...] = ()
    limit: int | None = None
    #: PREFIX declarations (name without ``:``, namespace)
    prefixes: tuple[tuple[str, NamedNode], ...] = field(default=())

    def services(self) -> tuple[str, ...]:
        """The IRIs of the endpoints its ``SERVICE`` blocks call, in order, each once."""
        return tuple(dict.fromkeys(element.endpoint.value for element in _walk(self.where)
                                   if isinstance(element, Service)))


def _walk(elements: Iterable[Element]) -> Iterable[Element]:
    for element in elements:
        yield element
        if isinstance(element, (Optional, Service)):
            yield from _walk(element.elements)
        elif isinstance(element, Union):
            for branch in element.branches:
                yield from _walk(branch)


def variables(element: Element) -> set[str]:
    """The names (without ``?``) of the variables ``element`` mentions."""
    if isinstance(element, Triple):
        found = {t.value for t in (element.subject, element.predicate, element.object) if isinstance(t, Variable)}
        return found | (set(element.guard.variables) if element.guard is not None else set())
    if isinstance(element, Values):
        return {element.variable.value}
    if isinstance(element, ValuesTable):
        return {v.value for v in element.variables}
    if isinstance(element, Filter):
        return set(element.variables)
    if isinstance(element, Bind):
        return {element.variable.value, *element.reads}
    inner = element.elements if isinstance(element, (Optional, Service)) else \
        tuple(e for branch in element.branches for e in branch)
    return {name for e in inner for name in variables(e)}


def merge_services(elements: Sequence[Element]) -> tuple[Element, ...]:
    """``elements`` with every ``SERVICE`` block of one endpoint made one, where the first stood: the
    endpoint joins its own patterns, one request, fewer rows back."""
    merged: list[Element] = []
    first: dict[str, int] = {}
    for element in elements:
        if not isinstance(element, Service):
            merged.append(element)
        elif element.endpoint.value in first:
            at = first[element.endpoint.value]
            block = merged[at]
            assert isinstance(block, Service)
            merged[at] = Service(block.endpoint, (*block.elements, *element.elements))
        else:
            first[element.endpoint.value] = len(merged)
            merged.append(element)
    return tuple(merged)


def _term(term: Value | None) -> str:
    return "UNDEF" if term is None else str(term)


def lines(element: Element) -> list[str]:
    """``element``'s text, a line per entry (without indentation)."""
    if isinstance(element, Triple):
        text = f"{element.subject} {element.predicate} {element.object}{' .' if element.dot else ''}"
        return [text + (f" {element.guard.text}" if element.guard is not None else "")]
    if isinstance(element, Values):
        return [f"VALUES {element.variable} {{ {' '.join(map(_term, element.terms))} }}"]
    if isinstance(element, ValuesTable):
        rows = " ".join("(" + " ".join(map(_term, row)) + ")" for row in element.rows)
        return [f"VALUES ({' '.join(map(str, element.variables))}) {{ {rows} }}"]
    if isinstance(element, Filter):
        return [element.text]
    if isinstance(element, Bind):
        return [f"BIND({element.expression} AS {element.variable})"]
    if isinstance(element, Union):
        return [("UNION " if n else "") + f"{{ {inline(branch)} }}" for n, branch in enumerate(element.branches)]
    if isinstance(element, Optional):
        return [f"OPTIONAL {{ {inline(element.elements)} }}"]
    return [f"SERVICE {element.endpoint} {{ {inline(element.elements)} }}"]


def inline(elements: Iterable[Element]) -> str:
    """``elements`` on one line."""
    return " ".join(line for element in elements for line in lines(element))


def _head(query: SparqlQuery) -> str:
    if query.form == "ASK":
        return "ASK {"
    projected = " ".join(str(p) if isinstance(p, Variable) else f"({p.expression} AS {p.variable})"
                         for p in query.projection) or "*"
    return f"SELECT {'DISTINCT ' if query.distinct else ''}{projected} WHERE {{"


def render(query: SparqlQuery, *, one_line: bool = False) -> str:
    """The text of ``query``: a line per pattern (the compiler's layout), or all on one line (``one_line``:
    the part of a query sent to an endpoint)."""
    head = [f"PREFIX {name}: {iri}" for name, iri in query.prefixes] + [_head(query)]
    body = [line for element in query.where for line in lines(element)]
    tail = ([f"ORDER BY {' '.join(query.order_by)}"] if query.order_by else []) + \
        ([f"LIMIT {query.limit}"] if query.limit is not None else [])
    if one_line:
        return " ".join([*head, *body, "}", *tail])
    return "\n".join([*head, *(f"  {line}" for line in body), "}", *tail])
