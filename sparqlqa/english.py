"""The language seam: every English word list, pattern and hand-set weight the question readers use.

The offline strategy reads questions with rules (which words are never a name, what a wh-word asks for,
which words say "round trip"), and the KB layer splits relation names into content words.  All of that
knowledge of English lives here, so a second language, or a re-tune, touches this one file: the word
lists, and each small rule (a plural, a singular, a participle, an agent noun) as one function.  Word lists
are built from small named blocks, so the one stop-word list and its two narrower uses cannot drift.

>>> "the" in STOPWORDS and "the" in FUNCTION_WORDS and "the" in NAME_STOPWORDS
True
>>> sorted(WH_WORDS - NAME_STOPWORDS)
[]
"""

from __future__ import annotations

__all__ = ["AGGREGATE_WORDS", "ALTERNATIVE_MARGIN", "ARTICLE", "AT_WORD", "AVERAGE_WORDS", "BARE_COMPARATIVES",
           "BOOLEAN_STARTS", "CHOICE_WORD", "CLASSIFIERS", "COMPACT_TAILS", "COMPARED_NOUN_WORDS", "COMPARISON_COLUMNS",
           "COMPARISON_PHRASES", "COPULAS", "COUNT_PATTERN", "COUNT_WORDS", "DATE_WORDS", "DESCENDING_WORDS",
           "DISTINCT_WORDS", "DO_WORDS", "FILTER_HINTS", "FILTER_WORDS", "FREE_TEXT_STOPWORDS", "FUNCTION_WORDS",
           "FUZZY_CUTOFF", "FUZZY_MIN_CHARS", "GENERIC_TABLE_WORDS", "GRAND_KIN", "GROUP_SKIPS", "GROUP_WORDS",
           "IMPERATIVES", "IMPLIED_HOP", "INVERSE_SUFFIX", "KEY_COLUMN_ENDINGS", "LIMIT_WORD", "LIST_JOINERS",
           "MENTION_WEIGHT", "MULTIPLIERS", "NAME_STOPWORDS", "NAME_WORDS", "NEGATION_WORDS", "NOT_NUMBER_AFTER",
           "NOT_ORDER_BEFORE", "NOUN_WH_WORDS", "NUMBER_WORDS", "OF_WORD", "ORDER_CUES", "ORDER_PHRASES", "ORDER_WORDS",
           "PARTICIPLE", "PARTICIPLES", "PERSON_WH_WORDS", "POSSESSIVE_S", "ROUND_TRIP_CUES", "SELF_CHAIN_MIN",
           "STOPWORDS", "SUPERLATIVE_LEADS", "SUPERLATIVE_WORDS", "SURNAME_NODES", "SURNAME_SCORE", "TABLE_FILLER",
           "THAN", "VALUE_COUNT_PATTERN", "VALUE_PREPOSITIONS", "VALUE_SUPERLATIVES", "WH_CLASSES", "WH_TYPES",
           "WH_WORDS", "YEAR_WORD", "ForeignCues", "ScoringSettings", "agent_nouns", "agent_verbs", "category_phrase",
           "co_phrase", "foreign_cues", "is_participle", "is_passive", "is_possessive", "name_column_rank",
           "name_singular", "plural", "same_phrases", "says_verb", "singular", "together_phrase", "without_auxiliary",
           "word_stem"]

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

# --- word blocks ------------------------------------------------------------------------------------

#: articles, prepositions and the forms of be/have: closed-class words every list below shares
CORE_FUNCTION_WORDS = frozenset(["a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "as",
                                 "is", "are", "was", "has", "have", "had", "be"])
#: words that ask for the answer; the first one is the question's focus
WH_WORDS = frozenset(["what", "which", "who", "whom", "whose", "when", "where"])
#: the do-support auxiliaries ("where **did** X die")
DO_WORDS = frozenset(["do", "does", "did"])

# --- the stop-word list and its two narrower uses ----------------------------------------------------

#: function words and question words: never a mention (a name) on their own in a question
STOPWORDS: frozenset[str] = CORE_FUNCTION_WORDS | WH_WORDS | DO_WORDS | frozenset(
    """without about into onto over under and or but not no were been being am done having can could
    will would shall should may might must why how that this these those there here it its i me my we our
    you your he him his she her they them their s also than then so too very just any all some each every
    both either neither one ones such own only more most much many few whatever whichever whoever name
    names list tell give show find""".split()  # noqa: SIM905
)
#: words that never name a relation's value on their own (verbalising relation labels: "born in")
FUNCTION_WORDS = CORE_FUNCTION_WORDS | {"into"}
#: words a free-text index (Virtuoso's ``bif:contains``) ignores: a search made only of them finds nothing
FREE_TEXT_STOPWORDS = frozenset([
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in", "is", "it", "its",
    "of", "on", "or", "that", "the", "to", "was", "were", "which", "who", "with",
])
#: words left out when relation names are compared as word sets (``directed_by`` ~ ``director of``)
NAME_STOPWORDS = CORE_FUNCTION_WORDS | WH_WORDS | DO_WORDS | frozenset(
    ["and", "or", "how", "it", "its", "that", "this", "were"])

# --- what the question's words say --------------------------------------------------------------------

#: what a bare wh-word asks for (its answer type), when it names no noun itself
WH_TYPES = {"when": "date", "where": "place"}
#: the node type a bare wh-word asks for, matched against a typed KB's class labels only
WH_CLASSES = {"who": "person", "whom": "person"}
#: nouns that ask for a category of the noun after "of": "what **kind of film** is X" asks for its genre
CLASSIFIERS = frozenset(["kind", "kinds", "sort", "sorts", "type", "types"])
#: words that say two things share a neighbour ("who starred **together** with X", "films that **share**
#: actors with X", "the director of X **also** directed …"); written in lower case they are never a name
ROUND_TRIP_CUES = frozenset(["together", "same", "share", "shares", "sharing", "co", "also"])
#: "<verb> <preposition> <noun>" names the value by its noun (not "of": "place of birth" is no "birth")
VALUE_PREPOSITIONS = frozenset({"in", "for", "at", "on", "from", "with", "to"})
#: a past participle ("directed", "written"): "directed by" is said of the film, not the director
PARTICIPLE = re.compile(r"[a-z]{2,}(?:ed|en)")
#: the suffix that marks a relation stored both ways (``starred_actors_inverse``)
INVERSE_SUFFIX = re.compile(r"(?i)[_ .-]?(?:inverse|reverse|inv)$")
#: a kin word two generations off ("grandparent", "grand-daughter"): group 1 is the kin word
GRAND_KIN = re.compile(r"grand-?([a-z]{3,})")

#: plural endings → singular endings, longest first ("goalkeepers", "categories", "matches"): a plural
#: noun names a class-like value node by its singular label ("which players are **forwards**")
PLURAL_ENDINGS = (("ies", "y"), ("sses", "ss"), ("shes", "sh"), ("ches", "ch"), ("xes", "x"), ("s", ""))


def singular(word: str) -> str | None:
    """The singular of an English plural noun by its ending, or None when ``word`` does not look plural.

    >>> singular("goalkeepers"), singular("categories"), singular("class"), singular("is")
    ('goalkeeper', 'category', None, None)
    """
    if len(word) < 4 or word.endswith(("ss", "us", "is")):
        return None
    return next((word[: -len(end)] + to for end, to in PLURAL_ENDINGS if word.endswith(end)), None)



def plural(noun: str, count: int) -> str:
    """``noun`` as said of ``count`` things: ``film`` → ``films``, ``city`` → ``cities``, ``box`` → ``boxes``
    (a label ending in s stays; stages/answer.py's headline).

    >>> plural("film", 2), plural("city", 3), plural("box", 2), plural("day", 2), plural("film", 1), plural("series", 2)
    ('films', 'cities', 'boxes', 'days', 'film', 'series')
    """
    if count == 1 or noun.endswith("s"):
        return noun
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return noun[:-1] + "ies"
    return noun + ("es" if noun.endswith(("x", "ch", "sh", "z")) else "s")


#: plural endings of a database's table and column names (``car_makers``, ``countries``, ``classes``)
NAME_PLURAL_ENDINGS = (("ies", "y"), ("sses", "ss"), ("s", ""))


def name_singular(word: str) -> str:
    """A table or column name in the singular (kb/data_names.py): ``countries`` → ``country``, ``singers`` →
    ``singer``; a word too short to lose its ending stays (``ids``, ``bus``).

    >>> name_singular("countries"), name_singular("classes"), name_singular("singers"), name_singular("ids")
    ('country', 'class', 'singer', 'ids')
    """
    for ending, stem in NAME_PLURAL_ENDINGS:
        if word.endswith(ending) and len(word) > len(ending) + 2:
            return word[: -len(ending)] + stem
    return word


def noun_forms(word: str) -> list[str]:
    """``word`` and the singulars it may be the plural of, each once (a type named in a question:
    "which **films**", "which **cities**").

    >>> noun_forms("films"), noun_forms("cities"), noun_forms("city")
    (['films', 'film'], ['cities', 'citie', 'city'], ['city'])
    """
    return list(dict.fromkeys([word, word[:-1] if word.endswith("s") else word, singular(word) or word]))


def word_stem(word: str) -> str:
    """A question word's stem for matching table and column names: its singular, or a three-letter plural
    without its s (``ids`` → ``id``).

    >>> word_stem("singers"), word_stem("ids"), word_stem("age")
    ('singer', 'id', 'age')
    """
    short_plural = len(word) == 3 and word.endswith("s")  # "ids"
    return singular(word) or (word[:-1] if short_plural else word)


# --- small rules of question words (strategies/offline/question.py) ------------------------------------

#: the forms of "be" after "who" that ask for the noun after them ("who **is** the director of X")
COPULAS = frozenset(["is", "are", "was", "were"])
#: wh-words that ask through the noun after them ("**which** films", "**what** city")
NOUN_WH_WORDS = frozenset(["what", "which"])
#: wh-words that ask for a person
PERSON_WH_WORDS = frozenset(["who", "whom"])
#: the word that joins a noun to what it is of ("the **nation** of …", "kind **of** film")
OF_WORD = "of"
#: the possessive ending as a word of its own ("X 's mother") and the marks before it
POSSESSIVE_S = "s"
APOSTROPHES = "'’"


def is_participle(word: str) -> bool:
    """A participle ("directed", "starring", "born"): it starts a new phrase, it does not name the answer.

    >>> is_participle("directed"), is_participle("starring"), is_participle("born"), is_participle("films")
    (True, True, True, False)
    """
    return word.endswith(("ed", "ing")) or word in PARTICIPLES


def is_possessive(word: str, mark: str) -> bool:
    """Whether ``word`` is the possessive "s" written after the apostrophe ``mark`` ("X **'s** mother")."""
    return word == POSSESSIVE_S and mark in APOSTROPHES



# --- how a relation's label is said (strategies/offline/verbalise.py) ----------------------------------

#: words a relation label may open with that say nothing of its value ("**has** genre", "**is** part of")
LABEL_AUXILIARIES = frozenset(["has", "have", "is", "in"])
#: the preposition of a passive label ("directed **by**")
PASSIVE_BY = "by"


def is_passive(words: list[str]) -> bool:
    """Whether a label's (casefolded) words are "<participle> by": ``directed by``, ``written by``."""
    return len(words) == 2 and words[1] == PASSIVE_BY and PARTICIPLE.fullmatch(words[0]) is not None


def agent_nouns(text: str) -> list[str]:
    """Who does what a "<verb>ed by" relation names, the way questions say it: ``directed by`` →
    ``director``, ``written by`` → ``writer``, ``produced by`` → ``producer`` (both -er and -or are
    offered; the embedding model ignores the one that is not a word).

    >>> agent_nouns("written by"), agent_nouns("directed by"), agent_nouns("genre")
    (['writer'], ['directer', 'director'], [])
    """
    match = re.fullmatch(r"(\w+?)(ed|en) by", text.strip().casefold())
    if not match:
        return []
    stem, ending = match.groups()
    if ending == "en":
        stem = stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else stem
        return [f"{stem}er"]
    if len(stem) > 2 and stem[-1] == stem[-2]:
        stem = stem[:-1]  # starred → star
    return [f"{stem}er", f"{stem}or"]


def agent_verbs(word: str) -> list[str]:
    """The verb behind a Latinate agent noun: ``actors`` → ``act``, ``acted``; ``director`` →
    ``direct``, ``directed``.  Only -tor nouns: -er nouns are left alone ("father" is nobody who
    "fathed") and so are other -or nouns ("author" → "auth").

    >>> agent_verbs("actors"), agent_verbs("genre")
    (['act', 'acted'], [])
    """
    singular = word[:-1] if word.endswith("ors") else word
    if not singular.endswith("tor") or len(singular) < 5:
        return []
    stem = singular[:-2]
    return [stem, f"{stem}ed"]


def without_auxiliary(text: str) -> str:
    """``has genre`` → ``genre``, ``is part of`` → ``part of``: the noun a question uses for the value."""
    head, _, rest = text.partition(" ")
    return rest if head.casefold() in LABEL_AUXILIARIES and rest else text


def says_verb(text: str, texts: Sequence[str]) -> bool:
    """"starred", "directed by", or the verb of an agent noun among ``texts`` ("acted" beside "actors")."""
    if text.endswith(("ed", " " + PASSIVE_BY)) or f"{text} {PASSIVE_BY}" in texts:
        return True
    return any(text in agent_verbs(word) for other in texts for word in other.split())


def category_phrase(text: str, noun: str) -> str:
    """A relation read as a category of ``noun`` ("what kind of **film**"): ``genre of film``."""
    return f"{text} {OF_WORD} {noun}"


def same_phrases(text: str) -> list[str]:
    """A relation's value shared with the name: ``same genre``, ``share genre``."""
    return [f"same {text}", f"share {text}"]


def together_phrase(text: str) -> str:
    """A relation done with the name: ``written by`` → ``written together with``."""
    return f"{text.removesuffix(' ' + PASSIVE_BY)} together with"


def co_phrase(noun: str) -> str:
    """A fellow doer: ``writer`` → ``co-writer``."""
    return f"co-{noun}"


# --- answer forms: count, yes/no, order, filters, choices (strategies/offline/forms.py) -------------------

#: a question that counts starts with (or contains) one of these
COUNT_PATTERN = re.compile(r"\b(how many|number of|count of|count the)\b", re.IGNORECASE)
#: a count that may be a value the KB stores ("how many pages does X **have**"): only then may the answer
#: path end in a literal relation
VALUE_COUNT_PATTERN = re.compile(r"\bhow many\b.*\b(have|has|had|contain|contains|hold|holds|measure|measures)\b",
                                 re.IGNORECASE)
#: imperative openings that ask like "which": "**list** the films …", "**count** the films …"
IMPERATIVES = frozenset(["count", "list", "name", "show", "give", "find", "tell", "enumerate", "describe", "mention"])
#: a yes/no question starts with one of these auxiliaries
BOOLEAN_STARTS = frozenset(["did", "does", "do", "is", "was", "are", "were", "has", "have", "had", "can",
                            "could", "will", "would", "should"])
#: a choice between named things: "A or B"
CHOICE_WORD = "or"

#: words that order the answers: word → (direction, what kind of value: "date" | "number" | None, hint
#: words that say the value when the question does not)
ORDER_WORDS: Mapping[str, tuple[str, str | None, tuple[str, ...]]] = MappingProxyType({
    word: (direction, kind, hints)
    for words, direction, kind, hints in (
        ("largest biggest highest greatest maximum most larger bigger higher greater more", "desc", "number", ()),
        ("smallest lowest minimum least fewest smaller lower less fewer", "asc", "number", ()),
        ("longest longer", "desc", "number", ("runtime", "length", "duration")),
        ("shortest shorter", "asc", "number", ("runtime", "length", "duration")),
        ("tallest taller", "desc", "number", ("height",)),
        ("heaviest heavier", "desc", "number", ("weight", "mass")),
        ("richest richer costliest", "desc", "number", ("budget", "cost", "gross", "revenue")),
        ("cheapest cheaper", "asc", "number", ("budget", "cost", "price")),
        ("earliest earlier first oldest older", "asc", "date", ("date", "year")),
        ("latest later last newest newer youngest younger recent", "desc", "date", ("date", "year")),
    )
    for word in words.split()
})
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
#: how many words may stand between a comparative and its "than" ("more **Michelin stars** than": English
#: puts the compared noun there)
COMPARED_NOUN_WORDS = 3
#: words that compare two named things without "than": "was A born **before** B"
BARE_COMPARATIVES: dict[str, tuple[str, str | None, tuple[str, ...]]] = {
    "before": ("asc", "date", ("date", "year")), "after": ("desc", "date", ("date", "year")),
}
#: ordering words that stop being one before these ("first name", "last name", "more than")
NOT_ORDER_BEFORE = frozenset(["name", "names", "than", "of", "episode", "season"])

#: words that make an ordering word a superlative, beside the -est forms ("the **most** films")
SUPERLATIVE_FORMS = frozenset(["most", "least", "first", "last", "maximum", "minimum"])
#: the word after a comparative that says what it is compared with ("longer **than** X")
THAN = "than"
#: the word after a polite opening ("can **you** name a film …": a "which" question, not a yes/no one)
POLITE_YOU = "you"


def is_superlative(word: str) -> bool:
    """Whether an ordering word picks one end ("longest", "most") rather than comparing ("longer").

    >>> is_superlative("longest"), is_superlative("most"), is_superlative("longer")
    (True, True, False)
    """
    return word.endswith("est") or word in SUPERLATIVE_FORMS


def is_polite_request(words: list[str]) -> bool:
    """"can you **name** a film …": an auxiliary, "you" and an imperative ask like "which" (``words``
    casefolded, the auxiliary first).

    >>> is_polite_request("can you name a film".split()), is_polite_request("can you act".split())
    (True, False)
    """
    return words[1:2] == [POLITE_YOU] and words[2:3] != [] and words[2] in IMPERATIVES


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
#: filter words that make a four-digit figure a year even when no date word is said ("**after** 2009")
YEAR_FILTER_WORDS = frozenset(["after", "before", "since", "until", "in", "during", "prior to"])
#: number words after a figure: "150 million"
MULTIPLIERS = {"thousand": 1_000, "k": 1_000, "million": 1_000_000, "m": 1_000_000, "mn": 1_000_000,
               "billion": 1_000_000_000, "bn": 1_000_000_000, "trillion": 1_000_000_000_000}
#: a filter word, then a figure or an ISO date ("after **the year** 2009", "over **$**150"), a multiplier
#: word, and the word after (its unit): groups 1-4
FILTER_PATTERN = re.compile(
    r"\b(" + "|".join(sorted((re.escape(w) for w in FILTER_WORDS), key=len, reverse=True)) + r")\s+"
    r"(?:the\s+year\s+|\$\s*)?(\d[\d,]*(?:\.\d+)?|\d{4}-\d{2}-\d{2})(?:\s*(" + "|".join(MULTIPLIERS)
    + r")\b)?(?:\s+([a-z]+))?", re.IGNORECASE)
#: words that say a value is a date or a year, not a number
DATE_WORDS = frozenset(["born", "released", "founded", "died", "published", "date", "year", "when", "established",
                        "premiered", "opened", "built", "started"])
#: irregular past participles (regular ones end in -ed): "who was **born** in …" asks for a person
PARTICIPLES = frozenset(["born", "known", "written", "made", "shown", "given", "taken", "seen", "sung", "led",
                         "built", "founded", "shot", "set", "won", "held", "run", "drawn", "grown", "thrown",
                         "begun", "done", "gone", "sold", "told", "bought", "brought", "thought", "found", "kept"])

# --- hand-set weights of the offline strategy, each with why -------------------------------------------

#: rapidfuzz ratio a span must reach to count as a misspelt name (0.88: one typo in an 8-letter name)
FUZZY_CUTOFF = 0.88
#: spans compared fuzzily have at least this many characters (shorter words match too much by chance)
FUZZY_MIN_CHARS = 6
#: weight of a mention's prior (length, exactness, bracket hint) in the final score; a reading gets it
#: for every mention it uses, so a conjunction that explains both names beats a chain that ignores one
MENTION_WEIGHT = 0.1
#: runner-up paths within this score of the best become alternative tiers (near-ties are not guesses)
ALTERNATIVE_MARGIN = 0.05
#: a bare surname ("films by **Nolan**") links only when at most this many nodes' names end with it (more
#: is a common word or a family, not one person)
SURNAME_NODES = 3
#: a bare surname's match score: below an exact name (1.0), about a one-typo fuzzy match (0.88-0.95)
SURNAME_SCORE = 0.9
#: the score of the hop into a class-like value node that the question says only by naming the value
#: ("how many **forwards** are there": ``?x position Forward``); 0 = as good as a neutral word, so any
#: relation the question's own words say better still wins
IMPLIED_HOP = 0.0
#: how alike a relation's subjects and values must be for it to follow itself (parents/children/spouses
#: 0.5-1; years, genres, languages < 0.15)
SELF_CHAIN_MIN = 0.3


@dataclass
class ScoringSettings:
    """Knobs of offline path scoring, set by hand on English questions (KB-agnostic; see the README on
    improving relation labels instead).

    ``hop_cost``: the similarity a unit's span must exceed to pay for the unit, so
    paths grow a hop only when the question says that hop; ``centering``: how much
    of a span's mean similarity to *all* relations is subtracted (domain words such
    as "film" resemble every relation of a movie KB and so evidence none);
    ``backward_penalty``: a tie-breaker preferring hops read in the label's direction;
    ``max_span_words``: the longest question span one hop may be said by;
    ``order_penalty``: what a reading loses for each pair of hops said in the other order than its path;
    ``type_weight`` / ``type_margin``: how much the answer's type matching the question's focus counts,
    above the mean by this margin; ``chain_hop_cost``: the (lower) hop cost of a unit said by a link of a
    possessive chain ("X 's mother");
    ``round_trip_cue``: what a reading without a round trip loses when the question says "together",
    "same", "share", "co-" or "also"; ``class_weight``: how much the answer's node type counts on a
    typed KB (no typed benchmark KB here, so set by hand, below ``type_weight``); ``unsaid_verb``: what a
    reading loses when no hop is said by the main verb of a do-question ("what did X 's mother **die** of").
    """

    hop_cost: float = 0.2
    centering: float = 0.9
    backward_penalty: float = 0.01
    max_span_words: int = 3
    order_penalty: float = 0.15
    type_weight: float = 1.0
    type_margin: float = 0.2
    chain_hop_cost: float = 0.05
    round_trip_cue: float = 0.2
    class_weight: float = 0.5
    unsaid_verb: float = 0.2


# --- other languages' cue words (issue 37): data, one JSON file per language ----------------------------


@dataclass(frozen=True)
class ForeignCues:
    """A language's cue words for the offline reader, read as English (``sparqlqa/data/lang/<code>.json``):
    ``phrases`` (lower-case phrase → the English words it says), ``yes_no_markers`` (a question word-order
    that asks yes/no, e.g. French inversion), ``plural_endings`` (plural → singular endings, longest first)."""

    code: str
    name: str
    phrases: dict[str, str]
    yes_no_markers: tuple[str, ...] = ()
    plural_endings: tuple[tuple[str, str], ...] = ()


def foreign_cues(code: str) -> ForeignCues | None:
    """The cue words of language ``code`` (``"de"``), or ``None`` when there is no file for it.

    >>> foreign_cues("de").phrases["wie viele"], foreign_cues("xx") is None
    ('how many', True)
    """
    import json
    from importlib import resources

    if not re.fullmatch(r"[a-z]{2,3}", code):
        return None
    path = resources.files("sparqlqa") / "data" / "lang" / f"{code}.json"
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return ForeignCues(code, data["name"], dict(data["phrases"]), tuple(data.get("yes_no_markers", ())),
                       tuple((a, b) for a, b in data.get("plural_endings", ())))
# --- analytical questions over tables (strategies/offline/analytic.py) --------------------------------

#: aggregate words → SPARQL aggregate ("the **average** age", "**maximum** capacity")
AGGREGATE_WORDS = {"average": "AVG", "avg": "AVG", "mean": "AVG", "maximum": "MAX", "max": "MAX",
                   "minimum": "MIN", "min": "MIN", "total": "SUM", "sum": "SUM", "highest": "MAX",
                   "lowest": "MIN", "largest": "MAX", "smallest": "MIN", "biggest": "MAX", "greatest": "MAX"}
#: words that count ("how many", "number of", "count"): the words after them name what is counted
COUNT_WORDS: tuple[tuple[str, ...], ...] = (("how", "many"), ("number", "of"), ("count", "of"), ("count",),
                                           ("numbers", "of"))
#: words that group: "for **each** stadium", "**per** country", "in **every** year"
GROUP_WORDS = frozenset(["each", "per", "every"])
#: "distinct countries", "different types"
DISTINCT_WORDS = frozenset(["distinct", "different", "unique"])
#: superlative words with their direction: "the stadium **with the most** concerts", "the **youngest** singer"
SUPERLATIVE_WORDS = {"most": "DESC", "highest": "DESC", "largest": "DESC", "biggest": "DESC", "greatest": "DESC",
                     "maximum": "DESC", "max": "DESC", "least": "ASC", "fewest": "ASC", "lowest": "ASC",
                     "smallest": "ASC", "minimum": "ASC", "min": "ASC"}
#: superlatives that say the value they order by, by its word, and the direction ("youngest" = lowest age)
VALUE_SUPERLATIVES = {"youngest": ("age", "ASC"), "oldest": ("age", "DESC"), "heaviest": ("weight", "DESC"),
                      "lightest": ("weight", "ASC"), "earliest": ("year", "ASC"), "latest": ("year", "DESC"),
                      "tallest": ("height", "DESC"), "shortest": ("height", "ASC")}
#: words before "the" that make an aggregate word a superlative ("the model **with the** minimum horsepower")
SUPERLATIVE_LEADS = frozenset(["with", "has", "have", "had", "having", "of", "by"])
#: comparison phrases (as word tuples) → operator; the column is said next to them or by the word itself
COMPARISON_PHRASES: dict[tuple[str, ...], str] = {
    ("more", "than"): ">", ("greater", "than"): ">", ("larger", "than"): ">", ("bigger", "than"): ">",
    ("higher", "than"): ">", ("above",): ">", ("over",): ">", ("after",): ">", ("exceeding",): ">",
    ("at", "least"): ">=", ("no", "less", "than"): ">=", ("less", "than"): "<", ("fewer", "than"): "<",
    ("smaller", "than"): "<", ("lower", "than"): "<", ("below",): "<", ("under",): "<", ("before",): "<",
    ("at", "most"): "<=", ("no", "more", "than"): "<=", ("older", "than"): ">", ("younger", "than"): "<",
    ("heavier", "than"): ">", ("lighter", "than"): "<", ("equal", "to"): "=", ("between",): "between",
}
#: comparatives that say the column they compare by its word ("**older** than 1": age)
COMPARISON_COLUMNS = {"older": "age", "younger": "age", "heavier": "weight", "lighter": "weight",
                      "taller": "height", "before": "year", "after": "year", "in": "year"}
#: the definite article, skipped before a cue word's noun ("above **the** average age", "with **the** most")
ARTICLE = "the"
#: words that join cue words, numbers or values in a list ("average **and** maximum age", "2014 **or** 2015")
LIST_JOINERS = frozenset(["and", "or"])
#: words between a group word and its noun ("for each **of** …", "per **the** …")
GROUP_SKIPS = frozenset(["the", "of"])
#: words after which a number word names no number ("each **one**", "which one")
NOT_NUMBER_AFTER = frozenset(["each", "every", "per", "the", "which"])
#: the word that makes a superlative word a comparison ("**at** least 3")
AT_WORD = "at"
#: the word before a number that limits the rows ("the **top** 3")
LIMIT_WORD = "top"
#: the word before a number that says it is a year ("in the **year** 2014")
YEAR_WORD = "year"
#: words that negate a link: "stadiums **without** any concert", "countries with **no** car maker"
NEGATION_WORDS = (("without",), ("with", "no"), ("have", "no"), ("has", "no"), ("not", "have"),
                  ("not", "own"), ("no",), ("except",), ("not",))
#: words that say "the average" a value is compared with ("older than **average**")
AVERAGE_WORDS = frozenset(["average", "avg", "mean"])
#: words a table's name ends with that say nothing of what its rows are ("cars_data", "car_names",
#: "model_list"): such a table is said by its first word ("cars")
GENERIC_TABLE_WORDS = frozenset(["name", "data", "datum", "info", "information", "list", "detail", "record",
                                 "table", "entry"])
#: column names that name a table's rows outright, then titles, then the endings of other naming columns
#: (kb/data_names.py: a graph mapped from tables names its nodes by such a column)
NAME_COLUMNS = frozenset(["name", "fullname", "full_name"])
TITLE_COLUMNS = frozenset(["title", "label"])
NAME_COLUMN_ENDINGS = ("name", "title", "label")
#: endings of a column that identifies rows (``id``, ``stuid``, ``country_code``)
KEY_COLUMN_ENDINGS = ("id", "code")
#: known words a compact column name may end with (``fname``, ``stuid``, ``pettype``)
COMPACT_TAILS = ("name", "id", "type", "code", "age", "date", "year")


def name_column_rank(column: str, table: str, head: str) -> int | None:
    """How clearly a column's name says it names the rows of ``table`` (its singular; ``head``: the table's
    first word when the rest says nothing, ``car_names`` → ``car``): 0 best, None when it does not.

    >>> [name_column_rank(c, "singer", "singer") for c in ("name", "singer_name", "title", "nickname", "age")]
    [0, 1, 2, 3, None]
    """
    if column in NAME_COLUMNS:
        return 0
    if column in (f"{table}_name", f"{table}name") or name_singular(column) in (table, head):
        return 1
    if column in TITLE_COLUMNS:
        return 2
    if column.endswith(NAME_COLUMN_ENDINGS) and not column.endswith("_id"):
        return 3
    return None


#: words that ask for a node's name ("the **name** of the stadium"): its naming column
NAME_WORDS = frozenset(["name", "names"])
#: small numbers said in words ("more than **one** pet")
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                "ten": 10, "zero": 0}
#: words that order a list: "ordered by age", "in descending order of age"
ORDER_CUES = frozenset(["order", "ordered", "sorted", "sort", "descending", "ascending"])
DESCENDING_WORDS = frozenset(["descending", "desc", "decreasing", "oldest"])
#: "the top 3 …", "the 5 oldest …": a limit before a superlative
TOP_WORDS = frozenset(["top", "first"])
#: words of an analytical question that carry no content of their own (left out when checking that a
#: reading explains the question)
TABLE_FILLER = frozenset(
    """show list find give return tell what which who whose how are is was were the a an of for in on at by to
    from with all every each do does did we have has had there their its it and or as that this those these
    there be been being any some ever exist exists listed also along what's number numbers
    many much different distinct them they respectively whole total please""".split())  # noqa: SIM905
