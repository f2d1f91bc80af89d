"""Lexical helpers that show or rewrite query text: never used to decide what a query does.

What a query does (form, SERVICE, prefixes) is decided by :mod:`sparqlqa.query.sparql_reading` only.
The token splitters here read text the parser could not read, or that is not sparqlqa's: a syntax
error's hints (:mod:`sparqlqa.query.query_errors`: a text that failed to parse has no reading), and the
constants text2sparql swaps for KB nodes in an LLM's query (:func:`tokens`).  Every text they produce is
read again by the guard before it runs.  Rewrites of a readable query (a LIMIT added, IRIs compacted) are
checked against its reading instead (:mod:`sparqlqa.query.sparql_rewrite`); no lexer reads the queries
sparqlqa writes.
"""

from __future__ import annotations

__all__ = ["Token", "sparql_tokens", "tokens"]

import functools
import re
from collections.abc import Iterator
from typing import NamedTuple

from sparqlqa.errors import QueryError

#: the patterns below are compiled on first use (:func:`_pattern`): a process that never shows or rewrites a
#: query (a cold ``ask``) does not pay the 0.04 s their compilation costs (issue 36)
_DISPLAY_TOKEN = (
    r"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n]*)
  | (?P<string>'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"
               |'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")
  | (?P<iri><[^<>"{}|^`\\\x00-\x20]*>)
  | (?P<var>[?$][A-Za-z0-9_\u00b7-\uffff]+)
  | (?P<word>[A-Za-z_\u00c0-\uffff][A-Za-z0-9_\-.\u00b7-\uffff]*(?::[^\s{}()\[\];,]*)?|:[^\s{}()\[\];,]*)
  | (?P<other>.)
    """
)


@functools.cache
def _pattern(source: str) -> re.Pattern[str]:
    return re.compile(source, re.VERBOSE | re.DOTALL)


def sparql_tokens(query: str) -> Iterator[re.Match[str]]:
    """Lexical tokens of ``query``; ``match.lastgroup`` is ws, comment, string, iri, var, word or other."""
    return _pattern(_DISPLAY_TOKEN).finditer(query)


# -- tokens as Oxigraph splits them (text2sparql rewrites constants with these) ------------------

_BASE = ("A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c-\u200d\u2070-\u218f"
         "\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd\U00010000-\U000effff")
_U = _BASE + "_"
_CHARS = _U + r"\-0-9\u00b7\u0300-\u036f\u203f-\u2040"
_PLX = r"%[0-9A-Fa-f]{2}|\\[_~.\-!$&'()*+,;=/?#@%]"
_HEX = r"u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}"
_ESC = rf"""\\(?:[tbnrf"'\\]|{_HEX})"""
_PREFIX = rf"[{_BASE}](?:[{_CHARS}.]*[{_CHARS}])?"
_LOCAL = rf"(?:[{_U}:0-9]|{_PLX})(?:(?:[{_CHARS}.:]|{_PLX})*(?:[{_CHARS}:]|{_PLX}))?"

_TOKEN = (
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
    """
)
#: tokens after which ``<`` inside parentheses may mean "less than"
_VALUE_KINDS = frozenset({"var", "iri", "pname", "bnode", "string", "lang", "number", "word"})
_OPEN = {"(": ")", "{": "}", "[": "]"}


class Token(NamedTuple):
    kind: str
    text: str
    start: int


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
    for match in _pattern(_TOKEN).finditer(text):
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
            raise QueryError(f"cannot tell whether '<' at line {line}, column {column} starts an IRI or means "
                             "'less than'", hint="put a space after '<' where it means 'less than' (and after "
                             "'<<'), or write that IRI as a prefixed name")
        if value in _OPEN:
            stack.append(value)
        elif stack and value == _OPEN[stack[-1]]:
            stack.pop()
        found.append(token)
    return found
