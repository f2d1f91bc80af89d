"""The LLM's SPARQL, read by real parsers before anything runs, and its constants swapped for KB nodes.

:func:`read_query` declares the KB's prefixes the query uses but leaves undeclared, refuses updates and
SERVICE calls (:mod:`sparqlqa.query.sparql_reading`, :mod:`sparqlqa.query.service_guard`), lets Oxigraph's parser
check the syntax (its error made readable by :mod:`sparqlqa.query.query_errors`) in a query worker, never in
this process (:func:`sparqlqa.query.query_pool.check_query`: no network, the request's deadline and memory
limit, an empty store), and rdflib's algebra give the
query's triple patterns.  :func:`substitute` rewrites constants token by token: each replacement is the
N-Triples form of a pyoxigraph term, never text the LLM wrote; everything else stays as written, so the
saved ``.rq`` reads like the LLM's query.

>>> q = read_query('SELECT ?f WHERE { ?f dbo:director "Nolan" }', {"dbo": "http://dbpedia.org/ontology/"})
>>> q.form, q.text.splitlines()[0], [str(t[2]) for t in q.patterns]
('SELECT', 'PREFIX dbo: <http://dbpedia.org/ontology/>', ['Nolan'])
>>> from pyoxigraph import NamedNode
>>> print(substitute(q.text, {literal_key(q.patterns[0][2]): NamedNode("http://dbpedia.org/resource/N")}))
PREFIX dbo: <http://dbpedia.org/ontology/>
SELECT ?f WHERE { ?f dbo:director <http://dbpedia.org/resource/N> }
"""

from __future__ import annotations

__all__ = ["ReadQuery", "TermKey", "add_filter", "constant_keys", "counted_items", "iri_key", "literal_key",
           "out_and_back", "read_query", "readable", "substitute"]

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pyoxigraph import Literal, NamedNode

from sparqlqa.errors import QueryError, SparqlSyntaxError
from sparqlqa.kb.vocab import TEXT_DATATYPES
from sparqlqa.query.query_errors import syntax_error
from sparqlqa.query.service_guard import check_service
from sparqlqa.query.sparql_reading import declare_prefixes, missing_prefixes, query_with_prefixes
from sparqlqa.query.sparql_reading import read_query as read_sparql
from sparqlqa.query.sparql_text import Token, tokens

#: what a constant is known by while rewriting: ("iri", value) or ("literal", lexical, language, datatype)
TermKey = tuple[str, ...]
_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_PN_ESCAPE = re.compile(r"\\(.)")
_ECHAR = re.compile(r"\\(.)", re.DOTALL)


@dataclass
class ReadQuery:
    """A read query that parsed: its text (prefixes declared), form, triple patterns (rdflib terms, in
    the order the algebra lists them), projected variables (without ``?``) and shape."""

    text: str
    form: str
    patterns: list[tuple[Any, Any, Any]] = field(default_factory=list)
    variables: list[str] = field(default_factory=list)
    ordered: bool = False
    aggregate: bool = False
    #: the query parsed for the store but not for rdflib's algebra: its patterns are unknown
    opaque: bool = False
    #: one basic graph pattern, no OPTIONAL, UNION, MINUS or subquery: a FILTER at its end sees every pattern
    simple: bool = False
    #: the variable a plain ``COUNT(?x)`` counts (one aggregate, no GROUP BY), without ``?``
    counted: str | None = None
    #: string literals a FILTER compares with a variable (``?v = "x"``, ``?v IN ("x", "y")``, ``STR(?v) = "x"``):
    #: (variable, literal, whether the variable's lexical form is compared, through ``STR``)
    compared: list[tuple[Any, Any, bool]] = field(default_factory=list)
    #: each projected variable an aggregate binds (``(AVG(?a) AS ?avg)``), with the aggregate (``avg``)
    aggregates: dict[str, str] = field(default_factory=dict)
    #: the query has GROUP BY / a negation (``NOT EXISTS``, ``MINUS``, ``!``, ``!=``, ``NOT IN``)
    grouped: bool = False
    negated: bool = False


def read_query(raw: str, prefixes: Mapping[str, str]) -> ReadQuery:
    """Check and read the LLM's query.  :class:`~sparqlqa.errors.UpdateRefused`,
    :class:`~sparqlqa.errors.ServiceRefused`, :class:`~sparqlqa.errors.SparqlSyntaxError` or
    :class:`~sparqlqa.errors.QueryError` (not a SELECT or ASK) when it cannot run."""
    added = missing_prefixes(raw.strip(), prefixes)
    text = declare_prefixes(raw.strip(), added)
    # refuses updates, and what the guard cannot read, before Oxigraph sees the text; errors located as written
    reading = query_with_prefixes(read_sparql, raw.strip(), prefixes)
    form = reading.form
    if form not in ("SELECT", "ASK"):
        raise QueryError(f"a {form} query returns no answers: expected SELECT or ASK",
                         hint="write a SELECT (or an ASK for a yes/no question)")
    check_service(reading, frozenset())  # no SERVICE ever: the query reads this KB only
    _check_syntax(text, added=tuple(added))
    return _algebra(text, form)


def _check_syntax(text: str, *, added: tuple[str, ...]) -> None:
    """Oxigraph's parser on the query, in a worker (an empty store without network, the current scope's
    deadline and memory): a crash, a runaway or a SERVICE there is a :class:`QueryError` here."""
    from sparqlqa.query.query_pool import check_query

    try:
        check_query(text)
    except SparqlSyntaxError as exc:
        if not added or exc.line == 0:
            raise
        raise syntax_error(text, exc.parser_message, added=added) from None


def _algebra(text: str, form: str) -> ReadQuery:
    """The query's triple patterns and shape from rdflib's SPARQL algebra (``opaque`` when rdflib cannot)."""
    from rdflib.plugins.sparql.algebra import translateQuery
    from rdflib.plugins.sparql.parser import parseQuery

    try:
        algebra = translateQuery(parseQuery(text)).algebra
    except Exception:  # rdflib's parsers raise many kinds; the store's parser accepted the query
        return ReadQuery(text=text, form=form, opaque=True)
    patterns: list[tuple[Any, Any, Any]] = []
    names: list[str] = []
    compared: list[tuple[Any, Any, bool]] = []
    _walk(algebra, patterns, names, compared)
    variables = [str(v) for v in algebra.get("PV") or []]
    simple = names.count("BGP") == 1 and not set(names) & {"LeftJoin", "Union", "Minus", "ToMultiSet", "Graph"}
    return ReadQuery(text=text, form=form, patterns=patterns, variables=variables, ordered="OrderBy" in names,
                     aggregate="AggregateJoin" in names, simple=simple, counted=_counted(algebra),
                     compared=list(dict.fromkeys(compared)), aggregates=_aggregates(algebra, variables),
                     grouped=_grouped(algebra), negated=bool(_NEGATIONS & set(names)))


#: algebra nodes that negate (a ``!=`` or ``NOT IN`` is named by :func:`_walk`)
_NEGATIONS = frozenset({"Minus", "Builtin_NOTEXISTS", "UnaryNot", "NotEquals"})


def _nodes(node: Any) -> Iterator[Any]:
    """Every algebra node under ``node`` (itself included), depth first."""
    if hasattr(node, "name") and hasattr(node, "values"):
        yield node
        for value in node.values():
            yield from _nodes(value)
    elif isinstance(node, (list, tuple)):
        for value in node:
            yield from _nodes(value)


def _aggregates(algebra: Any, projected: list[str]) -> dict[str, str]:
    """The projected variables an aggregate binds, each with the aggregate's name (``count``, ``avg``, …;
    the ``SAMPLE`` rdflib adds for a GROUP BY variable left out)."""
    kinds = {str(node.get("res")): node.name.removeprefix("Aggregate_").lower()
             for node in _nodes(algebra) if node.name.startswith("Aggregate_")}
    bound = {str(node.get("var")): kinds.get(str(node.get("expr")), "")
             for node in _nodes(algebra) if node.name == "Extend"}
    return {name: bound[name] for name in projected if bound.get(name) not in (None, "", "sample")}


def _grouped(algebra: Any) -> bool:
    return any(node.name == "Group" and node.get("expr") for node in _nodes(algebra))


def _counted(algebra: Any) -> str | None:
    """The variable of the query's one ``COUNT`` when it has no GROUP BY."""
    from rdflib import Variable

    found: list[Any] = []
    grouped: list[Any] = []

    def visit(node: Any) -> None:
        if hasattr(node, "name") and hasattr(node, "values"):
            if node.name.startswith("Aggregate_"):
                found.append(node)
            if node.name == "Group" and node.get("expr"):
                grouped.append(node)
            for value in node.values():
                visit(value)
        elif isinstance(node, (list, tuple)):
            for value in node:
                visit(value)

    visit(algebra)
    if len(found) != 1 or grouped or found[0].name != "Aggregate_Count":
        return None
    counted = found[0].get("vars")
    return str(counted) if isinstance(counted, Variable) and re.fullmatch(r"\w+", str(counted)) else None


def counted_items(text: str, variable: str) -> str | None:
    """The query that lists what a plain COUNT query counts: ``SELECT DISTINCT ?variable`` over its WHERE
    group (what follows the group, ORDER BY or LIMIT on the count, is left out)."""
    toks = tokens(text)
    select = next((t for t in toks if t.kind == "word" and t.text.upper() == "SELECT"), None)
    start = next((n for n, t in enumerate(toks) if t.kind == "other" and t.text == "{"), None)
    close = _closing_brace(toks, start) if start is not None else None
    if select is None or start is None or close is None:
        return None
    group = text[toks[start].start: close.start + 1]
    return f"{text[:select.start]}SELECT DISTINCT ?{variable} WHERE {group}"


def _closing_brace(toks: list[Token], start: int) -> Token | None:
    """The ``}`` that closes the ``{`` at ``toks[start]`` (``None`` when the braces do not balance)."""
    depth = 0
    for token in toks[start:]:
        if token.kind == "other" and token.text in "{}":
            depth += 1 if token.text == "{" else -1
            if depth == 0:
                return token
    return None


def _walk(node: Any, patterns: list[tuple[Any, Any, Any]], names: list[str],
          compared: list[tuple[Any, Any, bool]]) -> None:
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(node, CompValue):
        names.append(node.name)
        if node.name == "BGP":
            patterns.extend(tuple(_unescaped(term) for term in t) for t in node.triples)
        if node.name == "RelationalExpression":
            compared.extend(_comparison(node))
            if node.get("op") in ("!=", "NOT IN"):
                names.append("NotEquals")
        if node.name == "values":  # VALUES ?name { "Avatar" "Titanic" }: each string is the variable's value
            compared.extend(_values_strings(node))
        for value in node.values():
            _walk(value, patterns, names, compared)
    elif isinstance(node, (list, tuple)):
        for value in node:
            _walk(value, patterns, names, compared)


def _unescaped(term: Any) -> Any:
    """rdflib keeps a prefixed name's escapes in its IRI (``:singer\\#name`` → ``…singer\\#name``); an IRI
    has no backslash, so each escape is the character it escapes."""
    from rdflib import URIRef

    return URIRef(_PN_ESCAPE.sub(r"\1", str(term))) if isinstance(term, URIRef) and "\\" in term else term


def _values_strings(node: Any) -> list[tuple[Any, Any, bool]]:
    """The plain string literals a ``VALUES`` block gives a variable, as (variable, literal, False)."""
    from rdflib import Literal as RLiteral

    return [(var, term, False) for row in node.get("res") or [] for var, term in row.items()
            if isinstance(term, RLiteral) and literal_key(term)[3] == ""]


def _comparison(node: Any) -> list[tuple[Any, Any, bool]]:
    """The string literals an ``=``, ``!=``, ``IN`` or ``NOT IN`` compares with a variable (or ``STR`` of one),
    either side; a comparison through any other function (``LCASE``) is left out."""
    from rdflib import Literal as RLiteral
    from rdflib import Variable

    def variable(side: Any) -> tuple[Any, bool] | None:
        if isinstance(side, Variable):
            return side, False
        if getattr(side, "name", None) == "Builtin_STR" and isinstance(side.get("arg"), Variable):
            return side.get("arg"), True
        return None

    def strings(side: Any) -> list[Any]:
        found = side if isinstance(side, list) else [side]
        return [t for t in found if isinstance(t, RLiteral) and literal_key(t)[3] == ""]

    op, left, right = node.get("op"), node.get("expr"), node.get("other")
    if op not in ("=", "!=", "IN", "NOT IN"):
        return []
    pairs = [(left, right)] if op in ("IN", "NOT IN") else [(left, right), (right, left)]
    for side, other in pairs:
        found = variable(side)
        if found is not None:
            return [(found[0], literal, found[1]) for literal in strings(other)]
    return []


def out_and_back(query: ReadQuery) -> list[tuple[Any, Any]]:
    """Pairs of terms a path out and back along one relation must keep apart (``?src r ?d . ?m r ?d``:
    the films of the director of X are other films than X), as the offline strategy keeps them; only in a
    :attr:`~ReadQuery.simple` query, where one FILTER at the end applies to every pattern.

    >>> from rdflib import URIRef, Variable as V
    >>> r = URIRef("http://x/directed_by")
    >>> out_and_back(ReadQuery("", "SELECT", [(V("src"), r, V("d")), (V("m"), r, V("d"))], simple=True))
    [(rdflib.term.Variable('m'), rdflib.term.Variable('src'))]
    """
    from rdflib import URIRef, Variable

    if not query.simple:
        return []
    pairs: list[tuple[Any, Any]] = []
    patterns = [t for t in query.patterns if isinstance(t[1], URIRef)]
    for i, (s1, p1, o1) in enumerate(patterns):
        for s2, p2, o2 in patterns[i + 1:]:
            if p1 != p2:
                continue
            for shared, (a, b) in ((o1 == o2, (s2, s1)), (s1 == s2, (o2, o1))):
                if shared and a != b and (isinstance(a, Variable) or isinstance(b, Variable)) \
                        and (a, b) not in pairs and (b, a) not in pairs:
                    pairs.append((a, b))
    return pairs


def add_filter(text: str, conditions: list[str]) -> str:
    """``text`` with ``FILTER(condition)`` lines at the end of its outermost group (the WHERE clause)."""
    toks = tokens(text)
    start = next((n for n, t in enumerate(toks) if t.kind == "other" and t.text == "{"), None)
    close = _closing_brace(toks, start) if start is not None else None
    if close is None or not conditions:
        return text
    added = "".join(f" FILTER({condition})" for condition in conditions)
    return f"{text[:close.start].rstrip()}{added} {text[close.start:]}"


# --- keys of constants ----------------------------------------------------------------------------


def iri_key(value: str) -> TermKey:
    return ("iri", value)


def literal_key(term: Any) -> TermKey:
    """The key of an rdflib (or pyoxigraph) literal: lexical form, language (lower case), datatype."""
    language = getattr(term, "language", None)
    datatype = getattr(term, "datatype", None)
    datatype_iri = str(getattr(datatype, "value", datatype)) if datatype is not None else ""
    if language or datatype_iri in TEXT_DATATYPES:
        datatype_iri = ""
    return ("literal", str(getattr(term, "value", term)), (language or "").lower(), datatype_iri)


# --- rewriting ------------------------------------------------------------------------------------


def substitute(text: str, replacements: Mapping[TermKey, NamedNode | Literal],
               predicates: Mapping[TermKey, NamedNode] | None = None) -> str:
    """``text`` with every constant whose key is in ``replacements`` written as that term; a literal in
    ``predicates`` also gets that predicate when the token before it is a predicate (``?f rdfs:label "x"``)."""
    toks = tokens(text)
    prefixes = _declared(toks)
    edits: list[tuple[int, int, str]] = []
    for index, key, start, end in _constants(text, toks, prefixes):
        if key not in replacements:
            continue
        edits.append((start, end, str(replacements[key])))
        predicate = (predicates or {}).get(key)
        before = toks[index - 1] if index else None
        if predicate is not None and before is not None and before.kind in ("iri", "pname"):
            edits.append((before.start, before.start + len(before.text), str(predicate)))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def constant_keys(text: str) -> list[TermKey]:
    """The keys of the constants written in ``text`` (PREFIX declarations left out), in order."""
    toks = tokens(text)
    return [key for _, key, _, _ in _constants(text, toks, _declared(toks))]


def _declared(toks: list[Token]) -> dict[str, str]:
    found: dict[str, str] = {}
    for first, second, third in zip(toks, toks[1:], toks[2:]):
        if first.text.upper() == "PREFIX" and second.kind == "pname" and third.kind == "iri":
            found[second.text[:-1]] = third.text[1:-1]
    return found


def _constants(text: str, toks: list[Token], prefixes: Mapping[str, str],
               ) -> Iterator[tuple[int, TermKey, int, int]]:
    """(token index, key, start, end) of each IRI, prefixed name and string literal outside declarations."""
    for index, token in enumerate(toks):
        if index and toks[index - 1].text.upper() in ("PREFIX", "BASE"):
            continue
        if index > 1 and toks[index - 2].text.upper() == "PREFIX":
            continue
        end = token.start + len(token.text)
        if token.kind == "iri":
            yield index, iri_key(token.text[1:-1]), token.start, end
        elif token.kind == "pname":
            name, _, local = token.text.partition(":")
            if name in prefixes:
                yield index, iri_key(prefixes[name] + _PN_ESCAPE.sub(r"\1", local)), token.start, end
        elif token.kind == "string":
            key, end = _literal_at(toks, index, prefixes)
            yield index, key, token.start, end


def _literal_at(toks: list[Token], index: int, prefixes: Mapping[str, str]) -> tuple[TermKey, int]:
    """The key of the string literal at ``index`` with its ``@lang`` or ``^^datatype``, and where it ends."""
    token = toks[index]
    quote = 3 if token.text[:3] in ('"""', "'''") else 1
    lexical = _ECHAR.sub(lambda m: _ESCAPES.get(m.group(1), m.group(0)), token.text[quote:-quote])
    end = token.start + len(token.text)
    after = toks[index + 1: index + 4]
    if after and after[0].kind == "lang":
        return ("literal", lexical, after[0].text[1:].lower(), ""), after[0].start + len(after[0].text)
    if len(after) == 3 and after[0].text == after[1].text == "^" and after[2].kind in ("iri", "pname"):
        datatype = after[2].text[1:-1] if after[2].kind == "iri" else _expand(after[2].text, prefixes)
        key = literal_key(Literal(lexical, datatype=NamedNode(datatype))) if datatype else None
        if key is not None:
            return key, after[2].start + len(after[2].text)
    return ("literal", lexical, "", ""), end


def _expand(pname: str, prefixes: Mapping[str, str]) -> str:
    name, _, local = pname.partition(":")
    return prefixes[name] + _PN_ESCAPE.sub(r"\1", local) if name in prefixes else ""


def readable(exc: QueryError) -> str:
    """An error as the repair prompt states it: the message (with its caret) and the hint."""
    return f"{exc.message}\nhint: {exc.hint}" if exc.hint else exc.message
