"""Stores: where SPARQL runs.  Local Oxigraph here; remote endpoints register the same way.

Each store implements one method, :meth:`Store._execute`.  The public
:meth:`Store.query` checks that the text is a read query first, times it and
returns a :class:`QueryResult` that remembers the query that produced it.
Inside a :func:`sparqlqa.query.limits.bounded` scope (or given ``limits=``) a query is
bounded in time, rows and memory and stopped at the bound: an on-disk Oxigraph
store runs it in a worker process (:mod:`sparqlqa.query.query_pool`).

>>> store = OxigraphStore.in_memory()
>>> store.query("ASK { ?s ?p ?o }").boolean
False
"""

from __future__ import annotations

__all__ = ["OxigraphStore", "QueryResult", "Store", "Term", "stores"]

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pyoxigraph import BlankNode, Literal, NamedNode, QueryBoolean, QuerySolutions, Triple
from pyoxigraph import Store as OxStore

from sparqlqa.errors import QueryError, QueryTimeout, QueryTooLarge, StoreUnavailable
from sparqlqa.kb.records import QueryRecord
from sparqlqa.query.built_query import BuiltQuery, reading_of
from sparqlqa.query.limits import QueryLimits, Scope, bounded, current
from sparqlqa.query.query_errors import syntax_error
from sparqlqa.query.query_pool import DEFAULT_WORKERS, Outcome, QueryPool, run_in_process
from sparqlqa.query.service_guard import check_service
from sparqlqa.registry import Registry

Term = NamedNode | BlankNode | Literal | Triple


@dataclass
class QueryResult:
    """What one SPARQL query returned, with the query itself and how long it took."""

    query: str
    form: str  # SELECT | ASK | CONSTRUCT | DESCRIBE
    variables: list[str] = field(default_factory=list)
    rows: list[tuple[Term | None, ...]] = field(default_factory=list)
    boolean: bool | None = None
    triples: list[Triple] = field(default_factory=list)
    elapsed_ms: float = 0.0
    store: str = ""
    #: the row limit of a ``truncate`` scope cut the result short
    truncated: bool = False

    def bindings(self) -> Iterator[dict[str, Term]]:
        """Each row as ``{variable: term}``, unbound variables left out."""
        for row in self.rows:
            yield {var: term for var, term in zip(self.variables, row) if term is not None}

    def column(self, variable: str) -> list[Term]:
        index = self.variables.index(variable)
        return [row[index] for row in self.rows if row[index] is not None]  # type: ignore[misc]

    def history(self) -> QueryRecord:
        """A small record of this query for a stage's history."""
        size = len(self.rows) if self.form == "SELECT" else len(self.triples)
        return QueryRecord(query=self.query, form=self.form, rows=size, elapsed_ms=round(self.elapsed_ms, 3),
                           store=self.store)


class Store(ABC):
    """A SPARQL 1.1 query engine.  Only read queries ever reach it."""

    #: the name the store is registered under in :data:`stores` (the registry sets it)
    kind: ClassVar[str] = "abstract"
    #: hosts a query's SERVICE may call (``HOST`` or ``HOST:PORT``, see :mod:`sparqlqa.query.service_guard`);
    #: empty: every SERVICE is refused
    allow_service: frozenset[str] = frozenset()
    #: True where the engine runs every SERVICE by fetching its IRI itself (Oxigraph): none is the engine's own
    fetches_every_service: ClassVar[bool] = False

    def query(self, sparql: str | BuiltQuery, *, engine_services: Collection[str] = (),
              limits: QueryLimits | None = None) -> QueryResult:
        """Run a read query; updates, and SERVICE calls to hosts not allowed, are refused before anything is sent.

        A ``str`` is read by the SPARQL 1.1 parser (:func:`~sparqlqa.query.sparql_reading.read_query`); a
        :class:`~sparqlqa.query.built_query.BuiltQuery` (sparqlqa's own, written from terms) declares its reading.

        ``engine_services``: for queries sparqlqa builds itself only (never a user's), IRIs of SERVICEs
        the remote engine provides and runs in-house (Wikidata's ``wikibase:mwapi`` name search):
        calling them sends nothing anywhere else.  Ignored by a store that would fetch them.
        With ``limits`` (or inside a :func:`~sparqlqa.query.limits.bounded` scope) the query is stopped at
        the time, row or memory limit (:class:`~sparqlqa.errors.QueryTimeout`, :class:`~sparqlqa.errors.QueryTooLarge`).
        """
        reading = reading_of(sparql)  # the one reading: refuses updates and what it cannot read with certainty
        check_service(reading, self.allow_service,
                      engine_services=() if self.fetches_every_service else engine_services)
        form = reading.form
        text = self._prepared(sparql, form)
        if limits is not None:
            with bounded(limits):
                return self._timed(text, form)
        return self._timed(text, form)

    def _prepared(self, sparql: str | BuiltQuery, form: str) -> str:
        """The text :meth:`_execute` runs for ``sparql`` of ``form``: the query as it is; a store that bounds
        what it sends (an endpoint's row limit) rewrites it here, on a built query's structure where it has one."""
        return str(sparql)

    def _timed(self, sparql: str, form: str) -> QueryResult:
        scope = current()
        if scope is not None and scope.remaining() <= 0:  # the request's time is up before this query started
            raise QueryTimeout(scope.limits.timeout_s)
        start = time.perf_counter()
        result = self._execute(sparql, form)
        if scope is not None:
            _cap(result, scope)  # stores that do not stream (endpoints) are capped once they answer
        result.elapsed_ms = (time.perf_counter() - start) * 1000
        result.store = self.describe()
        return result

    def select(self, sparql: str | BuiltQuery, *, engine_services: Collection[str] = ()) -> QueryResult:
        result = self.query(sparql, engine_services=engine_services)
        if result.form != "SELECT":
            raise QueryError(f"expected a SELECT query, got {result.form}")
        return result

    def scan_rows(self, sparql: BuiltQuery) -> Iterator[tuple[Any, ...]]:
        """The rows of one of sparqlqa's own ``SELECT`` scans of the whole KB, read one at a time where the
        store can stream them (:class:`OxigraphStore` outside a bounded scope: the rows are never all held);
        elsewhere those of :meth:`query`."""
        yield from self.select(sparql).rows

    @abstractmethod
    def _execute(self, sparql: str, form: str) -> QueryResult:
        """Run ``sparql`` (already known to be a read query of ``form``)."""

    @classmethod
    def from_config(cls, config: dict[str, Any], directory: Path | None) -> Store:
        """Open the store a KB manifest describes (``config`` is its ``store`` entry)."""
        raise QueryError(f"store kind {cls.kind!r} cannot be opened from a KB manifest")

    def describe(self) -> str:
        return self.kind

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the store (file locks, connections)."""


def _cap(result: QueryResult, scope: Scope) -> None:
    limit = scope.limits.max_rows
    if max(len(result.rows), len(result.triples)) <= limit:
        return
    if not scope.limits.truncate:
        raise QueryTooLarge("rows", limit)
    result.rows, result.triples, result.truncated = result.rows[:limit], result.triples[:limit], True


#: ``endpoint`` by module path: getting it imports the endpoint store alone (no entry-point scan)
stores: Registry[type[Store]] = Registry("store", ("sparqlqa.kb.store", "sparqlqa.remote.endpoint"),
                                         lazy={"endpoint": "sparqlqa.remote.endpoint"}, name_attribute="kind")


@stores.register("oxigraph")
class OxigraphStore(Store):
    """A local Oxigraph store (on disk or in memory).

    Queries see the union of all graphs as their default graph, so data loaded
    from N-Quads or TriG is found without ``GRAPH`` clauses.  Bounded queries on a
    store on disk run in up to ``query_workers`` worker processes at once, which cannot open a socket
    unless the store allows SERVICE hosts (:attr:`Store.allow_service`: then a separate pool's workers keep
    the network, :mod:`sparqlqa.query.sandbox`).
    """

    fetches_every_service = True

    def __init__(self, oxstore: OxStore | None, *, path: Path | None = None) -> None:
        self._oxstore = oxstore  # None: a read-only store on disk, opened here on first use
        self.path = path
        self.query_workers = DEFAULT_WORKERS
        self._pool: QueryPool | None = None  # workers without network
        self._network_pool: QueryPool | None = None  # workers for a run that allows SERVICE hosts
        self._opening = threading.Lock()

    @classmethod
    def in_memory(cls) -> OxigraphStore:
        return cls(OxStore())

    @classmethod
    def open(cls, path: Path, *, read_only: bool = True) -> OxigraphStore:
        """Open the store in folder ``path``; :class:`StoreUnavailable` when it is missing or cannot be opened.

        Read-only, this process opens it on first use (:attr:`oxstore`: a KB's own scans): bounded queries,
        every query of an ``ask`` among them, run in query workers that open it themselves, so a cold ``ask``
        does not open it twice (0.015 s CPU, benchmarks/RESULTS.md "Cold ask")."""
        if read_only and not path.is_dir():
            raise StoreUnavailable(str(path), "the folder is missing")
        if read_only:
            return cls(None, path=path)
        try:
            oxstore = OxStore(str(path))
        except OSError as exc:
            raise StoreUnavailable(str(path), str(exc)) from exc
        return cls(oxstore, path=path)

    @property
    def oxstore(self) -> OxStore:
        """The pyoxigraph store in this process (a read-only one on disk opened now, once)."""
        if self._oxstore is None:
            with self._opening:
                if self._oxstore is None:
                    assert self.path is not None
                    try:
                        self._oxstore = OxStore.read_only(str(self.path))
                    except (OSError, RuntimeError) as exc:  # RuntimeError: RocksDB's "Corruption: ..."
                        raise StoreUnavailable(str(self.path), str(exc)) from exc
        return self._oxstore

    @classmethod
    def from_config(cls, config: dict[str, Any], directory: Path | None) -> OxigraphStore:
        if directory is None:
            raise QueryError("an in-memory KB has no store folder to open")
        return cls.open(directory / "store", read_only=True)

    def _execute(self, sparql: str, form: str) -> QueryResult:
        scope = current()
        if scope is None:
            return self._execute_here(sparql, form)
        if self.path is None:
            outcome = run_in_process(self.oxstore, sparql, scope)
        else:
            outcome = self._workers(self.path).run(sparql, scope)
        return _result(sparql, form, outcome)

    def _workers(self, path: Path) -> QueryPool:
        """The pool for this run: without network, unless SERVICE hosts are allowed now."""
        if self.allow_service:
            if self._network_pool is None:
                self._network_pool = QueryPool(path, self.query_workers, network=True)
            return self._network_pool
        if self._pool is None:
            self._pool = QueryPool(path, self.query_workers)
        return self._pool

    def scan_rows(self, sparql: BuiltQuery) -> Iterator[tuple[Any, ...]]:
        reading = reading_of(sparql)
        if current() is not None or reading.form != "SELECT":
            yield from super().scan_rows(sparql)
            return
        check_service(reading, self.allow_service)
        raw = self._run_here(str(sparql))
        assert isinstance(raw, QuerySolutions)
        width = len(raw.variables)
        try:
            for solution in raw:
                yield tuple(solution[i] for i in range(width))
        except OSError as exc:
            raise QueryError(f"the query failed in Oxigraph: {exc}") from exc

    def _run_here(self, sparql: str) -> Any:
        """Oxigraph's lazy answer to ``sparql``, unbounded, in this process."""
        try:
            return self.oxstore.query(sparql, use_default_graph_as_union=True)
        except SyntaxError as exc:
            raise syntax_error(sparql, exc) from exc
        except OSError as exc:
            raise QueryError(f"the query failed in Oxigraph: {exc}") from exc

    def _execute_here(self, sparql: str, form: str) -> QueryResult:
        """Unbounded, in this process: the KB's own scans (indexes, schema), never a client's query."""
        raw = self._run_here(sparql)
        if isinstance(raw, QueryBoolean):
            return QueryResult(query=sparql, form=form, boolean=bool(raw))
        if isinstance(raw, QuerySolutions):
            variables = [v.value for v in raw.variables]
            rows = [tuple(solution[i] for i in range(len(variables))) for solution in raw]
            return QueryResult(query=sparql, form=form, variables=variables, rows=rows)
        return QueryResult(query=sparql, form=form, triples=list(raw))

    def describe(self) -> str:
        return f"oxigraph:{self.path}" if self.path else "oxigraph:memory"

    def close(self) -> None:
        for pool in (self._pool, self._network_pool):
            if pool is not None:
                pool.close()
        self._pool = self._network_pool = None

    def __len__(self) -> int:
        return len(self.oxstore)


def _result(sparql: str, form: str, outcome: Outcome) -> QueryResult:
    if outcome.boolean is not None:
        return QueryResult(query=sparql, form=form, boolean=outcome.boolean)
    return QueryResult(query=sparql, form=form, variables=outcome.variables, rows=outcome.rows,
                       triples=outcome.triples, truncated=outcome.truncated)
