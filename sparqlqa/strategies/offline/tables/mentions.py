"""What an analytical question says, in the terms of a :class:`~sparqlqa.strategies.offline.tables.model.TableModel`.

A question becomes tokens, and each span of tokens becomes at most one mention: a class ("singers"), a
column ("release year", "first name" for ``fname``), a value the data holds ("France", "'Live final'": the
exact literal and the column(s) holding it), or a number.  The longest span wins; between spans of one
length a quoted value, then a class, then a column, then a value.  The English words (count, aggregate,
superlative, comparison, negation cues) are in :mod:`sparqlqa.english`; this module only finds them.

>>> tokens("What is the name of 'Live final' in 2014?")[-3:]
[Token(text="'Live final'", low='live final', quoted=True), Token(text='in', low='in', quoted=False), \
Token(text='2014', low='2014', quoted=False)]
"""

from __future__ import annotations

__all__ = ["Mention", "Token", "find_mentions", "phrase_at", "tokens"]

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from pyoxigraph import Literal

from sparqlqa.english import (
    AGGREGATE_WORDS,
    ARTICLE,
    GENERIC_TABLE_WORDS,
    LIST_JOINERS,
    NOT_NUMBER_AFTER,
    NUMBER_WORDS,
    SUPERLATIVE_WORDS,
    TABLE_FILLER,
    word_stem,
)
from sparqlqa.kb.labels import normalize_label
from sparqlqa.strategies.offline.tables.model import Column, TableModel, column_phrases

#: a quoted string (straight or curly quotes), a word, or a number
TOKEN = re.compile(r"'[^']+'|\"[^\"]+\"|\u2018[^\u2019]+\u2019|[A-Za-z][A-Za-z0-9\-]*|\d+(?:\.\d+)?")
MAX_SPAN = 5
CUE_WORDS = frozenset(AGGREGATE_WORDS) | frozenset(SUPERLATIVE_WORDS)


@dataclass(frozen=True)
class Token:
    text: str
    low: str
    quoted: bool = False

    @property
    def number(self) -> float | None:
        if self.quoted:
            return None
        if self.low in NUMBER_WORDS:
            return float(NUMBER_WORDS[self.low])
        try:
            return float(self.low)
        except ValueError:
            return None

    @property
    def stem(self) -> str:
        return word_stem(self.low)


def tokens(question: str) -> list[Token]:
    found = []
    for match in TOKEN.finditer(question):
        text = match.group(0)
        quoted = text[0] in "'\"\u2018"
        inner = text[1:-1] if quoted else text
        found.append(Token(text, normalize_label(inner) if quoted else inner.lower(), quoted))
    return found


@dataclass
class Mention:
    """A span ``[start, end)`` of tokens that names a class, a column, a value or a number."""

    kind: str  # "class" | "column" | "value" | "number"
    start: int
    end: int
    text: str
    classes: list[str] = field(default_factory=list)
    columns: list[Column] = field(default_factory=list)
    values: list[tuple[str, str, Literal]] = field(default_factory=list)
    number: float | None = None
    used: bool = False


def phrase_at(words: Sequence[Token], i: int, phrase: Sequence[str]) -> bool:
    """``phrase`` (words; ``"f*"`` a clipped word) says the tokens from ``i``."""
    if i + len(phrase) > len(words):
        return False
    for token, word in zip(words[i:i + len(phrase)], phrase, strict=False):
        if token.quoted:
            return False
        if word.endswith("*"):
            if not token.low.startswith(word[:-1]):
                return False
        elif word not in (token.low, token.stem):
            return False
    return True


def _classes_at(model: TableModel, words: list[Token], i: int) -> tuple[int, list[str]]:
    best, found = 0, []  # type: tuple[int, list[str]]
    for cls, cls_words in model.classes.items():
        head = cls_words[:1] if cls_words[-1] in GENERIC_TABLE_WORDS else cls_words[-1:]
        for phrase in (cls_words, head):
            if phrase and phrase_at(words, i, phrase) and len(phrase) >= best:
                if len(phrase) > best:
                    best, found = len(phrase), []
                found.append(cls)
    exact = [c for c in found if len(model.classes[c]) == best]
    return best, list(dict.fromkeys(exact or found))


def _columns_at(model: TableModel, words: list[Token], i: int) -> tuple[int, list[Column]]:
    best, found = 0, []  # type: tuple[int, list[Column]]
    for column in model.columns:
        for phrase in column_phrases(column, model.classes.get(column.cls, ())):
            if phrase_at(words, i, phrase) and len(phrase) >= best:
                if len(phrase) > best:
                    best, found = len(phrase), []
                found.append(column)
    return best, found


def _value_at(model: TableModel, words: list[Token], i: int) -> tuple[int, list[tuple[str, str, Literal]]]:
    if words[i].quoted:
        return 1, model.values.get(words[i].low, [])
    for size in range(min(MAX_SPAN, len(words) - i), 0, -1):
        span = words[i:i + size]
        if any(t.quoted for t in span) or all(t.low in TABLE_FILLER for t in span) or span[0].number is not None:
            continue
        text = normalize_label(" ".join(t.text for t in span))
        found = model.values.get(text, []) or model.values.get(" ".join([*text.split()[:-1], span[-1].stem]), [])
        if found:  # "volvos", "cats": a plural of a value
            return size, found
    return 0, []


def _mention_at(model: TableModel, words: list[Token], i: int) -> Mention | None:
    token = words[i]
    if token.quoted:
        return Mention("value", i, i + 1, token.low, values=_value_at(model, words, i)[1])
    if token.number is not None:
        return Mention("number", i, i + 1, token.low, number=token.number)
    if token.low in TABLE_FILLER:
        return None
    n_class, classes = _classes_at(model, words, i)
    n_col, columns = _columns_at(model, words, i)
    n_val, values = _value_at(model, words, i)
    best = max(n_class, n_col, n_val)
    if best == 0:
        return None
    text = " ".join(t.text for t in words[i:i + best])
    if n_class == best:
        return Mention("class", i, i + best, text, classes=classes, columns=columns if n_col == best else [])
    if n_col == best:
        return Mention("column", i, i + best, text, columns=columns)
    return Mention("value", i, i + best, text, values=values)


def _modifies(words: list[Token], i: int, starts: set[int]) -> bool:
    """The cue word at ``i`` modifies the column named after it ("the **highest** average", "**average**,
    minimum and maximum age"): only cue words, list joiners and the article stand between them."""
    j = i + 1
    between = CUE_WORDS | LIST_JOINERS | {ARTICLE}
    while j < len(words) and words[j].low in between and j not in starts:
        j += 1
    return j in starts


def find_mentions(model: TableModel, words: list[Token]) -> list[Mention]:
    """The question's mentions, left to right, none overlapping; a column named by a cue word ("average")
    only when it modifies nothing after it."""
    found, i = [], 0
    while i < len(words):
        mention = _mention_at(model, words, i)
        if mention is None:
            i += 1
            continue
        found.append(mention)
        i = mention.end
    # "car models": of two classes said one after the other, the second is the noun, the first its modifier
    found = [m for n, m in enumerate(found) if not (m.kind == "class" and n + 1 < len(found)
                                                      and found[n + 1].kind == "class" and found[n + 1].start == m.end)]
    # "each one": a number word after a group word is no number
    found = [m for m in found if not (m.kind == "number" and not words[m.start].low[0].isdigit() and m.start
                                      and words[m.start - 1].low in NOT_NUMBER_AFTER)]
    starts = {m.start for m in found if m.kind in ("column", "class")}
    return [m for m in found if not (m.kind == "column" and m.end - m.start == 1 and words[m.start].low in CUE_WORDS
                                     and _modifies(words, m.start, starts))]
