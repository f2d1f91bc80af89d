r"""What a SPARQL query does, read once by a real SPARQL 1.1 parser: the one reading every check uses.

:func:`read_query` parses the text with rdflib's SPARQL 1.1 grammar (``rdflib.plugins.sparql.parser``,
a dependency already; it follows the W3C grammar rule by rule and is run against the W3C test suite)
and returns a small frozen :class:`QueryReading`: the form, the SERVICE calls with their endpoint
IRIs and SILENT flag, the declared and used prefixes, the projected variables.  The read-only check
(:class:`~sparqlqa.errors.UpdateRefused`), the SERVICE check (:mod:`sparqlqa.query.service_guard`) and
the prefixes sparqlqa declares for a user (:func:`with_default_prefixes`) all take
their decision from this reading; no regular expression reads the query.

Why rdflib's parser and not another: pyoxigraph 0.5 exposes no parse-only call (``Store.query``
parses *and runs*, SERVICE included), and rdflib's grammar is a complete SPARQL 1.1 grammar kept by
a large project.  Only the parse tree is used (``parseQuery``'s result), not rdflib's algebra,
whose translation raises on some valid queries.

Oxigraph still runs the text, so where the two parsers could read one text two ways the query is
refused (:class:`UnreadableQuery`) rather than guessed at:

* ``\uXXXX``/``\UXXXXXXXX`` escapes: SPARQL decodes them before parsing (rdflib does), Oxigraph
  only inside strings and IRIs.  An escape is decoded here only when the character it stands for
  cannot move a token boundary (not a quote, ``<``, ``>``, ``#``, backslash, brace, CR or LF);
  any other is refused.  Decoding a harmless one outside a string or IRI only
  gives text Oxigraph rejects as a syntax error, so nothing runs.
* a carriage return ends a comment for Oxigraph, not for rdflib: the reading sees every CR as LF
  (this moves no other token boundary: a CR is white space or a string's content for both).
* a query rdflib cannot parse: refused.  Its error keeps Oxigraph's located message when Oxigraph's
  parser also fails on the text: it is given the text followed by ``"\n\x00"``, which no SPARQL
  query can end with, so Oxigraph can only answer with a syntax error and never runs anything.
* a SERVICE endpoint that is a variable, or whose IRI needs the query's BASE to resolve, has no
  host to check: :mod:`sparqlqa.query.service_guard` refuses it.

A stronger design, handing Oxigraph only text regenerated from this parse tree, was not taken:
rdflib's algebra-to-text writer does not round-trip every query (aggregates, paths, blank nodes,
VALUES), so answers could change; the fuzz test (``tests/faults/test_fault_service_fuzz.py``) checks
instead that whatever this reading lets through makes no request.

Parsing costs a few milliseconds, so readings are cached per query text (a bounded LRU).  An untrusted
text (one read inside a :func:`~sparqlqa.query.limits.bounded` scope) is parsed in a query worker, under the
scope's deadline and memory limit (:func:`read_query`).

>>> reading = read_query("PREFIX e: <http://ex.org/> "
...                      "SELECT ?s (COUNT(?o) AS ?n) { SERVICE SILENT e:sparql { ?s ?p ?o } }")
>>> reading.form, reading.variables, [(call.iri, call.silent) for call in reading.services]
('SELECT', ('s', 'n'), [('http://ex.org/sparql', True)])
>>> read_query("SELECT * { BIND(EXISTS{?s ?p ?o}<'a> b' AS ?z) SERVICE <http://127.0.0.1:9/x> {} }").services[0].iri
'http://127.0.0.1:9/x'
>>> read_query("DELETE WHERE { ?s ?p ?o }")
Traceback (most recent call last):
...
sparqlqa.errors.UpdateRefused: refused to send a SPARQL update (DELETE): sparqlqa only runs read queries
"""

from __future__ import annotations

__all__ = ["READ_FORMS", "QueryReading", "ServiceCall", "UnreadableQuery", "clear_cache", "declare_prefixes",
           "missing_prefixes", "query_with_prefixes", "read_query", "with_default_prefixes"]

import functools
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urljoin, urlsplit

from sparqlqa.errors import QueryError, SparqlSyntaxError, UpdateRefused
from sparqlqa.query.limits import current

READ_FORMS = ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE")
_FORMS = {"SelectQuery": "SELECT", "AskQuery": "ASK", "ConstructQuery": "CONSTRUCT", "DescribeQuery": "DESCRIBE"}
#: rdflib's update requests → the keyword :class:`UpdateRefused` names
_UPDATES = {"InsertData": "INSERT", "DeleteData": "DELETE", "DeleteWhere": "DELETE", "Modify": "DELETE/INSERT",
            "Load": "LOAD", "Clear": "CLEAR", "Drop": "DROP", "Create": "CREATE", "Add": "ADD", "Move": "MOVE",
            "Copy": "COPY"}
#: characters an escape may not stand for: each could end or start a string, IRI or comment (other
#: control characters are fine: pyoxigraph writes them as ``\u`` escapes in the literals sparqlqa builds)
_UNSAFE = frozenset("'\"<>#\\{}|^`\n\r")
#: no SPARQL query ends with this, so Oxigraph can only reject the text (see the module docstring)
_NEVER_VALID = "\n\x00"
CACHE_SIZE = 512
RDFS_NS = "http://www.w3.org/2000/01/rdf-schema#"
T = TypeVar("T")


class UnreadableQuery(SparqlSyntaxError):
    """The guard cannot read a query with certainty, so it is refused before any engine sees it."""


@dataclass(frozen=True)
class ServiceCall:
    """One ``SERVICE`` of a query: the endpoint as written (``<iri>``, ``prefix:local`` or ``?var``),
    its absolute IRI (``None`` for a variable, an undeclared prefix, or an IRI that needs BASE) and
    whether it is ``SILENT``."""

    written: str
    iri: str | None
    silent: bool


@dataclass(frozen=True)
class QueryReading:
    """What a read query does, from its parse tree."""

    form: str  # SELECT | ASK | CONSTRUCT | DESCRIBE
    services: tuple[ServiceCall, ...] = ()
    #: PREFIX declarations, in order (name without ``:``, IRI as resolved against BASE)
    prefixes: tuple[tuple[str, str], ...] = ()
    #: prefixes the query's prefixed names use (declared or not)
    used_prefixes: frozenset[str] = frozenset()
    #: a SELECT's projected variables without ``?``; ``None`` for ``SELECT *`` and the other forms
    variables: tuple[str, ...] | None = None
    #: the top-level ``LIMIT`` (``None``: none; a sub-query's does not count)
    limit: int | None = None
    #: the query ends with a top-level ``VALUES`` block (after its modifiers)
    values_last: bool = False
    #: a digest of the parse tree with prefixed names expanded, blank nodes numbered in order, the prologue and
    #: the top-level LIMIT left out: two texts with the same ``meaning`` (and ``limit``) are the same query,
    #: however their IRIs are written (what :mod:`sparqlqa.query.sparql_rewrite` checks its rewrites against)
    meaning: str = ""

    @property
    def declared(self) -> frozenset[str]:
        return frozenset(name for name, _ in self.prefixes)


def read_query(text: str) -> QueryReading:
    """The reading of ``text``: :class:`UpdateRefused` for an update, :class:`UnreadableQuery` or
    :class:`~sparqlqa.errors.SparqlSyntaxError` when it cannot be read, :class:`QueryError` for
    something that is no query at all.

    Inside a :func:`~sparqlqa.query.limits.bounded` scope the text is untrusted (a served request, MCP, the CLI
    ``sparql`` command, an LLM's query): it is read in a query worker
    (:func:`sparqlqa.query.query_pool.read_untrusted`), so its parse counts against the scope's deadline and
    memory limit, not the caller's process (rdflib's parser spends ~0.3 s of CPU refusing a query nested
    6,000 groups deep).  Outside a scope (a KB's own scans, tests, library calls) it is read here.  Either way
    a text read once is remembered (:data:`CACHE_SIZE` readings) and not read again."""
    return _remembered_reading(text)


@functools.lru_cache(maxsize=CACHE_SIZE)
def _remembered_reading(text: str) -> QueryReading:
    """:func:`read_query`'s work, remembered by text (what cannot be read is not remembered)."""
    scope = current()
    if scope is None:
        reading = _read(text)
    else:
        from sparqlqa.query.query_pool import read_untrusted

        reading = read_untrusted(text, scope)
    return reading


def clear_cache() -> None:
    """Forget every reading (benchmarks and tests that time or count parses)."""
    _remembered_reading.cache_clear()


def _read(text: str) -> QueryReading:
    parsed = _parse(text)
    prologue, body = parsed[0], parsed[1]
    prefixes, base_used = _prologue(prologue)
    names = dict(prefixes)
    limits = _get(body, "limitoffset")
    limit = _get(limits, "limit") if limits is not None else None
    return QueryReading(form=_FORMS[body.name], services=tuple(_services(body, names, base_used)),
                        prefixes=tuple(prefixes), used_prefixes=frozenset(_used_prefixes(body)),
                        variables=_projection(body), limit=None if limit is None else int(limit),
                        values_last=_get(body, "valuesClause") is not None,
                        meaning=_meaning(body, names, base_used))


#: rdflib's grammar recurses ~25 Python frames per nested group: the parse runs on a thread of its own with
#: a large stack and this recursion limit (about 400 nested groups); deeper is refused
PARSE_RECURSION = 12_000
_PARSE_STACK = 512 << 20
_parser_lock = threading.Lock()
_THREAD = "sparql-reading"


def _tree_only_services() -> None:
    """Make rdflib's ``ServiceGraphPattern`` skip, on the parser thread only, its search of the whole
    text for the SERVICE's source (``service_string``, used by rdflib's own evaluator): that search
    finds the outer SERVICE again while parsing a nested one and never ends (RecursionError on
    ``SERVICE <a> { SERVICE <b> { } }``), and costs a scan of the text per SERVICE.  Elsewhere in
    the process rdflib behaves as before."""
    from rdflib.plugins.sparql import parser
    from rdflib.plugins.sparql.parserutils import Comp, CompValue, ParamValue

    class ServiceComp(Comp):
        def postParse(self, instring: str, loc: int, tokenList: Any) -> Any:
            if threading.current_thread().name.startswith(_THREAD):
                result = CompValue(self.name)
                for token in tokenList:
                    if isinstance(token, ParamValue) and token.isList:
                        result.setdefault(token.name, []).append(token.tokenList)
                    elif isinstance(token, ParamValue):
                        result[token.name] = token.tokenList
                return result
            return super().postParse(instring, loc, tokenList)

    parser.ServiceGraphPattern.__class__ = ServiceComp


def _parse_on_big_stack(grammar: Any, text: str) -> Any:
    """``grammar.parse_string(text)`` on the parser thread (started once, with a 512 MiB stack)."""
    with _parser_lock:
        parser = _parser_thread(os.getpid())  # a forked child has no parser thread: its own pid starts one
    return parser.submit(grammar.parse_string, text, parse_all=True).result()


@functools.cache
def _parser_thread(pid: int) -> Any:
    """The parser thread of process ``pid`` (a one-worker executor), started on its first parse."""
    from concurrent.futures import ThreadPoolExecutor

    _tree_only_services()
    previous = threading.stack_size(_PARSE_STACK)
    try:
        parser = ThreadPoolExecutor(max_workers=1, thread_name_prefix=_THREAD)
        parser.submit(sys.setrecursionlimit, max(sys.getrecursionlimit(), PARSE_RECURSION)).result()
    finally:
        threading.stack_size(previous)
    return parser


def _parse(text: str) -> Any:
    """rdflib's parse tree of the query (escapes decoded as above, CR read as LF)."""
    from pyparsing import ParseBaseException
    from rdflib.plugins.sparql.parser import Query

    readable = _decode_escapes(text).replace("\r\n", "\n").replace("\r", "\n")
    try:
        return _parse_on_big_stack(Query, readable)
    except RecursionError:
        raise UnreadableQuery("refused: the query is nested too deeply for the SPARQL guard to read it",
                              line=0, column=0, problem="nested too deeply",
                              hint="write it with fewer nested groups") from None
    except ParseBaseException as exc:
        _refuse_update(readable)
        # a query followed by "; UPDATE": refused as the update it carries (either way nothing runs)
        _refuse_update(readable[exc.loc:].replace(";", "", 1), tail=True)
        raise _unreadable(text, exc) from None


def _refuse_update(readable: str, *, tail: bool = False) -> None:
    """:class:`UpdateRefused` when ``readable`` parses as a SPARQL update (else, unless it is the ``tail``
    of a text, a :class:`QueryError` when it is only a prologue)."""
    from pyparsing import ParseBaseException
    from rdflib.plugins.sparql.parser import UpdateUnit

    try:
        update = _parse_on_big_stack(UpdateUnit, readable)[0]
    except (ParseBaseException, RecursionError):
        return
    requests = [request for request in _nodes(_get(update, "request")) if request.name in _UPDATES]
    if requests:
        raise UpdateRefused(_UPDATES[requests[0].name])
    if tail:
        return
    # a prologue alone is an (empty) update, and no query either
    raise QueryError("not a SPARQL query: expected SELECT, ASK, CONSTRUCT or DESCRIBE",
                     hint="check the query text; PREFIX and BASE declarations may come first")


def _unreadable(text: str, exc: Any) -> SparqlSyntaxError:
    """The error for a text rdflib cannot parse: Oxigraph's located syntax error when its parser stops
    inside the text too; when it reads to the end, the same at the end of the text where a brace is never
    closed, else :class:`UnreadableQuery` with those words (a text the two parsers may read differently); else
    :class:`UnreadableQuery` at rdflib's position."""
    from pyoxigraph import Store

    from sparqlqa.query.query_errors import parser_position, syntax_error, tokens, unbalanced

    try:
        Store().query(text + _NEVER_VALID)
    except SyntaxError as oxigraph:
        raw = str(oxigraph)
        where = parser_position(raw)
        lines = text.split("\n")
        if where is not None and where[0] <= len(lines):  # it stopped inside the text itself
            return syntax_error(text, oxigraph)
        if where is not None:  # it read to the end of the text: cut short (an unclosed brace), or unsure
            end = syntax_error(text, f"error at {len(lines)}:{len(lines[-1]) + 1}: {raw.partition(': ')[2]}")
            return end if unbalanced(tokens(text)) is not None else _unsure(end)
    except Exception:  # nothing ran (the text cannot be valid): fall back to rdflib's words
        pass
    line, column = int(getattr(exc, "lineno", 0) or 0), int(getattr(exc, "col", 0) or 0)
    return UnreadableQuery(
        f"refused: the SPARQL guard cannot read this query with certainty (its SPARQL 1.1 parser stops at "
        f"line {line}, column {column}: {getattr(exc, 'msg', exc)}), so it cannot tell what the query would do",
        line=line, column=column, problem="unreadable by the SPARQL guard",
        hint="check the query near that spot; write escapes (\\u) of quotes, '<', '>' or '#' as the "
        "characters themselves inside strings, and every IRI in <...>", parser_message=str(exc))


def _unsure(error: SparqlSyntaxError) -> UnreadableQuery:
    """``error`` (located by Oxigraph's parser) as the guard's refusal of a text it cannot read with certainty."""
    return UnreadableQuery(f"refused: the SPARQL guard cannot read this query with certainty: {error.message}",
                           line=error.line, column=error.column, problem=error.problem, hint=error.hint,
                           parser_message=error.parser_message)


def _decode_escapes(text: str) -> str:
    r"""``text`` with its ``\uXXXX``/``\UXXXXXXXX`` escapes decoded; :class:`UnreadableQuery` for one that
    stands for a character that could move a token boundary (an escaped backslash ``\\`` is kept).

    >>> _decode_escapes(r"SELECT ('caf\u00e9' AS ?x) {}")
    "SELECT ('café' AS ?x) {}"
    """
    parts: list[str] = []
    start = i = 0
    while (i := text.find("\\", i)) >= 0:
        kind = text[i + 1:i + 2]
        size = {"u": 4, "U": 8}.get(kind, 0)
        digits = text[i + 2:i + 2 + size]
        if kind == "\\" or not size or len(digits) < size or not all(c in "0123456789abcdefABCDEF" for c in digits):
            i += 2 if kind == "\\" else 1
            continue
        parts += [text[start:i], _escaped(text, i, int(digits, 16))]
        i = start = i + 2 + size
    return "".join([*parts, text[start:]]) if parts else text


def _escaped(text: str, at: int, code: int) -> str:
    char = chr(code) if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else ""
    if not char or char in _UNSAFE:
        line = text.count("\n", 0, at) + 1
        column = at - (text.rfind("\n", 0, at) + 1) + 1
        escape = text[at:at + (6 if text[at + 1] == "u" else 10)]
        raise UnreadableQuery(
            f"refused: the escape {escape!r} at line {line}, column {column} stands for a "
            "character that changes how the query reads, so the SPARQL guard cannot read it with certainty",
            line=line, column=column, problem="escape the guard cannot read",
            hint="write that character itself inside the string (quotes escaped as \\' or \\\")")
    return char


# -- the parse tree -----------------------------------------------------------------------------

def _nodes(tree: Any) -> Iterator[Any]:
    """Every rdflib ``CompValue`` in ``tree``, depth first (iteratively: deep trees are fine)."""
    from rdflib.plugins.sparql.parserutils import CompValue

    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, CompValue):
            yield node
            stack.extend(reversed(list(dict.values(node))))
        elif isinstance(node, (list, tuple)) or type(node).__name__ == "ParseResults":
            stack.extend(reversed(list(node)))


def _get(node: Any, key: str) -> Any:
    """``node[key]`` as parsed (rdflib's ``CompValue.get`` evaluates what it returns)."""
    return dict.get(node, key)


def _prologue(prologue: Any) -> tuple[list[tuple[str, str]], set[str]]:
    """The PREFIX declarations (IRIs resolved against BASE) and the names whose IRI needed BASE."""
    base: str | None = None
    prefixes: list[tuple[str, str]] = []
    needed_base: set[str] = set()
    for decl in prologue:
        iri = str(_get(decl, "iri"))
        absolute = bool(urlsplit(iri).scheme)
        resolved = iri if absolute or base is None else urljoin(base, iri)
        if decl.name == "Base":
            base = resolved
        else:
            name = str(_get(decl, "prefix") or "")
            prefixes.append((name, resolved))
            if absolute:
                needed_base.discard(name)
            else:
                needed_base.add(name)
    return prefixes, needed_base


def _pname_iri(node: Any, prefixes: dict[str, str], needed_base: set[str]) -> str | None:
    prefix = str(_get(node, "prefix") or "")
    if prefix not in prefixes or prefix in needed_base:
        return None
    local = str(_get(node, "localname") or "")
    return prefixes[prefix] + "".join(c for i, c in enumerate(local) if c != "\\" or local[i - 1:i] == "\\")


def _services(body: Any, prefixes: dict[str, str], needed_base: set[str]) -> Iterator[ServiceCall]:
    from rdflib.term import URIRef, Variable

    for node in _nodes(body):
        if node.name != "ServiceGraphPattern":
            continue
        term, silent = _get(node, "term"), _get(node, "silent") is not None
        if isinstance(term, Variable):
            yield ServiceCall(f"?{term}", None, silent)
        elif isinstance(term, URIRef):
            iri = str(term)
            yield ServiceCall(f"<{iri}>", iri if urlsplit(iri).scheme else None, silent)
        else:  # a prefixed name
            written = f"{_get(term, 'prefix') or ''}:{_get(term, 'localname') or ''}"
            yield ServiceCall(written, _pname_iri(term, prefixes, needed_base), silent)


def _meaning(body: Any, prefixes: dict[str, str], needed_base: set[str]) -> str:
    """:attr:`QueryReading.meaning` of ``body``: its top-level LIMIT left out (an OFFSET stays)."""
    import hashlib

    from rdflib.plugins.sparql.parserutils import CompValue

    digest, blanks = hashlib.blake2b(digest_size=16), {}  # type: ignore[var-annotated]
    limits = _get(body, "limitoffset")
    top = [(key, value) for key, value in dict.items(body) if key != "limitoffset"]
    stack: list[Any] = [")", *(x for key, value in reversed(top) for x in (value, f"={key}")), f"({body.name}"]
    if limits is not None and _get(limits, "offset") is not None:
        stack[1:1] = [_get(limits, "offset"), "=offset"]
    while stack:
        node = stack.pop()
        if isinstance(node, CompValue) and node.name == "pname":
            token = f"I{_pname_iri(node, prefixes, needed_base) or _written(node)}"
        elif isinstance(node, CompValue):
            token = f"({node.name}"
            stack.append(")")
            for key, value in reversed(list(dict.items(node))):
                stack.extend((value, f"={key}"))
        elif isinstance(node, (list, tuple)) or type(node).__name__ == "ParseResults":
            stack.append("]")
            stack.extend(reversed(list(node)))
            token = "["
        else:
            token = _leaf(node, blanks)
        digest.update(token.encode("utf-8", "surrogatepass") + b"\x00")
    return digest.hexdigest()


def _leaf(node: Any, blanks: dict[Any, int]) -> str:
    """A leaf of the parse tree as one token of :func:`_meaning` (blank nodes numbered as they come)."""
    from rdflib.term import BNode, Literal, URIRef, Variable

    if isinstance(node, URIRef):
        return f"I{node}"
    if isinstance(node, Literal):
        return f"L{node}\x01{node.datatype or ''}\x01{node.language or ''}"
    if isinstance(node, Variable):
        return f"V{node}"
    if isinstance(node, BNode):
        return f"B{blanks.setdefault(node, len(blanks))}"
    return f"S{node}" if isinstance(node, str) else f"O{node!r}"


def _written(node: Any) -> str:
    return f"{_get(node, 'prefix') or ''}:{_get(node, 'localname') or ''}"


def _used_prefixes(body: Any) -> Iterator[str]:
    for node in _nodes(body):
        if node.name == "pname":
            yield str(_get(node, "prefix") or "")


def _projection(body: Any) -> tuple[str, ...] | None:
    if body.name != "SelectQuery" or not _get(body, "projection"):
        return None
    return tuple(str(_get(item, "var") or _get(item, "evar")) for item in _get(body, "projection"))


# -- the prefixes sparqlqa declares for a user ----------------------------------------------------

def with_default_prefixes(query: str, prefixes: Mapping[str, str]) -> str:
    """Declare the well-known ``prefixes`` (rdf, rdfs, skos, sqa, kb, ...) the query's prefixed names use
    but its PREFIX lines do not declare, as its reading says.

    >>> with_default_prefixes("SELECT * WHERE { ?s rdfs:label ?l }", {"rdfs": RDFS_NS}).splitlines()[0]
    'PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>'
    >>> with_default_prefixes("SELECT * WHERE { ?s ?p 'rdfs:label' }", {"rdfs": RDFS_NS}).splitlines()[0]
    "SELECT * WHERE { ?s ?p 'rdfs:label' }"
    """
    return declare_prefixes(query, missing_prefixes(query, prefixes))


def missing_prefixes(query: str, prefixes: Mapping[str, str]) -> dict[str, str]:
    """Those of ``prefixes`` the query uses but does not declare (all of them when it cannot be read, so its
    error is the real one; none for an update)."""
    try:
        reading = read_query(query)
        used, declared = reading.used_prefixes, reading.declared
    except UpdateRefused:
        return {}
    except QueryError:
        used, declared = frozenset(prefixes), frozenset()
    return {name: iri for name, iri in prefixes.items() if name in used and name not in declared}


def declare_prefixes(query: str, added: Mapping[str, str]) -> str:
    """``query`` after one ``PREFIX`` line per entry of ``added``, in its order (what
    :func:`~sparqlqa.query.query_errors.syntax_error` is told as ``added``)."""
    lines = [f"PREFIX {name}: <{iri}>" for name, iri in added.items()]
    return "\n".join([*lines, query]) if lines else query


def query_with_prefixes(run: Callable[[str], T], query: str, prefixes: Mapping[str, str]) -> T:
    """``run(query)`` with the undeclared well-known ``prefixes`` declared first; a syntax error speaks of
    the query as written (its lines, not those of the added declarations)."""
    from sparqlqa.query.query_errors import parser_position, syntax_error

    added = missing_prefixes(query, prefixes)
    full = declare_prefixes(query, added)
    try:
        return run(full)
    except SparqlSyntaxError as exc:
        if not added or exc.line == 0 or parser_position(exc.parser_message) is None:
            raise
        located = syntax_error(full, exc.parser_message, added=tuple(added))
        raise (_unsure(located) if isinstance(exc, UnreadableQuery) else located) from None
