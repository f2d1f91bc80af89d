"""Reading an answer form from an English question (words from :mod:`sparqlqa.english`, the language seam):
count ("how many …"), yes/no ("did …", "was …"), an ordering ("the largest budget", "which is longer"),
value filters ("after 2000", "over 150 million") and a choice between two named things ("A or B").

>>> cue = detect_form("Which films were released after 2009?", [])
>>> str(cue.form), [(f.op, f.value, f.kind) for f in cue.filters]
('list', [('>', '2009', 'date')])
>>> cue = detect_form("How many films have a budget over 150 million?", [])
>>> cue.form is Form.COUNT, [(f.op, f.value, f.kind) for f in cue.filters]
(True, [('>', '150000000', 'number')])
>>> str(detect_form("can you name a film directed by X", []).form), str(detect_form("is X a man or a woman ?", []).form)
('list', 'list')
>>> detect_form("What is the longest film?", []).order
OrderCue(direction='desc', kind='number', hints=('runtime', 'length', 'duration'), word='longest', noun='film')
"""

from __future__ import annotations

__all__ = ["FilterCue", "FormCue", "OrderCue", "detect_form"]

import itertools
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

import sparqlqa.english as english
from sparqlqa.english import STOPWORDS
from sparqlqa.stages.modes import Form
from sparqlqa.strategies.offline.mentions import PLACEHOLDER, mask_all

if TYPE_CHECKING:
    from sparqlqa.strategies.offline.mentions import Mention


@dataclass
class OrderCue:
    """An ordering word: its direction, the kind of value it orders ("date", "number"), hint words."""

    direction: str
    kind: str | None
    hints: tuple[str, ...]
    word: str
    noun: str = ""


@dataclass
class FilterCue:
    """``value op``: "after 2009" → (">", "2009", "date")."""

    op: str
    value: str
    kind: str
    hints: tuple[str, ...] = ()
    phrase: str = ""
    context: str = ""  # the word before the comparison and the unit after the figure: "sold … copies"
    unit: int = 1  # the multiplier word's value ("20 **million**": 1,000,000); ``value`` is multiplied
    figure: str = ""  # the figure as written, without its multiplier ("20")


@dataclass
class FormCue:
    """What the question's words say about the answer's form."""

    form: Form = Form.LIST
    order: OrderCue | None = None
    filters: list[FilterCue] = field(default_factory=list)
    choices: list[Mention] = field(default_factory=list)
    superlative: bool = False

    @property
    def plain(self) -> bool:
        return self.form == Form.LIST and self.order is None and not self.filters and not self.choices


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)*", text.casefold())


def _order(words: list[str], has_choices: bool) -> tuple[OrderCue | None, bool]:
    """The first ordering word or phrase (a comparative only between named choices)."""
    for i, word in enumerate(words):
        pair = " ".join(words[i : i + 2])
        found = english.ORDER_PHRASES.get(pair)
        width = 2 if found else 1
        found = found or english.ORDER_WORDS.get(word)
        after = words[i + width : i + width + 1]
        if found is None or (after and after[0] in english.NOT_ORDER_BEFORE):
            continue
        superlative = english.is_superlative(word)
        if not superlative and not has_choices:
            continue
        noun = " ".join(w for w in words[i + width : i + width + 2] if w not in STOPWORDS
                        and w != PLACEHOLDER.casefold())
        return OrderCue(found[0], found[1], found[2], " ".join(words[i : i + width]), noun), superlative
    return None, False


def _number(text: str, multiplier: str | None) -> str | None:
    try:
        value = Decimal(text.replace(",", "")) * english.MULTIPLIERS.get((multiplier or "").casefold(), 1)
    except InvalidOperation:
        return None
    return format(value.normalize(), "f")


def _filters(question: str) -> list[FilterCue]:
    """Comparisons of a number or a year ("after 2009", "over 150 million", "in 2014")."""
    found = []
    dated = bool(set(_words(question)) & english.DATE_WORDS)
    for match in english.FILTER_PATTERN.finditer(question):
        word, figure, multiplier = match.group(1).casefold(), match.group(2), match.group(3)
        op = english.FILTER_WORDS[word]
        before = [w for w in _words(question[: match.start()]) if w not in STOPWORDS][-1:]
        unit = [w for w in _words(match.group(4) or "") if w not in STOPWORDS]
        context = " ".join(before + unit)
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", figure):
            found.append(FilterCue(op, figure, "date", (), match.group(0), context))
            continue
        year = re.fullmatch(r"\d{4}", figure) is not None and multiplier is None and 1000 <= int(figure) <= 2200
        if op == "=" and not year:
            continue  # "in 3 films" says no comparison
        if year and (dated or word in english.YEAR_FILTER_WORDS):
            found.append(FilterCue(op, figure, "date", (), match.group(0), context))
            continue
        value = _number(figure, multiplier)
        if value is not None:
            found.append(FilterCue(op, value, "number", english.FILTER_HINTS.get(word, ()), match.group(0), context,
                                   english.MULTIPLIERS.get((multiplier or "").casefold(), 1), _number(figure, None)
                                   or figure))
    return found


def _choices(question: str, mentions: list[Mention]) -> list[Mention]:
    """Two named things joined by "or" ("…, Avatar or Titanic?")."""
    ordered = sorted(mentions, key=lambda m: m.start)
    for first, second in itertools.pairwise(ordered):
        between = question[first.end : second.start].strip(" ,").casefold()
        if between == english.CHOICE_WORD and first.nodes and second.nodes:
            return [first, second]
    return []


def _than(question: str, mentions: list[Mention]) -> tuple[list[Mention], OrderCue | None]:
    """"Is A longer than B", "was A born before B": the two names and the comparative between them."""
    ordered = sorted((m for m in mentions if m.nodes), key=lambda m: m.start)
    for first, second in itertools.pairwise(ordered):
        words = _words(question[first.end : second.start])
        for i, word in enumerate(words):
            than = _than_at(words, i)
            found = english.ORDER_WORDS.get(word) if than is not None else None
            found = found or english.BARE_COMPARATIVES.get(word)
            if found is not None:  # the noun: the words around the comparative ("have more **stars** than")
                noun = words[:i] + (words[i + 1 : than] if than is not None else [])
                return [first, second], OrderCue(found[0], found[1], found[2], word, " ".join(noun))
    return [], None


def _than_at(words: list[str], at: int) -> int | None:
    """Where "than" follows the comparative at ``at``, directly or after the noun it compares ("more
    **Michelin stars** than", up to :data:`~sparqlqa.english.COMPARED_NOUN_WORDS` words); None otherwise."""
    for offset in range(1, english.COMPARED_NOUN_WORDS + 2):
        if words[at + offset : at + offset + 1] == [english.THAN]:
            return at + offset
    return None


def _not_yes_no(words: list[str]) -> bool:
    """An auxiliary that opens no yes/no question: "can you **name** a film …" (a polite "which"), "is X's
    husband a man **or** a woman" (an alternative question: its answer is one of the two)."""
    return english.is_polite_request(words) or english.CHOICE_WORD in words[1:]


def detect_form(question: str, mentions: list[Mention]) -> FormCue:
    """The :class:`FormCue` of ``question`` (names masked first, so a title such as "First Man" orders
    nothing)."""
    masked = mask_all(question, [m for m in mentions if m.looks_like_a_name], PLACEHOLDER)
    words = _words(masked)
    cue = FormCue(choices=_choices(question, mentions))
    if english.COUNT_PATTERN.search(masked):
        cue.form = Form.COUNT
    elif words and words[0] in english.BOOLEAN_STARTS and not cue.choices and not _not_yes_no(words):
        cue.form = Form.BOOLEAN
    cue.order, cue.superlative = _order(words, bool(cue.choices))
    cue.filters = _filters(masked)
    if cue.form == Form.BOOLEAN:  # "is A longer than B": yes when A comes first in B's and A's order
        pair, order = _than(question, mentions)
        if order is not None:
            cue.choices, cue.order, cue.filters = pair, order, []
    return cue
