"""The English words the offline step reads answer forms by: one place, so another language is one more
module of the same names (the language seam of :mod:`sparqlqa.strategies.offline.forms`).

Nothing here knows a KB: words say *that* a question counts, asks yes/no, orders or filters, and which
kinds of value an ordering word is about ("longest" → a length, "earliest" → a date).
"""

from __future__ import annotations

import re

#: a question that counts starts with (or contains) one of these
COUNT_PATTERN = re.compile(r"\b(how many|number of|count of|count the)\b", re.IGNORECASE)
#: a count that may be a value the KB stores ("how many pages does X **have**"): only then may the answer
#: path end in a literal relation
VALUE_COUNT_PATTERN = re.compile(r"\bhow many\b.*\b(have|has|had|contain|contains|hold|holds|measure|measures)\b",
                                 re.IGNORECASE)
#: the node type a bare wh-word asks for
WH_CLASSES = {"who": "person", "whom": "person"}
#: imperative openings that ask like "which": "**list** the films …", "**count** the films …"
IMPERATIVES = frozenset(["count", "list", "name", "show", "give", "find", "tell", "enumerate", "describe", "mention"])
#: a yes/no question starts with one of these auxiliaries
BOOLEAN_STARTS = frozenset(["did", "does", "do", "is", "was", "are", "were", "has", "have", "had", "can",
                            "could", "will", "would", "should"])
#: a choice between named things: "A or B"
CHOICE_WORD = "or"

#: words that order the answers: word → (direction, what kind of value: "date" | "number" | None, hint
#: words that say the value when the question does not)
ORDER_WORDS: dict[str, tuple[str, str | None, tuple[str, ...]]] = {}


def _order(words: str, direction: str, kind: str | None, hints: tuple[str, ...] = ()) -> None:
    for word in words.split():
        ORDER_WORDS[word] = (direction, kind, hints)


_order("largest biggest highest greatest maximum most larger bigger higher greater more", "desc", "number")
_order("smallest lowest minimum least fewest smaller lower less fewer", "asc", "number")
_order("longest longer", "desc", "number", ("runtime", "length", "duration"))
_order("shortest shorter", "asc", "number", ("runtime", "length", "duration"))
_order("tallest taller", "desc", "number", ("height",))
_order("heaviest heavier", "desc", "number", ("weight", "mass"))
_order("richest richer costliest", "desc", "number", ("budget", "cost", "gross", "revenue"))
_order("cheapest cheaper", "asc", "number", ("budget", "cost", "price"))
_order("earliest earlier first oldest older", "asc", "date", ("date", "year"))
_order("latest later last newest newer youngest younger recent", "desc", "date", ("date", "year"))
#: two-word ordering phrases: "most expensive", "most recent"
ORDER_PHRASES: dict[str, tuple[str, str | None, tuple[str, ...]]] = {
    "most expensive": ("desc", "number", ("budget", "cost", "price")),
    "least expensive": ("asc", "number", ("budget", "cost", "price")),
    "more expensive": ("desc", "number", ("budget", "cost", "price")),
    "most recent": ("desc", "date", ("date", "year")),
    "most recently": ("desc", "date", ("date", "year")),
    "highest grossing": ("desc", "number", ("gross", "revenue")),
    "most populous": ("desc", "number", ("population",)),
}
#: words that compare two named things without "than": "was A born **before** B"
BARE_COMPARATIVES: dict[str, tuple[str, str | None, tuple[str, ...]]] = {
    "before": ("asc", "date", ("date", "year")), "after": ("desc", "date", ("date", "year")),
}
#: ordering words that stop being one before these ("first name", "last name", "more than")
NOT_ORDER_BEFORE = frozenset(["name", "names", "than", "of", "episode", "season"])

#: comparison words before a number or year → operator
FILTER_WORDS: dict[str, str] = {
    "after": ">", "since": ">=", "later than": ">", "from": ">=",
    "before": "<", "until": "<=", "earlier than": "<", "prior to": "<",
    "over": ">", "above": ">", "more than": ">", "greater than": ">", "longer than": ">", "larger than": ">",
    "bigger than": ">", "higher than": ">", "exceeding": ">", "at least": ">=",
    "under": "<", "below": "<", "less than": "<", "fewer than": "<", "shorter than": "<", "smaller than": "<",
    "lower than": "<", "at most": "<=",
    "in": "=", "during": "=",
}
#: filter words that name the kind of value they compare ("longer than" a length)
FILTER_HINTS: dict[str, tuple[str, ...]] = {
    "longer than": ("runtime", "length", "duration"), "shorter than": ("runtime", "length", "duration"),
    "taller than": ("height",),
}
#: number words after a figure: "150 million"
MULTIPLIERS = {"thousand": 1_000, "k": 1_000, "million": 1_000_000, "m": 1_000_000, "mn": 1_000_000,
               "billion": 1_000_000_000, "bn": 1_000_000_000, "trillion": 1_000_000_000_000}
#: words that say a value is a date or a year, not a number
DATE_WORDS = frozenset(["born", "released", "founded", "died", "published", "date", "year", "when", "established",
                        "premiered", "opened", "built", "started"])
#: irregular past participles (regular ones end in -ed): "who was **born** in …" asks for a person
PARTICIPLES = frozenset(["born", "known", "written", "made", "shown", "given", "taken", "seen", "sung", "led",
                         "built", "founded", "shot", "set", "won", "held", "run", "drawn", "grown", "thrown",
                         "begun", "done", "gone", "sold", "told", "bought", "brought", "thought", "found", "kept"])
