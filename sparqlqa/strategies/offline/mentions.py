"""Mention detection: the spans of a question that name KB nodes, from the KB's label index alone.

Spans of consecutive words are normalised exactly like the index keys
(:func:`sparqlqa.kb.labels.normalize_label`: case, punctuation, underscores and
accents do not matter) and looked up, longest first; spans that overlap a
longer match are skipped.  When no multi-word name matches exactly, spans are
also compared fuzzily (small typos).  Bracketed spans such as MetaQA's
``[Ginger Rogers]`` are taken as hints when they link, but are never required.

>>> from sparqlqa.strategies.offline.mentions import words_of
>>> [w.text for w in words_of("who directed frederica_of_mecklenburg-strelitz 's films?")]
['who', 'directed', 'frederica', 'of', 'mecklenburg', 'strelitz', 's', 'films']
"""

from __future__ import annotations

__all__ = ["PLACEHOLDER", "Mention", "Word", "detect_mentions", "mask_all", "words_of"]

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sparqlqa.english import (
    FUZZY_CUTOFF,
    FUZZY_MIN_CHARS,
    ROUND_TRIP_CUES,
    STOPWORDS,
    SURNAME_NODES,
    SURNAME_SCORE,
    singular,
)
from sparqlqa.kb.labels import LabelIndex, normalize_label

#: longest span (in words) looked up as a name
MAX_SPAN_WORDS = 12
#: the placeholder that replaces a mention when the question is compared to relation paths
PLACEHOLDER = "X"

_WORD = re.compile(r"[^\W_]+")
_BRACKET = re.compile(r"\[([^\[\]]+)\]")



@dataclass(frozen=True)
class Word:
    """A word of the question with its character offsets."""

    text: str
    start: int
    end: int


@dataclass
class Mention:
    """A question span that names one or more KB nodes."""

    text: str  # the span as written in the question
    start: int
    end: int
    key: str  # the normalised label or alias it matched
    nodes: list[str] = field(default_factory=list)
    score: float = 1.0  # 1.0 for an exact (or bracketed) match, the fuzzy ratio otherwise
    method: str = "exact"  # "bracket" | "exact" | "fuzzy"

    @property
    def prior(self) -> float:
        """How likely this span is a real mention: long, exact, hinted spans first."""
        length = min(1.0, len(self.key.replace(" ", "")) / 12)
        hint = 0.2 if self.method == "bracket" else 0.0
        return self.score * (0.5 + 0.5 * length) + hint

    @property
    def looks_like_a_name(self) -> bool:
        """Written like a name: bracketed, with a capital or a digit, or several words ("Blade Runner",
        "1941", "anne_smith").  A lower-case word such as "writer" may be a film's title, but it also
        says a relation, so other readings of the question keep it readable."""
        return self.method == "bracket" or len(self.key.split()) > 1 or \
            any(c.isupper() or c.isdigit() for c in self.text)

    def masked(self, question: str, placeholder: str = PLACEHOLDER) -> str:
        """The question with this mention (and its brackets) replaced by ``placeholder``."""
        start, end = self.start, self.end
        if start > 0 and question[start - 1] == "[" and question[end:end + 1] == "]":
            start, end = start - 1, end + 1
        return question[:start] + placeholder + question[end:]

    def overlaps(self, other: Mention) -> bool:
        return self.start < other.end and other.start < self.end

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "span": [self.start, self.end], "key": self.key, "nodes": self.nodes[:5],
                "score": round(self.score, 3), "method": self.method}


def words_of(question: str) -> list[Word]:
    """The question's words (letters and digits; underscores, hyphens, apostrophes split words)."""
    return [Word(m.group(), m.start(), m.end()) for m in _WORD.finditer(question)]


def _content(words: list[Word]) -> bool:
    return any(w.text.casefold() not in STOPWORDS for w in words)


def _bracket_mentions(question: str, index: LabelIndex) -> list[Mention]:
    found = []
    for match in _BRACKET.finditer(question):
        text = match.group(1)
        key = normalize_label(text)
        nodes = index.nodes_for_key(key)
        score = 1.0
        if not nodes:
            fuzzy = index.fuzzy(text, cutoff=FUZZY_CUTOFF, limit=1)
            if not fuzzy:
                continue
            nodes, score, key = [fuzzy[0].iri], fuzzy[0].score, normalize_label(fuzzy[0].label)
        found.append(Mention(text, match.start(1), match.end(1), key, nodes, score, "bracket"))
    return found


def _spans(words: list[Word], max_words: int) -> list[tuple[int, int]]:
    """All (first, last+1) word ranges, longest first, then left to right."""
    n = len(words)
    ranges = [(i, i + size) for size in range(min(max_words, n), 0, -1) for i in range(n - size + 1)]
    return [(i, j) for i, j in ranges if _content(words[i:j])]


def _plural_nodes(key: str, index: LabelIndex, is_value: Callable[[str], bool] | None) -> tuple[str, list[str]]:
    """A plural span names the class-like value nodes of its singular ("**goalkeepers**" → Goalkeeper,
    "**PhD students**" → "PhD student"); never an individual ("films" is no film called "Film")."""
    words = key.split()
    one = singular(words[-1]) if words and is_value is not None else None
    if one is None or is_value is None:
        return key, []
    key = " ".join([*words[:-1], one])
    return key, [n for n in index.nodes_for_key(key) if is_value(n)]


def _exact_mentions(question: str, words: list[Word], index: LabelIndex,
                    is_value: Callable[[str], bool] | None = None) -> list[Mention]:
    chosen: list[Mention] = []
    for i, j in _spans(words, MAX_SPAN_WORDS):
        start, end = words[i].start, words[j - 1].end
        if j - i == 1 and words[i].text in ROUND_TRIP_CUES:
            continue  # "who acted together with X" does not name the film "Together"
        key = normalize_label(question[start:end])
        nodes = index.nodes_for_key(key)
        if not nodes:
            key, nodes = _plural_nodes(key, index, is_value)
        if not nodes:
            continue
        mention = Mention(question[start:end], start, end, key, nodes)
        if not any(mention.overlaps(other) for other in chosen):
            chosen.append(mention)
    return chosen


def _fuzzy_mentions(question: str, words: list[Word], index: LabelIndex,
                    taken: list[Mention], limit: int = 3) -> list[Mention]:
    """Misspelt names: spans of 1-5 words (≥ :data:`FUZZY_MIN_CHARS` letters) compared by ratio."""
    found: list[Mention] = []
    for i, j in _spans(words, 5):
        start, end = words[i].start, words[j - 1].end
        key = normalize_label(question[start:end])
        if len(key) < FUZZY_MIN_CHARS or words[i].text.casefold() in STOPWORDS \
                or words[j - 1].text.casefold() in STOPWORDS:
            continue
        probe = Mention(question[start:end], start, end, key)
        if any(probe.overlaps(other) for other in taken + found):
            continue
        matches = index.fuzzy(key, cutoff=FUZZY_CUTOFF, limit=limit)
        if matches:
            best = matches[0].score
            probe.nodes = [m.iri for m in matches if m.score >= best - 1e-9]
            probe.key, probe.score, probe.method = normalize_label(matches[0].label), best, "fuzzy"
            found.append(probe)
    return found


def _surname_mentions(question: str, words: list[Word], index: LabelIndex,
                      taken: list[Mention]) -> list[Mention]:
    """A capitalised word that names nothing itself but ends a few nodes' names of several words: a
    bare surname ("films by **Nolan**" → Christopher Nolan), scored below an exact match."""
    found: list[Mention] = []
    for word in words[1:]:  # the first word is capitalised as the sentence's ("Albums by …"), not as a name
        if not word.text[:1].isupper() or len(word.text) < 3 or word.text.casefold() in STOPWORDS:
            continue
        probe = Mention(word.text, word.start, word.end, normalize_label(word.text))
        if any(probe.overlaps(other) for other in taken) or index.nodes_for_key(probe.key):
            continue
        nodes = index.ending_with(word.text, limit=SURNAME_NODES)
        if nodes:
            probe.nodes, probe.score, probe.method = nodes, SURNAME_SCORE, "surname"
            found.append(probe)
    return found


def detect_mentions(question: str, index: LabelIndex, *, use_brackets: bool = True,
                    limit: int = 4, is_value: Callable[[str], bool] | None = None) -> list[Mention]:
    """The spans of ``question`` that name KB nodes, best (most likely a real mention) first.

    Bracketed hints that link win; otherwise exact label/alias matches, longest
    first (a plural also names the class-like value nodes ``is_value`` accepts of its singular),
    plus fuzzy matches when no name of several words matched exactly.
    """
    if use_brackets:
        hinted = _bracket_mentions(question, index)
        if hinted:
            return hinted[:limit]
    words = words_of(question)
    found = _exact_mentions(question, words, index, is_value)
    if not any(len(m.key.split()) > 1 for m in found):
        found += _fuzzy_mentions(question, words, index, found)
    found += _surname_mentions(question, words, index, found)  # "Sigourny Weaver" is a typo, not "Weaver"
    found.sort(key=lambda m: (-m.prior, m.start))
    return found[:limit]


def mask_all(question: str, mentions: list[Mention], placeholder: str = PLACEHOLDER) -> str:
    """The question with every (non-overlapping) mention replaced by ``placeholder``, so names never
    count as evidence for a relation."""
    kept: list[Mention] = []
    for mention in mentions:
        if not any(mention.overlaps(other) for other in kept):
            kept.append(mention)
    for mention in sorted(kept, key=lambda m: -m.start):
        question = mention.masked(question, placeholder)
    return question
