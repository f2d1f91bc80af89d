"""Rewrites of a query's text that the one reading checks: a LIMIT added, IRIs written as prefixed names.

Two places change a query's text without changing what it does: an endpoint's SELECT gets ``LIMIT
max_rows`` when it has none (:func:`with_limit`), and a saved ``.rq`` writes full IRIs under the KB's
namespaces as prefixed names (:func:`compact_iris`).  Neither reads the text with a lexer of its own:
each proposes a rewrite (where a ``LIMIT`` could go; which ``<iri>`` could be a prefixed name) and keeps
it only when the real parser's reading of the result (:func:`~sparqlqa.query.sparql_reading.read_query`)
has the same :attr:`~sparqlqa.query.sparql_reading.QueryReading.meaning` as the original's — the parse
tree with prefixed names expanded.  A proposal inside a string or a sub-query changes that meaning (or the
top-level LIMIT) and is dropped, so only the rewrite the parser agrees with survives.

Inside a :func:`~sparqlqa.query.limits.bounded` scope a text is read in a query worker, as every
untrusted text is; :func:`compact_iris` opens such a scope itself (it reads answers' queries, an LLM's
among them).

>>> with_limit("SELECT ?s { ?s ?p 'LIMIT 3' } VALUES ?s { <http://a> }", 10)
"SELECT ?s { ?s ?p 'LIMIT 3' } LIMIT 10\\nVALUES ?s { <http://a> }"
>>> compact_iris('SELECT * { ?s <http://e.org/p> "<http://e.org/p>" }', {"e": "http://e.org/"})
('SELECT * { ?s e:p "<http://e.org/p>" }', {'e': 'http://e.org/'})
"""

from __future__ import annotations

__all__ = ["COMPACT_TIMEOUT_S", "compact_iris", "with_limit"]

from collections.abc import Iterator, Mapping
from contextlib import nullcontext
from dataclasses import dataclass

from sparqlqa.errors import QueryError
from sparqlqa.query.limits import QueryLimits, bounded, current
from sparqlqa.query.sparql_reading import QueryReading, declare_prefixes, read_query

#: the time the readings of one :func:`compact_iris` may take when no scope bounds them already
COMPACT_TIMEOUT_S = 30.0


def with_limit(text: str, max_rows: int) -> str:
    """``text`` with ``LIMIT max_rows`` when its reading has no top-level LIMIT (a sub-query's does not count):
    at the end, or before a closing ``VALUES`` block.  A text whose LIMIT cannot be placed where the parser
    reads it as the query's own is returned as it is (its rows are still cut at ``max_rows`` as they arrive).

    >>> with_limit("SELECT * { { SELECT ?s { ?s ?p ?o } LIMIT 5 } } # LIMIT 4", 10)
    'SELECT * { { SELECT ?s { ?s ?p ?o } LIMIT 5 } } # LIMIT 4\\nLIMIT 10'
    >>> with_limit("SELECT * { ?s ?p ?o } LIMIT 3", 10)
    'SELECT * { ?s ?p ?o } LIMIT 3'
    """
    original = read_query(text)
    if original.form != "SELECT" or original.limit is not None:
        return text
    for at in _limit_places(text, original):
        candidate = f"{text[:at]}LIMIT {int(max_rows)}\n{text[at:]}" if at < len(text) \
            else f"{text.rstrip()}\nLIMIT {int(max_rows)}"
        if _same(original, candidate, limit=int(max_rows)):
            return candidate
    return text


def _limit_places(text: str, reading: QueryReading) -> Iterator[int]:
    """Where a top-level LIMIT may go: the end, or (a query closing with VALUES) before a ``VALUES`` word, the
    last one first."""
    if not reading.values_last:
        yield len(text)
        return
    upper = text.upper()
    at = upper.rfind("VALUES")
    while at >= 0:
        yield at
        at = upper.rfind("VALUES", 0, at)


def _same(original: QueryReading, text: str, *, limit: int | None) -> bool:
    """Whether ``text`` reads as ``original`` with top-level LIMIT ``limit`` (a text that cannot be read: no)."""
    try:
        reading = read_query(text)
    except QueryError:
        return False
    return (reading.form, reading.meaning, reading.limit) == (original.form, original.meaning, limit)


@dataclass(frozen=True)
class _Candidate:
    """An ``<iri>`` at ``start`` that could be written ``name:local``."""

    start: int
    end: int
    name: str
    namespace: str
    local: str


def compact_iris(query: str, prefixes: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """``query`` with each full IRI ``<ns + local>`` written ``prefix:local`` where ``ns`` is one of ``prefixes``
    (the longest namespace wins) and ``local`` is a plain name, and the prefixes it used; strings keep their
    text.  A query that declares prefixes of its own, or that cannot be read, is left as written.

    >>> compact_iris("SELECT ?f { ?f <http://e.org/director> ?d }", {"e": "http://e.org/"})
    ('SELECT ?f { ?f e:director ?d }', {'e': 'http://e.org/'})
    """
    candidates = list(_candidates(query, prefixes))
    if not candidates:
        return query, {}
    with bounded(QueryLimits(timeout_s=COMPACT_TIMEOUT_S)) if current() is None else nullcontext():
        try:
            original = read_query(query)
        except QueryError:
            return query, {}
        if original.prefixes:
            return query, {}  # its own declarations could shadow ours
        return _compacted(query, original, candidates)


def _compacted(query: str, original: QueryReading, candidates: list[_Candidate]) -> tuple[str, dict[str, str]]:
    """All the candidates written compact when the reading agrees; else those it agrees with, one by one."""
    text, used = _apply(query, candidates)
    if _same(original, declare_prefixes(text, used), limit=original.limit):
        return text, used
    kept: list[_Candidate] = []
    for candidate in candidates:
        text, used = _apply(query, [*kept, candidate])
        if _same(original, declare_prefixes(text, used), limit=original.limit):
            kept.append(candidate)
    return _apply(query, kept)


def _apply(query: str, chosen: list[_Candidate]) -> tuple[str, dict[str, str]]:
    parts, used, at = [], {}, 0
    for candidate in chosen:
        parts += [query[at:candidate.start], f"{candidate.name}:{candidate.local}"]
        used[candidate.name] = candidate.namespace
        at = candidate.end
    return "".join([*parts, query[at:]]), used


def _candidates(query: str, prefixes: Mapping[str, str]) -> Iterator[_Candidate]:
    """Every ``<…>`` in ``query`` whose content is a namespace of ``prefixes`` followed by a plain name."""
    by_length = sorted(((iri, name) for name, iri in prefixes.items() if iri), key=lambda pair: -len(pair[0]))
    start = query.find("<")
    while start >= 0:
        end = query.find(">", start + 1)
        if end < 0:
            return
        content = query[start + 1:end]
        found = next(((name, ns) for ns, name in by_length if content.startswith(ns) and
                      _plain_name(content[len(ns):])), None)
        if found is not None:
            yield _Candidate(start, end + 1, found[0], found[1], content[len(found[1]):])
            start = query.find("<", end + 1)
        else:
            start = query.find("<", start + 1)


def _plain_name(local: str) -> bool:
    """A local name safe after a prefix: an ASCII letter or ``_``, then letters, digits, ``_`` and ``-``."""
    return bool(local) and local.isascii() and (local[0].isalpha() or local[0] == "_") and \
        all(c.isalnum() or c in "_-" for c in local)
