"""A query sparqlqa wrote itself from pyoxigraph terms, carrying its own reading: :class:`BuiltQuery`.

:meth:`sparqlqa.kb.store.Store.query` reads every ``str`` with a real SPARQL 1.1 parser
(:func:`sparqlqa.query.sparql_reading.read_query`: a few milliseconds a text).  A query sparqlqa composes
itself from pyoxigraph terms (``str(NamedNode(...))``, ``str(Literal(...))``, variables and keywords it
writes) has nothing to discover: its builder knows its form and the SERVICE endpoints it wrote.  Such a
query is passed as a :class:`BuiltQuery`, and the store takes that declaration instead of parsing.

The rule that keeps this safe: **construct a BuiltQuery only where every piece of its text comes from
terms or from sparqlqa's own code** (a builder in ``kb/``, ``stages/``, ``strategies/``, ``remote/``).
Text from outside (a user's, an LLM's, a profile's query; anything read from a file or a request) stays
a ``str`` and gets the full reading; ``tests/query/test_built_query.py`` checks that the untrusted entry
points never construct one.  Query workers are sandboxed (:mod:`sparqlqa.query.sandbox`) whatever a
reading says.

With ``SPARQLQA_CHECK_BUILT=1`` (the test suite sets it) every declaration is checked against the
parser's reading when the query runs, so a builder that declares the wrong form or leaves out a
SERVICE fails the tests.

>>> query = BuiltQuery.ask("ASK { ?s ?p ?o }")
>>> query.reading().form, query.reading().services
('ASK', ())
>>> BuiltQuery.select("SELECT * { SERVICE <http://e.org/sparql> { ?s ?p ?o } }",
...                   services=("http://e.org/sparql",)).reading().services[0].iri
'http://e.org/sparql'
"""

from __future__ import annotations

__all__ = ["CHECK_ENV", "BuiltQuery", "reading_of"]

import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from sparqlqa.errors import QueryError
from sparqlqa.query.sparql_model import SparqlQuery, render
from sparqlqa.query.sparql_reading import READ_FORMS, QueryReading, ServiceCall, read_query

#: set to 1 to check every built query's declaration against the parser's reading (the tests do)
CHECK_ENV = "SPARQLQA_CHECK_BUILT"


@dataclass(frozen=True)
class BuiltQuery:
    """A read query written from terms by sparqlqa, with its form and the SERVICE endpoints it calls."""

    text: str
    form: str  # SELECT | ASK | CONSTRUCT | DESCRIBE
    #: the absolute IRIs of the SERVICE endpoints the text calls, as the builder wrote them
    services: tuple[str, ...] = ()
    #: the structure the text was rendered from, when the builder made one (:meth:`of`): what a KB group
    #: splits into its remote members' parts (:mod:`sparqlqa.kb.group_service`), never the text
    structure: SparqlQuery | None = field(default=None, compare=False, repr=False)
    #: the structure was rendered on one line (:meth:`of`)
    one_line: bool = field(default=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.form not in READ_FORMS:
            raise QueryError(f"a built query must be a read query, not {self.form!r}")

    @classmethod
    def of(cls, query: SparqlQuery, *, one_line: bool = False) -> BuiltQuery:
        """``query`` rendered (:func:`~sparqlqa.query.sparql_model.render`, on ``one_line`` or not), declaring
        its form and SERVICE endpoints from the structure itself."""
        return cls(render(query, one_line=one_line), query.form, query.services(), query, one_line)

    def with_limit(self, limit: int) -> BuiltQuery:
        """The query with ``LIMIT limit`` set on its structure and rendered anew (a query built without a
        structure has none to set it on: :class:`QueryError`)."""
        if self.structure is None:
            raise QueryError("a built query without a structure cannot take a LIMIT")
        return BuiltQuery.of(replace(self.structure, limit=limit), one_line=self.one_line)

    @classmethod
    def select(cls, text: str, *, services: Iterable[str] = ()) -> BuiltQuery:
        return cls(text, "SELECT", tuple(dict.fromkeys(services)))

    @classmethod
    def ask(cls, text: str, *, services: Iterable[str] = ()) -> BuiltQuery:
        return cls(text, "ASK", tuple(dict.fromkeys(services)))

    @classmethod
    def construct(cls, text: str) -> BuiltQuery:
        return cls(text, "CONSTRUCT")

    def __str__(self) -> str:
        return self.text

    def reading(self) -> QueryReading:
        """The declared reading (no parse; checked against the parser's with ``SPARQLQA_CHECK_BUILT=1``)."""
        declared = QueryReading(self.form, tuple(ServiceCall(f"<{iri}>", iri, False) for iri in self.services))
        if os.environ.get(CHECK_ENV) == "1":
            _check(self, declared)
        return declared


def reading_of(sparql: str | BuiltQuery) -> QueryReading:
    """A built query's declared reading; the parser's reading of any other text."""
    return sparql.reading() if isinstance(sparql, BuiltQuery) else read_query(sparql)


def _check(query: BuiltQuery, declared: QueryReading) -> None:
    parsed = read_query(query.text)
    found = {call.iri for call in parsed.services}
    if parsed.form != declared.form or found != set(query.services):
        raise AssertionError(f"built query declares {declared.form} calling {sorted(query.services)}, but reads as "
                             f"{parsed.form} calling {sorted(map(str, found))}:\n{query.text}")
