"""Readable SPARQL syntax errors: line, column, the line with a caret under the spot, and a hint.

Oxigraph says ``error at 2:14: expected one of Prefix not found, ['%'], ...``: where its parser
gave up (often just after the real mistake) and a list of character classes.  :func:`syntax_error`
turns that into a :class:`~sparqlqa.errors.SparqlSyntaxError` whose message shows the spot and
whose hint names the common mistakes, found in the query text itself: an undeclared prefix (named,
with its IRI when it is a well-known one), unbalanced braces or parentheses, a missing ``.``
between two triple patterns.

>>> error = syntax_error("SELECT * WHERE {\\n  ?s dbo:director ?d }",
...                      SyntaxError("error at 2:17: expected one of Prefix not found, ['%']"))
>>> print(error.message)
invalid SPARQL at line 2, column 6: unknown prefix 'dbo:'
  2 |   ?s dbo:director ?d }
    |      ^
>>> error.hint
'declare it before the query: PREFIX dbo: <http://dbpedia.org/ontology/>'
"""

from __future__ import annotations

__all__ = ["Diagnosis", "Token", "parser_position", "snippet", "syntax_error", "tokens", "unbalanced"]

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from sparqlqa.errors import SparqlSyntaxError
from sparqlqa.query.prefixes import WELL_KNOWN_PREFIXES
from sparqlqa.query.sparql_text import sparql_tokens

_POSITION = re.compile(r"error at (\d+):(\d+):\s*(.*)", re.DOTALL)
#: quoted tokens and keywords of Oxigraph's "expected one of ..." list (character classes are dropped)
_EXPECTED_ITEM = re.compile(r""""[^"]+"|'[^']+'|\b[A-Z][A-Za-z]+\b""")
_CHAR_CLASS = re.compile(r"""\[(?:[^\]'"]|'[^']*'|"[^"]*")*\]""")
#: tokens that end a term (so a term starting the next line wants a '.' between them)
_TERM_KINDS = frozenset({"var", "iri", "string"})
_KEYWORDS = frozenset({"WHERE", "SELECT", "ASK", "CONSTRUCT", "DESCRIBE", "PREFIX", "BASE", "FILTER", "OPTIONAL",
                       "UNION", "MINUS", "GRAPH", "SERVICE", "BIND", "VALUES", "DISTINCT", "REDUCED", "FROM",
                       "NAMED", "ORDER", "GROUP", "BY", "LIMIT", "OFFSET", "HAVING", "AS", "NOT", "EXISTS"})
_PAIRS = {"{": "}", "(": ")"}


@dataclass
class Token:
    kind: str
    text: str
    line: int  # 1-based
    column: int  # 1-based, in characters


def tokens(query: str) -> list[Token]:
    """The query's tokens with their lines and columns (white space and comments left out)."""
    found: list[Token] = []
    line, line_start = 1, 0
    for match in sparql_tokens(query):
        kind = match.lastgroup or "other"
        if kind not in ("ws", "comment"):
            found.append(Token(kind, match.group(), line, match.start() - line_start + 1))
        newlines = match.group().count("\n")
        if newlines:
            line += newlines
            line_start = match.start() + match.group().rindex("\n") + 1
    return found


@dataclass
class Diagnosis:
    """Where the mistake probably is and what to say about it."""

    line: int
    column: int
    problem: str
    hint: str | None


def _unknown_prefix(toks: list[Token], declared_before: frozenset[str] = frozenset()) -> Diagnosis | None:
    """The first prefixed name whose prefix no ``PREFIX`` declares (``declared_before``: declared elsewhere)."""
    declared: set[str] = set(declared_before)
    for before, token in zip([None, *toks], toks):
        if token.kind != "word" or ":" not in token.text:
            continue
        prefix = token.text.split(":", 1)[0]
        if before is not None and before.text.upper() == "PREFIX":
            declared.add(prefix)
        elif prefix not in declared and prefix != "_":
            return Diagnosis(token.line, token.column, f"unknown prefix '{prefix}:'", _prefix_hint(prefix))
    return None


def _prefix_hint(prefix: str) -> str:
    """How to fix an undeclared ``prefix``: its well-known IRI, else the well-known prefix it looks like a
    misspelling of (``fof`` → ``foaf``), else the general advice.

    >>> print(_prefix_hint("fof"))
    did you mean foaf: (<http://xmlns.com/foaf/0.1/>)? Otherwise declare it: PREFIX fof: <namespace IRI>
    """
    iri = WELL_KNOWN_PREFIXES.get(prefix)
    if iri:
        return f"declare it before the query: PREFIX {prefix}: <{iri}>"
    import difflib  # only for a query that failed

    close = difflib.get_close_matches(prefix, list(WELL_KNOWN_PREFIXES), n=1, cutoff=0.6)
    if close:
        return (f"did you mean {close[0]}: (<{WELL_KNOWN_PREFIXES[close[0]]}>)? "
                f"Otherwise declare it: PREFIX {prefix}: <namespace IRI>")
    return f"declare it before the query (PREFIX {prefix}: <namespace IRI>), or write the whole IRI in <...>"


def unbalanced(toks: list[Token]) -> Diagnosis | None:
    """The first ``}``/``)`` closing nothing, else the first ``{``/``(`` never closed."""
    stack: list[Token] = []
    for token in toks:
        if token.kind != "other":
            continue
        if token.text in _PAIRS:
            stack.append(token)
        elif token.text in _PAIRS.values():
            if not stack:
                return Diagnosis(token.line, token.column, f"'{token.text}' closes nothing",
                                 f"remove this '{token.text}', or add the opening one it belongs to")
            opened = stack.pop()
            if _PAIRS[opened.text] != token.text:
                return Diagnosis(opened.line, opened.column, f"this '{opened.text}' is never closed",
                                 f"add the missing '{_PAIRS[opened.text]}' before the '{token.text}' at line "
                                 f"{token.line}, column {token.column}")
    if stack:
        opened = stack[-1]
        closing = _PAIRS[opened.text]
        return Diagnosis(opened.line, opened.column, f"this '{opened.text}' is never closed",
                         f"add the missing '{closing}'")
    return None


def _ends_term(token: Token) -> bool:
    if token.kind in _TERM_KINDS:
        return True
    if token.kind == "word":
        return token.text.upper() not in _KEYWORDS and token.text != "a"
    return token.kind == "other" and token.text == "]"


def _starts_term(token: Token) -> bool:
    return token.kind in ("var", "iri") or (token.kind == "word" and ":" in token.text) or token.text == "["


def _missing_dot(toks: list[Token], line: int) -> Diagnosis | None:
    """Inside braces, a triple pattern ending a line at or before ``line`` and another starting the next
    line, with no ``.`` between them."""
    last: Token | None = None
    depth = 0
    for a, b in itertools.pairwise(toks):
        depth += {"{": 1, "}": -1}.get(a.text, 0) if a.kind == "other" else 0
        if depth > 0 and a.line < b.line <= line and _ends_term(a) and _starts_term(b):
            last = a
    if last is None:
        return None
    return Diagnosis(last.line, last.column + len(last.text), "a '.' seems to be missing between two triple "
                     "patterns", f"end line {last.line} with ' .'")


def expected(raw: str) -> str:
    """Oxigraph's "expected one of ..." without its character classes.

    >>> expected('expected one of ",", ".", "}", [_]')
    'expected one of ",", ".", "}"'
    >>> expected("expected one of '(', ['A' ..= 'Z' | '0'], LIMIT")
    "expected one of '(', LIMIT"
    >>> expected("expected [_]")
    'unexpected text'
    """
    head, _, rest = raw.partition("expected")
    items = [item for item in _EXPECTED_ITEM.findall(_CHAR_CLASS.sub(" ", rest)) if item != "Prefix"]
    if not items:
        return head.strip() or "unexpected text"
    return f"expected {'one of ' if len(items) > 1 else ''}{', '.join(dict.fromkeys(items))}"


def snippet(query: str, line: int, column: int) -> str:
    """The query's ``line`` with a caret under ``column``."""
    lines = query.split("\n")
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    text = text.replace("\t", " ").rstrip("\r")
    column = max(1, min(column, len(text) + 1))
    gutter = f"  {line} | "
    return f"{gutter}{text}\n{' ' * (len(gutter) - 2)}| {' ' * (column - 1)}^"


def _diagnose(query: str, line: int, column: int, raw: str, declared: frozenset[str] = frozenset()) -> Diagnosis:
    """What most likely went wrong: the parser's position, corrected by what the text shows."""
    toks = tokens(query)
    found = _unknown_prefix(toks, declared) or unbalanced(toks) or _missing_dot(toks, line)
    if found is not None:
        return found
    return Diagnosis(line, column, expected(raw), "check the query near the caret")


def parser_position(raw: str) -> tuple[int, int] | None:
    """``(line, column)`` of Oxigraph's ``error at LINE:COLUMN: ...`` message (as the parser counts them)."""
    position = _POSITION.match(raw.strip())
    return (int(position.group(1)), int(position.group(2))) if position else None


def syntax_error(query: str, exc: SyntaxError | str, *, added: Sequence[str] = ()) -> SparqlSyntaxError:
    """The :class:`SparqlSyntaxError` for the parser's ``exc`` on ``query``; ``added`` names the prefixes
    whose PREFIX lines sparqlqa put first, one a line (:func:`~sparqlqa.query.sparql_reading.declare_prefixes`):
    those lines are left out of the line numbers and the text shown, their prefixes counted as declared."""
    raw = str(exc.args[0]) if isinstance(exc, SyntaxError) and exc.args else str(exc)
    position = _POSITION.match(raw.strip())
    if position is None:
        return SparqlSyntaxError(f"invalid SPARQL: {raw}", line=0, column=0, problem=raw,
                                 hint="check the query syntax", parser_message=raw)
    skip_lines = len(added)
    shown, declared = query.split("\n", skip_lines)[-1], frozenset(added)
    line, column, rest = int(position.group(1)) - skip_lines, int(position.group(2)), position.group(3)
    found = _diagnose(shown, max(line, 1), column, rest, declared)
    message = (f"invalid SPARQL at line {found.line}, column {found.column}: {found.problem}\n"
               f"{snippet(shown, found.line, found.column)}")
    return SparqlSyntaxError(message, line=found.line, column=found.column, problem=found.problem, hint=found.hint,
                             parser_message=raw)
