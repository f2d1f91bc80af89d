"""Reading a question (names masked) for path scoring: its candidate spans, its focus (where and what it
asks for), and the cues that say how its hops are said.  Plain English, no KB knowledge.

>>> question_focus("what were the release years of X", "X")
Focus(position=0, phrase='release years')
"""

from __future__ import annotations

__all__ = ["Focus", "Span", "do_support", "grand_stem", "main_verb", "question_focus", "question_spans",
           "round_trip_cue"]

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sparqlqa.english import (
    CLASSIFIERS,
    COPULAS,
    DO_WORDS,
    GRAND_KIN,
    IMPERATIVES,
    NOUN_WH_WORDS,
    OF_WORD,
    PERSON_WH_WORDS,
    POSSESSIVE_S,
    ROUND_TRIP_CUES,
    STOPWORDS,
    WH_TYPES,
    WH_WORDS,
    is_participle,
    is_possessive,
)
from sparqlqa.strategies.offline.mentions import words_of


@dataclass(frozen=True)
class Span:
    """A run of question words (word offsets ``first``..``last``, exclusive) and its text."""

    first: int
    last: int
    text: str
    in_chain: bool = False  # a link of a possessive chain ("X 's mother", "the nation of …")
    category_of: str | None = None  # "kind of **film**": the span asks for a category of this noun




@dataclass(frozen=True)
class Focus:
    """Where the question asks for its answer (word offset) and what it calls the answer, if it says."""

    position: int | None
    phrase: str | None


def question_focus(question: str, placeholder: str) -> Focus:
    """The first wh-word (if any) and the noun phrase it asks for (else the question's first): "what were the
    **release years** of …" → ``Focus(0, "release years")``; "who …" → no phrase.

    >>> question_focus("the films acted by X were released in which years", "X")
    Focus(position=8, phrase='years')
    """
    words = [w.text.casefold() for w in words_of(question)]
    start = next((i for i, w in enumerate(words) if w in WH_WORDS), None)
    if start is None and words[:1] and words[0] in IMPERATIVES:
        start = 0  # "count the films starring X": asked like "which films …"
        words[0] = "which"
    if start is not None and words[start] in WH_TYPES:
        return Focus(start, WH_TYPES[words[start]])
    i = 0 if start is None else start + 1
    if start is not None and words[start] not in NOUN_WH_WORDS:
        if words[start] not in PERSON_WH_WORDS or i >= len(words) or words[i] not in COPULAS:
            return Focus(start, None)
        i += 1  # "who is the **director** of X": the noun after the copula is what "who" asks for
        while i < len(words) and words[i] in STOPWORDS:
            i += 1
        if i < len(words) and is_participle(words[i]):
            return Focus(start, None)  # "who is married to …", "who was born in …"
    while i < len(words) and words[i] in STOPWORDS:
        i += 1
    phrase: list[str] = []
    while i < len(words) and len(phrase) < 2 and words[i] not in STOPWORDS and words[i] != placeholder.casefold():
        if phrase and is_participle(words[i]):
            break  # "which movies directed by …": a participle starts the next phrase
        if phrase and i + 1 < len(words) and words[i + 1] == placeholder.casefold():
            break  # "which films **star** X": a word right before the name is its verb
        phrase.append(words[i])
        i += 1
    return Focus(start, " ".join(phrase) or None)


def question_spans(question: str, placeholder: str, max_words: int) -> list[Span]:
    """Runs of 1..``max_words`` words of the (masked) question that start and end with a content word.

    "kind of N" (any of CLASSIFIERS) is one span that asks for a category of N; "kind" alone says
    nothing there and is no span.

    >>> [(s.text, s.category_of) for s in question_spans("what kind of film is X", "X", 3)]
    [('film', None), ('kind of film', 'film')]
    """
    words = words_of(question)
    folded = [w.text.casefold() if w.text != placeholder else "" for w in words]
    spans = []
    for size in range(1, max_words + 1):
        for i in range(len(words) - size + 1):
            run = folded[i : i + size]
            if "" in run:
                continue  # a span never reaches across a masked name
            if run[0] in STOPWORDS or run[-1] in STOPWORDS or (size == 1 and _classifies(folded, i)):
                continue
            text = question[words[i].start : words[i + size - 1].end]
            if size == 3 and _classifies(folded, i):
                spans.append(Span(i, i + size, text, in_chain=True, category_of=run[2]))
            else:
                spans.append(Span(i, i + size, text, _in_chain(question, words, i, i + size)))
    return spans


def _classifies(words: Sequence[str], at: int) -> bool:
    """Whether ``words[at]`` is a classifier followed by "of" and a noun ("**kind** of film"; a masked
    name is "" in ``words``)."""
    return (words[at] in CLASSIFIERS and words[at + 1 : at + 2] == [OF_WORD] and at + 2 < len(words)
            and words[at + 2] not in STOPWORDS and words[at + 2] != "")


def _in_chain(question: str, words: Sequence[Any], first: int, last: int) -> bool:
    """Whether words ``first..last`` are a link of a possessive chain: right after "'s" ("X 's
    **mother** 's …") or right before "of" ("the **nation** of …").  Such a noun names a hop."""
    before = words[first - 1].text.casefold() if first > 0 else ""
    after = words[last].text.casefold() if last < len(words) else ""
    possessive = is_possessive(before, question[max(0, words[first - 1].start - 1)])
    return possessive or after == OF_WORD




def round_trip_cue(question: str) -> str | None:
    """The first word of ``question`` that asks for a shared neighbour, if any ("co-directed" counts);
    a reading without a round trip then loses ``round_trip_cue`` (English closed-class words, like
    WH_WORDS; see ``mentions.ROUND_TRIP_CUES``).

    >>> round_trip_cue("who co-wrote films with X"), round_trip_cue("who directed X")
    ('co', None)
    """
    return next((w.text for w in words_of(question) if w.text.casefold() in ROUND_TRIP_CUES), None)


def grand_stem(text: str) -> str | None:
    """The kin word in a "grand-" word (``grandparent`` → ``parent``): that kin, two generations off.

    >>> grand_stem("grandparent"), grand_stem("grand-daughter"), grand_stem("grand")
    ('parent', 'daughter', None)
    """
    match = GRAND_KIN.fullmatch(text.casefold())
    return match.group(1) if match else None


def do_support(words: Sequence[str], focus: int, phrase: str | None) -> bool:
    """Whether the wh-word (and its noun) is followed by do/does/did: "where **did** … die",
    "what city **does** … live in"."""
    after = focus + 1 + (len(phrase.split()) if phrase and focus + 1 < len(words) and
                         words[focus + 1] == phrase.split()[0] else 0)
    return after < len(words) and words[after] in DO_WORDS


def main_verb(words: Sequence[str], focus: int | None, phrase: str | None, name: int) -> int | None:
    """In a do-question asked before the name, the offset of its main verb: the first content word after
    the name and its possessive chain ("where **does** X 's mother **come** from", "what movie **did** X
    **write** the story for").  The answer is what that verb says of the name, not the chain's end, so a
    reading that leaves the verb unsaid is incomplete.  ``words`` are casefolded; None otherwise.

    >>> main_verb("where does X s mother come from".split(), 0, None, 2)
    5
    """
    if focus is None or focus > name or not do_support(words, focus, phrase):
        return None
    at = name + 1
    while at < len(words):
        if words[at] == POSSESSIVE_S and at + 1 < len(words) and words[at + 1] not in STOPWORDS:
            at += 2  # "'s mother": a link of the chain
        elif words[at] in STOPWORDS:
            at += 1
        else:
            return at
    return None
