"""Tell a SPARQL read query from an update before anything is sent.

The check is lexical: comments, string literals and IRIs are skipped, so an
update keyword hidden inside a string cannot trip it and one outside any string
cannot slip through.

>>> query_form("PREFIX ex: <http://e/> SELECT * WHERE { ?s ?p 'INSERT DATA' }")
'SELECT'
>>> query_form("ASK { ?s ?p ?o }")
'ASK'
>>> query_form("DELETE WHERE { ?s ?p ?o }")
Traceback (most recent call last):
...
sparqlqa.errors.UpdateRefused: refused to send a SPARQL update (DELETE): sparqlqa only runs read queries
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sparqlqa.errors import QueryError, UpdateRefused

READ_FORMS = ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE")
UPDATE_KEYWORDS = frozenset(
    {"INSERT", "DELETE", "LOAD", "CLEAR", "CREATE", "DROP", "COPY", "MOVE", "ADD", "WITH"}
)

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n]*)
  | (?P<string>'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"
               |'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")
  | (?P<iri><[^<>"{}|^`\\\x00-\x20]*>)
  | (?P<var>[?$][A-Za-z0-9_\u00b7-\uffff]+)
  | (?P<word>[A-Za-z_\u00c0-\uffff][A-Za-z0-9_\-.\u00b7-\uffff]*(?::[^\s{}()\[\];,]*)?|:[^\s{}()\[\];,]*)
  | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)


def sparql_tokens(query: str) -> Iterator[re.Match[str]]:
    """Lexical tokens of ``query``; ``match.lastgroup`` is ws, comment, string, iri, var, word or other."""
    return _TOKEN.finditer(query)


_CODEPOINT_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


def decode_escapes(query: str) -> str:
    """``query`` with ``\\uXXXX``/``\\UXXXXXXXX`` decoded, as SPARQL does before parsing.

    >>> decode_escapes(r"\\u0049NSERT DATA {}")
    'INSERT DATA {}'
    """
    def char(match: re.Match[str]) -> str:
        code = int(match.group(1) or match.group(2), 16)
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            raise QueryError(f"invalid code point escape {match.group()!r} in SPARQL query")
        return chr(code)

    return _CODEPOINT_ESCAPE.sub(char, query)


def _bare_words(query: str) -> list[str]:
    """The keywords and names of ``query`` outside comments, strings and IRIs (escapes decoded)."""
    words: list[str] = []
    for match in sparql_tokens(decode_escapes(query)):
        kind = match.lastgroup
        if kind == "word":
            words.append(match.group())
        elif kind == "string" and match.group()[0] not in "'\"":
            raise QueryError("unterminated string literal in SPARQL query")
    return words


def query_form(query: str) -> str:
    """``SELECT``, ``ASK``, ``CONSTRUCT`` or ``DESCRIBE``; :class:`UpdateRefused` for updates."""
    words = _bare_words(query)
    for word in words:
        upper = word.upper()
        if upper in UPDATE_KEYWORDS:
            raise UpdateRefused(upper)
    for word in words:
        upper = word.upper()
        if upper in ("PREFIX", "BASE") or ":" in word:
            continue
        if upper in READ_FORMS:
            return upper
        break
    raise QueryError(
        "not a SPARQL query: expected SELECT, ASK, CONSTRUCT or DESCRIBE",
        hint="check the query text; PREFIX and BASE declarations may come first",
    )


def projected_variables(query: str) -> list[str] | None:
    """The variable names a SELECT projects, in order; ``None`` for ``SELECT *`` or another form.

    >>> projected_variables("PREFIX e: <http://e/> SELECT DISTINCT ?s (COUNT(?o) AS ?n) WHERE { ?s ?p ?o }")
    ['s', 'n']
    >>> projected_variables("SELECT * { ?s ?p ?o }") is None
    True
    """
    tokens = [m for m in sparql_tokens(query) if m.lastgroup not in ("ws", "comment")]
    start = next((i for i, m in enumerate(tokens) if m.lastgroup == "word" and m.group().upper() == "SELECT"), None)
    if start is None:
        return None
    names: list[str] = []
    depth = 0
    previous = ""
    for match in tokens[start + 1:]:
        token, kind = match.group(), match.lastgroup
        if (kind == "other" and token == "{") or (kind == "word" and token.upper() in ("WHERE", "FROM")):
            break
        if kind == "other" and token in "()":
            depth += 1 if token == "(" else -1
        elif kind == "other" and token == "*" and depth == 0:
            return None
        elif kind == "var" and (depth == 0 or previous.upper() == "AS"):
            names.append(token[1:])
        previous = token
    return names


#: a local name safe to write after a prefix (a conservative PN_LOCAL: no dots, escapes or colons)
_SAFE_LOCAL = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def compact_iris(query: str, prefixes: dict[str, str]) -> tuple[str, dict[str, str]]:
    """``query`` with each full IRI ``<ns + local>`` written ``prefix:local`` where ``ns`` is one of
    ``prefixes`` (the longest namespace wins) and ``local`` is a plain name, and the prefixes it used.
    Only IRI tokens change: strings, comments and variables are left exactly as they were, so the
    query means the same once the PREFIX lines are put before it.

    >>> compact_iris('SELECT ?f WHERE { ?f <http://dbpedia.org/ontology/director> "<http://dbpedia.org/ontology/x>" }',
    ...              {"dbo": "http://dbpedia.org/ontology/"})
    ('SELECT ?f WHERE { ?f dbo:director "<http://dbpedia.org/ontology/x>" }', {'dbo': 'http://dbpedia.org/ontology/'})
    """
    by_length = sorted(((iri, name) for name, iri in prefixes.items() if iri), key=lambda pair: -len(pair[0]))
    used: dict[str, str] = {}
    if re.search(r"(?i)\b(?:PREFIX|BASE)\b", query):
        return query, used  # its own declarations could shadow ours: leave it as written
    parts: list[str] = []
    for match in sparql_tokens(query):
        text = match.group()
        if match.lastgroup == "iri":
            for namespace, name in by_length:
                local = text[1:-1][len(namespace):]
                if text[1:-1].startswith(namespace) and _SAFE_LOCAL.fullmatch(local):
                    text, used[name] = f"{name}:{local}", namespace
                    break
        parts.append(text)
    return "".join(parts), used
