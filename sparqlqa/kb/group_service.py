"""The remote member of a KB group: its part of a query as a ``SERVICE`` block, run through its own store.

A KB group may include a remote SPARQL endpoint the user registered (``sparqlqa kbs add wd --endpoint
URL``).  The compiler (:mod:`sparqlqa.stages.compile`) puts every pattern whose relation or node type
only that member holds into one :class:`~sparqlqa.query.sparql_model.Service` block per endpoint, with the
``VALUES`` of the pattern's constants inside, so the saved ``.rq`` is a standard federated SPARQL 1.1
query that any engine holding the local members' data runs.

sparqlqa itself never lets Oxigraph fetch that IRI (Oxigraph would, with no timeout, row limit, User-Agent,
pacing, retries, or ``default-graph-uri`` of the endpoint's configuration): :func:`run_services` works on
the compiled structure (:class:`~sparqlqa.query.sparql_model.SparqlQuery`, never its text) and sends each
block's patterns as one ``SELECT * WHERE { … }`` through the member's own store (the endpoint's
transport: its timeout, retries, politeness interval, row and response-size limits, read-only guard),
with the outer query's one-variable ``VALUES`` the block uses (constants, the candidate being explained)
and the bindings the local patterns give its variables (a bind join, :func:`local_bindings`), and puts
the rows back in the block's place as a ``VALUES`` table, which SPARQL joins exactly as it would the
``SERVICE``'s solutions; the local store then runs a query without any ``SERVICE``.  Only blocks naming a
registered member's URL exactly are run this way; any other ``SERVICE`` stays in the query and meets
:mod:`sparqlqa.query.service_guard` as usual (refused unless allowed).

>>> from pyoxigraph import NamedNode, Variable
>>> from sparqlqa.query.sparql_model import Triple, render
>>> url = "http://localhost:8890/sparql"
>>> block = Service(NamedNode(url), (Triple(Variable("a"), NamedNode("http://e/p"), Variable("b")),))
>>> query = SparqlQuery("SELECT", (block,), (Variable("a"),), distinct=True)
>>> [(at, b.endpoint.value) for at, b in service_blocks(query, {url})]
[(0, 'http://localhost:8890/sparql')]
>>> render(remote_query(query, block, None), one_line=True)
'SELECT * WHERE { ?a <http://e/p> ?b . }'
"""

from __future__ import annotations

__all__ = ["LocalRunner", "RemoteRunner", "local_bindings", "remote_query", "run_services", "service_blocks",
           "values_table"]

from collections.abc import Callable, Collection
from dataclasses import replace

from pyoxigraph import BlankNode, Variable

from sparqlqa.kb.records import QueryRecord
from sparqlqa.kb.store import QueryResult
from sparqlqa.query.sparql_model import (
    Element,
    Filter,
    Service,
    SparqlQuery,
    Values,
    ValuesTable,
    variables,
)


def service_blocks(query: SparqlQuery, endpoints: Collection[str]) -> list[tuple[int, Service]]:
    """The ``SERVICE`` blocks of ``query``'s group whose endpoint is one of ``endpoints``, with their
    positions, in order."""
    return [(at, element) for at, element in enumerate(query.where)
            if isinstance(element, Service) and element.endpoint.value in endpoints]


def values_table(result: QueryResult) -> Element | None:
    """The rows of ``result`` as an inline ``VALUES`` table (unbound: ``UNDEF``; rows with a blank node
    are left out: a blank node cannot be named outside its store); no variables: nothing when there were
    rows, ``FILTER(false)`` when there were none."""
    if not result.variables:
        return None if result.rows else Filter("FILTER(false)")
    rows = tuple(tuple(row) for row in result.rows if not any(isinstance(term, BlankNode) for term in row))
    return ValuesTable(tuple(Variable(name) for name in result.variables), rows)


#: runs a block's ``SELECT * WHERE { … }`` on the member holding ``endpoint``
RemoteRunner = Callable[[str, SparqlQuery], QueryResult]
#: runs a read query on the local store
LocalRunner = Callable[[SparqlQuery], QueryResult]
#: at most this many local bindings are sent along with a block (more: the block goes without them)
MAX_BOUND_ROWS = 500


def local_bindings(query: SparqlQuery, blocks: list[tuple[int, Service]], local: LocalRunner) -> dict[int, Element]:
    """For each block (by position), a ``VALUES`` table of the variables it shares with the local patterns,
    as the local patterns bind them (a bind join: the endpoint is asked only for rows that can join).

    FILTERs on variables only a block binds are left out of the local probe; over :data:`MAX_BOUND_ROWS`
    bindings, none are sent."""
    apart = {at for at, _ in blocks}
    rest = [element for at, element in enumerate(query.where) if at not in apart]
    patterns = [element for element in rest if not isinstance(element, Filter)]
    local_vars = {name for element in patterns for name in variables(element)}
    filters = [element for element in rest if isinstance(element, Filter) and element.variables <= local_vars]
    found: dict[int, Element] = {}
    for at, block in blocks:
        shared = sorted(variables(block) & local_vars)
        if not shared or not patterns:
            continue
        probe = local(SparqlQuery("SELECT", (*patterns, *filters), tuple(Variable(v) for v in shared),
                                  distinct=True, limit=MAX_BOUND_ROWS + 1))
        if len(probe.rows) <= MAX_BOUND_ROWS:
            table = values_table(probe)
            if table is not None:
                found[at] = table
    return found


def remote_query(query: SparqlQuery, block: Service, joined: Element | None) -> SparqlQuery:
    """What the endpoint is asked for ``block``: ``SELECT *`` over its patterns, after the outer query's
    one-variable ``VALUES`` on its variables (those it does not hold already) and the local bindings."""
    used = variables(block)
    bound = [element for element in query.where
             if isinstance(element, Values) and element.variable.value in used and element not in block.elements]
    return SparqlQuery("SELECT", (*bound, *([joined] if joined is not None else []), *block.elements))


def run_services(query: SparqlQuery, endpoints: Collection[str], remote: RemoteRunner,
                 local: LocalRunner | None = None) -> tuple[SparqlQuery, list[QueryRecord]]:
    """``query`` with each registered member's ``SERVICE`` block replaced by its rows (``remote`` runs
    them), and the history of the remote queries.  With ``local``, each block is sent with the bindings
    the local patterns give its variables (:func:`local_bindings`)."""
    blocks = service_blocks(query, endpoints)
    if not blocks:
        return query, []
    joined = local_bindings(query, blocks, local) if local is not None else {}
    where: list[Element | None] = list(query.where)
    history = []
    for at, block in blocks:
        result = remote(block.endpoint.value, remote_query(query, block, joined.get(at)))
        history.append(result.history())  # its store names the endpoint
        where[at] = values_table(result)
    kept = tuple(element for element in where if element is not None)
    return replace(query, where=kept), history
