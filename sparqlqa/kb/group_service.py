"""The remote member of a KB group: its part of a query as a ``SERVICE`` block, run through its own store.

A KB group may include a remote SPARQL endpoint the user registered (``sparqlqa kbs add wd --endpoint
URL``).  The compiler (:mod:`sparqlqa.stages.compile`) puts every pattern whose relation or node type
only that member holds into one line ``SERVICE <URL> { … }`` (:func:`service_line`), with the ``VALUES``
of the pattern's constants inside, so the saved ``.rq`` is a standard federated SPARQL 1.1 query that any
engine holding the local members' data runs.

sparqlqa itself never lets Oxigraph fetch that IRI (Oxigraph would, with no timeout, row limit, User-Agent,
pacing, retries, or ``default-graph-uri`` of the endpoint's configuration): :func:`run_services` sends each
block's patterns as one ``SELECT * WHERE { … }`` through the member's own store (the endpoint's
transport: its timeout, retries, politeness interval, row and response-size limits, read-only guard),
with the outer query's one-variable ``VALUES`` lines the block uses (constants, the candidate being
explained) and the bindings the local patterns give its variables (a bind join, :func:`local_bindings`),
and puts the rows back in the block's place as a ``VALUES`` table, which SPARQL joins exactly as it would
the ``SERVICE``'s solutions; the local store then runs a query without any ``SERVICE``.  Only blocks
naming a registered member's URL exactly are run this way; any other ``SERVICE`` stays in the query and
meets :mod:`sparqlqa.query.service_guard` as usual (refused unless allowed).

>>> line = service_line("http://localhost:8890/sparql", ["  ?a <http://e/p> ?b ."])
>>> line
'  SERVICE <http://localhost:8890/sparql> { ?a <http://e/p> ?b . }'
>>> [(b.endpoint, b.patterns) for b in service_blocks(line, {"http://localhost:8890/sparql"})]
[('http://localhost:8890/sparql', '?a <http://e/p> ?b .')]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from pyoxigraph import BlankNode, NamedNode

from sparqlqa.kb.records import QueryRecord
from sparqlqa.kb.store import QueryResult

#: a one-variable ``VALUES`` line of the query's outer group (the compiler's constants and restrictions):
#: sent along with a block that uses the variable, so the endpoint returns only the rows that can join
_VALUES = re.compile(r"^[ \t]*VALUES \?(\w+) \{[^{}]*\}[ \t]*$", re.MULTILINE)
_VARIABLE = re.compile(r"\?(\w+)")
_BLOCK = re.compile(r"^[ \t]*SERVICE <([^<>\s]+)> \{ (.*) \}[ \t]*$", re.MULTILINE)


def service_line(endpoint: str, lines: Sequence[str]) -> str:
    """``lines`` (patterns, ``VALUES``) inside one ``SERVICE <endpoint> { … }`` line."""
    inner = " ".join(line.strip() for line in lines)
    return f"  SERVICE {NamedNode(endpoint)} {{ {inner} }}"


def merge_service_lines(lines: Sequence[str]) -> list[str]:
    """``lines`` (one group's WHERE lines) with every :func:`service_line` of one endpoint made one, where
    the first stood: the endpoint joins its own patterns, one request, fewer rows back.

    >>> merge_service_lines(["  ?a <http://e/p> ?b .", "  SERVICE <http://x/s> { ?b <http://e/q> ?c . }",
    ...                      "  SERVICE <http://x/s> { ?c a <http://e/T> . }"])[1]
    '  SERVICE <http://x/s> { ?b <http://e/q> ?c . ?c a <http://e/T> . }'
    """
    merged: list[str] = []
    first: dict[str, int] = {}
    for line in lines:
        found = _BLOCK.fullmatch(line)
        if found is None:
            merged.append(line)
        elif found.group(1) in first:
            at = first[found.group(1)]
            merged[at] = merged[at][: -len(" }")] + f" {found.group(2)} }}"
        else:
            first[found.group(1)] = len(merged)
            merged.append(line)
    return merged


@dataclass
class ServiceBlock:
    start: int
    end: int
    endpoint: str
    patterns: str


def service_blocks(sparql: str, endpoints: Collection[str]) -> list[ServiceBlock]:
    """The one-line ``SERVICE`` blocks of ``sparql`` whose IRI is one of ``endpoints``, in order."""
    return [ServiceBlock(m.start(), m.end(), m.group(1), m.group(2))
            for m in _BLOCK.finditer(sparql) if m.group(1) in endpoints]


def values_table(result: QueryResult) -> str:
    """The rows of ``result`` as an inline ``VALUES`` table (unbound: ``UNDEF``; rows with a blank node
    are left out: a blank node cannot be named outside its store)."""
    if not result.variables:
        return "" if result.rows else "FILTER(false)"
    rows = []
    for row in result.rows:
        if any(isinstance(term, BlankNode) for term in row):
            continue
        rows.append("(" + " ".join("UNDEF" if term is None else str(term) for term in row) + ")")
    head = " ".join(f"?{name}" for name in result.variables)
    return f"VALUES ({head}) {{ {' '.join(rows)} }}"


#: runs ``SELECT * WHERE { patterns }`` on the member holding ``endpoint``
RemoteRunner = Callable[[str, str], QueryResult]
#: runs a read query on the local store
LocalRunner = Callable[[str], QueryResult]
#: at most this many local bindings are sent along with a block (more: the block goes without them)
MAX_BOUND_ROWS = 500
#: the compiler's query shape: ``SELECT … WHERE {`` + one line per pattern + ``}`` (then ORDER BY, LIMIT)
_BODY = re.compile(r"WHERE \{\n(.*?)\n\}", re.DOTALL)


def local_bindings(sparql: str, blocks: Sequence[ServiceBlock], local: LocalRunner) -> dict[int, str]:
    """For each block (by position), a ``VALUES`` table of the variables it shares with the local patterns,
    as the local patterns bind them (a bind join: the endpoint is asked only for rows that can join).

    Only for the compiler's one-pattern-per-line queries; FILTER lines on variables only a block binds
    are left out of the local probe; over :data:`MAX_BOUND_ROWS` bindings, none are sent."""
    body = _BODY.search(sparql)
    if body is None:
        return {}
    spans = {(b.start, b.end) for b in blocks}
    start = body.start(1)
    lines, at = [], start
    for line in body.group(1).split("\n"):
        if (at, at + len(line)) not in spans:
            lines.append(line)
        at += len(line) + 1
    patterns = [line for line in lines if not line.strip().startswith("FILTER")]
    local_vars = {v for line in patterns for v in _VARIABLE.findall(line)}
    filters = [line for line in lines if line.strip().startswith("FILTER")
               and set(_VARIABLE.findall(line)) <= local_vars]
    found: dict[int, str] = {}
    for block in blocks:
        shared = sorted(set(_VARIABLE.findall(block.patterns)) & local_vars)
        if not shared or not patterns:
            continue
        head = " ".join(f"?{v}" for v in shared)
        probe = local(f"SELECT DISTINCT {head} WHERE {{\n" + "\n".join([*patterns, *filters])
                      + f"\n}}\nLIMIT {MAX_BOUND_ROWS + 1}")
        if len(probe.rows) <= MAX_BOUND_ROWS:
            found[block.start] = values_table(probe)
    return found


def run_services(sparql: str, endpoints: Collection[str], remote: RemoteRunner,
                 local: LocalRunner | None = None) -> tuple[str, list[QueryRecord]]:
    """``sparql`` with each registered member's ``SERVICE`` block replaced by its rows (``remote`` runs
    them), and the history of the remote queries.  With ``local``, each block is sent with the bindings
    the local patterns give its variables (:func:`local_bindings`)."""
    blocks = service_blocks(sparql, endpoints)
    if not blocks:
        return sparql, []
    values = [(m.group(1), m.group(0).strip()) for m in _VALUES.finditer(sparql)]
    joined = local_bindings(sparql, blocks, local) if local is not None else {}
    parts, history, at = [], [], 0
    for block in blocks:
        used = set(_VARIABLE.findall(block.patterns))
        bound = " ".join([*(line for var, line in values if var in used and line not in block.patterns),
                          *([joined[block.start]] if block.start in joined else [])])
        result = remote(block.endpoint, f"SELECT * WHERE {{ {bound + ' ' if bound else ''}{block.patterns} }}")
        history.append(result.history())  # its store names the endpoint
        parts += [sparql[at:block.start], "  " + values_table(result)]
        at = block.end
    parts.append(sparql[at:])
    return "".join(parts), history


def has_service(sparql: str) -> bool:
    return "SERVICE" in sparql.upper()


__all__ = ["ServiceBlock", "has_service", "merge_service_lines", "run_services", "service_blocks", "service_line",
           "values_table"]
