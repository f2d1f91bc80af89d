r"""Refuse SPARQL ``SERVICE`` calls to hosts nobody allowed (no server-side request forgery).

Oxigraph runs ``SERVICE <http://host/...> { ... }`` by fetching that URL, and pyoxigraph 0.5
has no option to turn federation off (``Store.query`` takes no service handler), so every read
query is checked here before it runs (:meth:`sparqlqa.kb.store.Store.query` calls
:func:`check_service`).  A SERVICE to a host missing from the allowance raises
:class:`~sparqlqa.errors.ServiceRefused`; ``SERVICE ?var`` is always refused (its host is
known only while the query runs).

The check reads the query with the lexical rules Oxigraph uses (SPARQL 1.1 terminals: a
comment ends at CR or LF, strings take only their escapes, a prefixed name ends where its
grammar says), then a small reader finds ``SERVICE SILENT? (IRI | prefixed name | ?var)`` and
resolves the endpoint with the query's PREFIX and BASE declarations.  Where Oxigraph's reading
and this one could differ, the check errs on the side of refusing:

* keywords need no space after them for Oxigraph (``SERVICE:x {``, ``SERVICEex:x {`` run), so a
  word or prefix holding ``service`` right before ``{`` counts as a SERVICE;
* ``<`` inside parentheses after a value may be "less than" rather than an IRI; when the IRI
  reading would hide a quote or ``#`` (which the other reading turns into a string or a
  comment), the query is refused as unreadable;
* the query is read twice, as written and with ``\uXXXX`` escapes decoded (SPARQL says to
  decode them first; Oxigraph 0.5 does not), and a SERVICE found by either reading counts.

Queries without the letters ``service`` (in any case) are not read at all.

>>> [call.iri for call in service_calls("PREFIX e: <http://ex.org/> SELECT * { SERVICE e:sparql { ?s ?p ?o } }")]
['http://ex.org/sparql']
>>> service_calls("SELECT ?service { ?service <http://e/service> '# SERVICE <http://x/>' }  # SERVICE")
[]
>>> check_service("SELECT * { SERVICE <http://ex.org:8890/sparql> { ?s ?p ?o } }", {"ex.org"})
>>> check_service("ASK { SERVICE <http://169.254.169.254/x> { ?s ?p ?o } }", set())
Traceback (most recent call last):
...
sparqlqa.errors.ServiceRefused: refused to run SERVICE <http://169.254.169.254/x>: host 169.254.169.254 is not allowed
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import NamedTuple
from urllib.parse import urljoin, urlsplit

from sparqlqa.errors import ConfigError, QueryError, ServiceRefused

_BASE = ("A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c-\u200d\u2070-\u218f"
         "\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd\U00010000-\U000effff")
_U = _BASE + "_"
_CHARS = _U + r"\-0-9\u00b7\u0300-\u036f\u203f-\u2040"
_PLX = r"%[0-9A-Fa-f]{2}|\\[_~.\-!$&'()*+,;=/?#@%]"
_HEX = r"u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}"
_ESC = rf"""\\(?:[tbnrf"'\\]|{_HEX})"""
_PREFIX = rf"[{_BASE}](?:[{_CHARS}.]*[{_CHARS}])?"
_LOCAL = rf"(?:[{_U}:0-9]|{_PLX})(?:(?:[{_CHARS}.:]|{_PLX})*(?:[{_CHARS}:]|{_PLX}))?"

_TOKEN = re.compile(
    rf"""
    (?P<ws>[\x20\t\r\n]+)
  | (?P<comment>\#[^\r\n]*)
  | (?P<string>'''(?:(?:''|')?(?:[^'\\]|{_ESC}))*'''|\"\"\"(?:(?:\"\"|\")?(?:[^"\\]|{_ESC}))*\"\"\"
              |'(?:[^'\\\n\r]|{_ESC})*'|"(?:[^"\\\n\r]|{_ESC})*")
  | (?P<iri><(?:[^<>"{{}}|^`\\\x00-\x20]|\\(?:{_HEX}))*>)
  | (?P<bnode>_:[{_U}0-9](?:[{_CHARS}.]*[{_CHARS}])?)
  | (?P<pname>(?:{_PREFIX})?:(?:{_LOCAL})?)
  | (?P<var>[?$][{_U}0-9][{_U}0-9\u00b7\u0300-\u036f\u203f-\u2040]*)
  | (?P<lang>@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*(?:--[a-zA-Z]+)?)
  | (?P<number>[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<quote>['"])
  | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_SERVICE = re.compile("service", re.IGNORECASE | re.ASCII)
_SILENT = re.compile("silent", re.IGNORECASE | re.ASCII)
#: tokens after which ``<`` inside parentheses may mean "less than"
_VALUE_KINDS = frozenset({"var", "iri", "pname", "bnode", "string", "lang", "number", "word"})
_OPEN = {"(": ")", "{": "}", "[": "]"}


class Token(NamedTuple):
    kind: str
    text: str
    start: int


@dataclass(frozen=True)
class ServiceCall:
    """One ``SERVICE`` of a query: its endpoint as written, the IRI it resolves to (``None`` for a
    variable or a name that does not resolve) and where it is (1-based line and column)."""

    written: str
    iri: str | None
    line: int
    column: int


def _where(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _ambiguous_lt(text: str, token: Token, stack: list[str], previous: Token | None) -> bool:
    """Whether the IRI-looking ``token`` could be ``<`` (less than) hiding a quote or ``#`` from us."""
    if not any(c in token.text for c in "'#"):
        return False
    if token.start and text[token.start - 1] == "<":  # ``<<``: a quoted triple or ``< <iri>``
        return True
    after_value = previous is not None and (previous.kind in _VALUE_KINDS or previous.text in ")]>")
    return bool(stack) and stack[-1] == "(" and after_value


def tokens(text: str) -> list[Token]:
    """The significant tokens of ``text`` (no spaces, no comments), as Oxigraph splits them.

    :class:`QueryError` for a quote that starts no valid string, or an IRI that may be "less than".
    """
    found: list[Token] = []
    stack: list[str] = []
    for match in _TOKEN.finditer(text):
        kind, value = match.lastgroup or "other", match.group()
        token = Token(kind, value, match.start())
        if kind in ("ws", "comment"):
            continue
        if kind == "quote":
            line, column = _where(text, token.start)
            raise QueryError(f"unterminated string literal at line {line}, column {column} of the SPARQL query",
                             hint="close the string; inside it, escape quotes and backslashes with a backslash")
        if kind == "iri" and _ambiguous_lt(text, token, stack, found[-1] if found else None):
            line, column = _where(text, token.start)
            raise ServiceRefused(None, None, f"cannot tell whether '<' at line {line}, column {column} starts an "
                                 "IRI or means 'less than', so whether the query calls a SERVICE",
                                 hint="put a space after '<' where it means 'less than' (and after '<<'), or "
                                 "write that IRI as a prefixed name")
        if value in _OPEN:
            stack.append(value)
        elif stack and value == _OPEN[stack[-1]]:
            stack.pop()
        found.append(token)
    return found


def _declarations(toks: list[Token]) -> tuple[dict[str, str], str | None]:
    """The query's PREFIX map and its (last) BASE."""
    prefixes: dict[str, str] = {}
    base: str | None = None
    for i, token in enumerate(toks):
        word = token.text.upper() if token.kind == "word" else ""
        if word == "BASE" and i + 1 < len(toks) and toks[i + 1].kind == "iri":
            base = _iri(toks[i + 1].text, base)
        elif (word == "PREFIX" and i + 2 < len(toks) and toks[i + 1].kind == "pname"
              and toks[i + 1].text.endswith(":") and toks[i + 2].kind == "iri"):
            prefixes[toks[i + 1].text[:-1]] = _iri(toks[i + 2].text, base) or ""
    return prefixes, base


def _iri(written: str, base: str | None) -> str | None:
    """``<...>`` → the absolute IRI (escapes decoded, resolved against ``base``), ``None`` when relative."""
    from sparqlqa.kb.sparql_guard import decode_escapes

    try:
        iri = decode_escapes(written[1:-1])
    except QueryError:
        return None
    if base:
        iri = urljoin(base, iri)
    return iri if urlsplit(iri).scheme else None


def _resolve(written: str, prefixes: dict[str, str], base: str | None) -> str | None:
    if written.startswith(("?", "$")) or not written:
        return None
    if written.startswith("<"):
        return _iri(written, base)
    prefix, colon, local = written.partition(":")
    if not colon or prefix not in prefixes:
        return None
    return prefixes[prefix] + re.sub(r"\\(.)", r"\1", local)


def _endpoints(toks: list[Token], i: int) -> list[str]:
    """What the SERVICE keyword (or glued SERVICE…) at token ``i`` calls, as written (two readings when
    ``SILENT`` may be glued to it); ``""`` when no endpoint follows."""
    token = toks[i]
    rest = token.text[list(_SERVICE.finditer(token.text))[-1].end():]
    if token.kind == "pname":  # glued: SERVICE:x, SERVICEex:x, SERVICESILENT:x
        unsilenced = rest[6:] if _SILENT.match(rest) else rest
        return [rest, unsilenced]
    nxt = toks[i + 1] if i + 1 < len(toks) else None
    if not rest and nxt is not None and nxt.kind == "word" and nxt.text.upper() == "SILENT":
        nxt = toks[i + 2] if i + 2 < len(toks) else None
    elif not rest and nxt is not None and nxt.kind == "pname" and _SILENT.match(nxt.text):
        return [nxt.text, nxt.text[6:]]
    if nxt is None or nxt.kind not in ("iri", "pname", "var"):
        return [""]
    return [nxt.text]


def _is_service(toks: list[Token], i: int) -> bool:
    token = toks[i]
    if token.kind == "word":
        return bool(_SERVICE.search(token.text))
    if token.kind != "pname" or not _SERVICE.search(token.text.partition(":")[0]):
        return False
    before = toks[i - 1].text.upper() if i and toks[i - 1].kind == "word" else ""
    after = toks[i + 1].text if i + 1 < len(toks) else ""
    return after == "{" and before not in ("GRAPH", "SILENT") and not _SERVICE.search(before)


def _calls_in(text: str) -> list[ServiceCall]:
    toks = tokens(text)
    prefixes, base = _declarations(toks)
    calls = []
    for i, token in enumerate(toks):
        if _is_service(toks, i):
            line, column = _where(text, token.start)
            readings = [ServiceCall(written, _resolve(written, prefixes, base), line, column)
                        for written in dict.fromkeys(_endpoints(toks, i))]
            # of two readings, one whose prefix is not declared is one Oxigraph cannot parse
            calls.extend([call for call in readings if call.iri] or readings)
    return calls


def service_calls(query: str) -> list[ServiceCall]:
    """Every SERVICE of ``query`` (nested ones too), read as written and with ``\\u`` escapes decoded."""
    from sparqlqa.kb.sparql_guard import decode_escapes

    readings = [query]
    try:
        decoded = decode_escapes(query) if "\\" in query else query
    except QueryError:
        decoded = query
    if decoded != query:
        readings.append(decoded)
    calls: dict[ServiceCall, None] = {}
    for text in readings:
        if not _SERVICE.search(text):
            continue
        try:
            calls.update(dict.fromkeys(_calls_in(text)))
        except ServiceRefused:
            raise
        except QueryError:
            if text is query:  # the decoded reading is a precaution: Oxigraph 0.5 reads the text as written
                raise
    return list(calls)


# -- which hosts may be called ------------------------------------------------------------------

_HOST = re.compile(r"(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.\-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::(?P<port>[0-9]{1,5}))?")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def allowed_host(entry: str, *, source: str = "--allow-service") -> str:
    """``entry`` (``HOST`` or ``HOST:PORT``) as stored in an allowance: lower case, checked.

    >>> allowed_host("Query.Wikidata.org"), allowed_host("127.0.0.1:8890"), allowed_host("[::1]:3030")
    ('query.wikidata.org', '127.0.0.1:8890', '[::1]:3030')
    """
    text = entry.strip()
    if not _HOST.fullmatch(text):
        shown = urlsplit(text).netloc if "://" in text else ""
        raise ConfigError(f"{source}: {entry!r} is not a host name (HOST or HOST:PORT)",
                          hint=f"give the endpoint's host, e.g. {shown or 'query.wikidata.org'}, not a URL")
    return text.lower()


def allowance(entries: Iterable[str], *, source: str = "--allow-service") -> frozenset[str]:
    """The checked hosts of ``entries`` (see :func:`allowed_host`)."""
    return frozenset(allowed_host(entry, source=source) for entry in entries)


def endpoint_host(iri: str) -> tuple[str, int] | None:
    """``(host, port)`` of an http(s) endpoint IRI; ``None`` for another scheme, user info or an odd host.

    >>> endpoint_host("https://Query.Wikidata.org/sparql"), endpoint_host("http://u@evil.org/")
    (('query.wikidata.org', 443), None)
    """
    parts = urlsplit(iri)
    scheme = parts.scheme.lower()
    match = _HOST.fullmatch(parts.netloc)
    if scheme not in _DEFAULT_PORTS or match is None:
        return None
    port = int(match["port"]) if match["port"] else _DEFAULT_PORTS[scheme]
    return match["host"].lower(), port


def is_allowed(iri: str | None, allowed: Collection[str]) -> bool:
    """Whether SERVICE may call ``iri``: its host is in ``allowed`` (with its port, when that entry has one)."""
    where = endpoint_host(iri) if iri else None
    if where is None:
        return False
    host, port = where
    return host in allowed or f"{host}:{port}" in allowed


def check_service(query: str, allowed: Collection[str] = (), *, engine_services: Collection[str] = ()) -> None:
    """:class:`ServiceRefused` when ``query`` calls a SERVICE whose host is not in ``allowed``.

    ``engine_services``: IRIs of services the remote engine runs itself (Wikidata's
    ``wikibase:mwapi``), exempt by their exact IRI; only for queries sparqlqa builds (see
    :meth:`sparqlqa.kb.store.Store.query`), never for a user's query.
    """
    for call in service_calls(query):
        if is_allowed(call.iri, allowed) or (call.iri is not None and call.iri in engine_services):
            continue
        where = f"line {call.line}, column {call.column}"
        if call.written.startswith(("?", "$")):
            raise ServiceRefused(call.written, None, f"its endpoint is the variable {call.written} ({where}), "
                                 "whose host cannot be checked before the query runs",
                                 hint="write the endpoint's IRI in the query (SERVICE <http://host/sparql>) "
                                 "and allow its host (--allow-service HOST)")
        if not call.written:
            raise ServiceRefused(None, None, f"cannot read the endpoint of the SERVICE at {where}",
                                 hint="write SERVICE <http://host/path> { ... } with the endpoint's IRI")
        host = endpoint_host(call.iri) if call.iri else None
        if host is None:
            raise ServiceRefused(call.written, None, f"cannot check its host ({where}): only http(s) endpoints "
                                 "with a plain host name, written in full or with a declared prefix, may be "
                                 "allowed")
        name, port = host
        shown = name if port == _DEFAULT_PORTS[urlsplit(call.iri or "").scheme.lower()] else f"{name}:{port}"
        raise ServiceRefused(f"<{call.iri}>", shown, f"host {shown} is not allowed")
