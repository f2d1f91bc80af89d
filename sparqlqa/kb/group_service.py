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
explained), and puts the rows back in the block's place as a ``VALUES`` table, which SPARQL joins exactly as it would
the ``SERVICE``'s solutions; the local store then runs a query without any ``SERVICE``.  Only blocks
naming a registered member's URL exactly are run this way; any other ``SERVICE`` stays in the query and
meets :mod:`sparqlqa.kb.service_guard` as usual (refused unless allowed).

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


def run_services(sparql: str, endpoints: Collection[str], remote: RemoteRunner) -> tuple[str, list[dict[str, object]]]:
    """``sparql`` with each registered member's ``SERVICE`` block replaced by its rows (``remote`` runs
    them), and the history of the remote queries."""
    blocks = service_blocks(sparql, endpoints)
    if not blocks:
        return sparql, []
    values = [(m.group(1), m.group(0).strip()) for m in _VALUES.finditer(sparql)]
    parts, history, at = [], [], 0
    for block in blocks:
        used = set(_VARIABLE.findall(block.patterns))
        bound = " ".join(line for var, line in values if var in used and line not in block.patterns)
        result = remote(block.endpoint, f"SELECT * WHERE {{ {bound + ' ' if bound else ''}{block.patterns} }}")
        history.append({**result.history(), "service": block.endpoint})
        parts += [sparql[at:block.start], "  " + values_table(result)]
        at = block.end
    parts.append(sparql[at:])
    return "".join(parts), history


def has_service(sparql: str) -> bool:
    return "SERVICE" in sparql.upper()


__all__ = ["ServiceBlock", "has_service", "merge_service_lines", "run_services", "service_blocks", "service_line",
           "values_table"]
