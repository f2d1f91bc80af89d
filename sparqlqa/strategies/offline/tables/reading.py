"""Analytical questions over a graph mapped from tables, answered offline as tables (issue 35 item 3).

The reading, from the question's mentions (:mod:`~sparqlqa.strategies.offline.tables.mentions`) and the
English cue words (:mod:`sparqlqa.english`):

1. the **focus class**: what is counted ("how many *singers*"), else the first class named, else the class
   of most named columns;
2. a **group** after "each"/"per"/"every" (a linked class or a column);
3. **conditions**: a value the data holds ("France") on its column; a number with a comparison ("above age
   20", "older than 1", "before 1980", "with 4 cylinders", "in 2014 or 2015");
4. the **form**: a count (per group), aggregates of columns (several at once, per group), the focus with
   the most/least of a linked class (a count per node, ordered, with a limit) or of a column, the focus
   without any node of a linked class, or rows of the columns named (the focus's name by default), in
   the order asked.

A reading holds only when every class, column, value and number the question names is used; otherwise
the question is not read (``None``) and the caller says so.  Nothing here depends on a KB or a dataset:
only the model's classes, columns, links and values, and the English words.
"""

from __future__ import annotations

__all__ = ["Cues", "Reading", "after", "column_for", "focus_of", "read_cues"]

from dataclasses import dataclass, field

from sparqlqa.english import (
    AGGREGATE_WORDS,
    ARTICLE,
    AT_WORD,
    COMPARISON_PHRASES,
    COUNT_WORDS,
    DESCENDING_WORDS,
    DISTINCT_WORDS,
    GROUP_WORDS,
    NAME_WORDS,
    NEGATION_WORDS,
    ORDER_CUES,
    SUPERLATIVE_LEADS,
    SUPERLATIVE_WORDS,
    THAN,
    WH_WORDS,
)
from sparqlqa.strategies.offline.tables.mentions import Mention, Token, phrase_at
from sparqlqa.strategies.offline.tables.model import Column, TableModel
from sparqlqa.strategies.offline.tables.query import QueryBuilder


@dataclass
class Cues:
    """Where the question's cue words are (token indexes)."""

    count: int | None = None  # the token after the count words
    group: int | None = None  # the token after the group word
    aggregates: list[tuple[int, str]] = field(default_factory=list)
    superlatives: list[tuple[int, str]] = field(default_factory=list)
    comparisons: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, op)
    negation: int | None = None  # the token after the negation words
    distinct: bool = False
    order: bool = False
    descending: bool = False


def _superlative_position(words: list[Token], i: int) -> bool:
    """An aggregate word read as a superlative: "the model **with the** minimum horsepower"."""
    return i >= 2 and words[i - 1].low == ARTICLE and words[i - 2].low in SUPERLATIVE_LEADS


def read_cues(words: list[Token]) -> Cues:
    cues = Cues()
    for i, token in enumerate(words):
        for phrase in map(tuple, COUNT_WORDS):
            if cues.count is None and phrase_at(words, i, phrase):
                cues.count = i + len(phrase)
        if token.low in GROUP_WORDS and cues.group is None:
            cues.group = i + 1
        superlative = token.low in SUPERLATIVE_WORDS and (token.low not in AGGREGATE_WORDS
                                                          or _superlative_position(words, i))
        superlative = superlative and not (i and words[i - 1].low == AT_WORD)  # "at least 3"
        if superlative:
            cues.superlatives.append((i, SUPERLATIVE_WORDS[token.low]))
        elif token.low in AGGREGATE_WORDS:
            cues.aggregates.append((i, AGGREGATE_WORDS[token.low]))
        for phrase, op in COMPARISON_PHRASES.items():
            if phrase_at(words, i, phrase):
                cues.comparisons.append((i, i + len(phrase), op))
            elif len(phrase) == 2 and phrase[1] == THAN and token.low == phrase[0]:
                than = next((j for j in range(i + 2, min(i + 5, len(words))) if words[j].low == THAN), None)
                if than is not None:  # "a greater weight than 10": the compared noun in between
                    cues.comparisons.append((i, than + 1, op))
        for phrase in NEGATION_WORDS:
            if cues.negation is None and phrase_at(words, i, phrase):
                cues.negation = i + len(phrase)
        cues.distinct |= token.low in DISTINCT_WORDS
        cues.order |= token.low in ORDER_CUES
        cues.descending |= token.low in DESCENDING_WORDS
    return cues


@dataclass
class Reading:
    """What the question asks of the model, resolved to classes and columns."""

    words: list[Token]
    mentions: list[Mention]
    cues: Cues
    focus: str
    builder: QueryBuilder
    #: the comparisons (their start token) a condition used
    compared: set[int] = field(default_factory=set)

    def unexplained(self) -> bool:
        """A cue the reading did not use: a comparison no condition took, a superlative with no order, an
        aggregate word with no aggregate (a reading that ignores them answers another question)."""
        builder = self.builder
        if any(start not in self.compared for start, _, _ in self.cues.comparisons):
            return True
        if self.cues.superlatives and not builder.order:
            return True
        return bool(self.cues.aggregates) and not builder.aggregates and not builder.order


def after(mentions: list[Mention], index: int | None, kind: str, within: int = 3) -> Mention | None:
    if index is None:
        return None
    return next((m for m in mentions if m.kind == kind and index <= m.start <= index + within), None)


def focus_of(model: TableModel, mentions: list[Mention], cues: Cues, words: list[Token],
             ) -> tuple[str, Mention | None] | None:
    """The class the question is about: what it counts, the class right after "which"/"what", else the
    first class named, else the class of most named columns."""
    owners: dict[str, int] = {}
    for mention in mentions:
        for column in mention.columns if mention.kind == "column" else []:
            owners[column.cls] = owners.get(column.cls, 0) + 1
    counted = after(mentions, cues.count, "class")
    grouped = after(mentions, cues.group, "class", 1) if cues.count is not None or cues.aggregates else None
    classes = [m for m in mentions if m.kind == "class" and m is not grouped]
    asked = next((m for m in classes if m.start and words[m.start - 1].low in WH_WORDS), None)
    chosen = counted or asked or (classes[0] if classes else None)
    if chosen is not None:  # of classes said alike ("cars": car_names, cars_data), the one whose columns are named
        return max(chosen.classes, key=lambda c: (owners.get(c, 0), -chosen.classes.index(c))), chosen
    if not owners:
        return None
    return max(sorted(owners), key=lambda c: owners[c]), None


def column_for(reading: Reading, mention: Mention, prefer: str | None = None) -> Column | None:
    """The column a mention names: of ``prefer``, the class said right before or after it, else the
    nearest reachable."""
    builder, mentions = reading.builder, reading.mentions
    at = mentions.index(mention)
    near = [m for m in mentions[max(0, at - 1):at + 3] if m.kind == "class" and m is not mention]
    if mention.kind == "class":
        near = [mention, *near]
    order = [*([prefer] if prefer else []), *(c for m in near for c in m.classes), reading.focus,
             *sorted(builder.nodes)]
    order += reading.builder.model.by_distance(reading.focus)
    says_name = mention.text.lower() in NAME_WORDS
    for cls in order:
        found = [c for c in mention.columns if c.cls == cls and builder.reachable(cls)]
        naming = builder.model.naming(cls) if says_name and builder.reachable(cls) else None
        if naming is not None:
            return naming
        if found:
            return sorted(found, key=lambda c: (not c.name, c.iri))[0]
    return None
