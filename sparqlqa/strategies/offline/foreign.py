"""Questions in other languages, read by the English offline reader (issue 37).

The offline reader knows English.  For a language with cue words (``sparqlqa/data/lang/<code>.json``,
:func:`sparqlqa.english.foreign_cues`) a question is read word by word as English: the cue phrases become
the English words they say ("wie viele" → "how many"), the KB's own names for its types and relations in
that language become the names the schema reads ("Einwohnerzahl" → "population", "Städte" → "city"),
and every other word (the names of things) stays as written; names link in any language through the
label index.  A language without cue words is not guessed at: :func:`unreadable_note` says so.

>>> from sparqlqa.english import foreign_cues
>>> as_english("Wie viele Städte gibt es in Spanien?", foreign_cues("de"), {"stadt": "city"})
'how many city are there in Spanien ?'
>>> as_english("Rome est-elle la capitale de l'Italie ?", foreign_cues("fr"), {"capitale": "capital"})
'is Rome the capital of the Italie ?'
"""

from __future__ import annotations

__all__ = ["as_english", "kb_words", "read_as_english", "unreadable_note"]

import re
import unicodedata

from pyoxigraph import Literal, NamedNode

from sparqlqa.english import WH_WORDS, ForeignCues, foreign_cues
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.labels import normalize_label
from sparqlqa.kb.vocab import RDFS
from sparqlqa.language import language_name
from sparqlqa.query.built_query import BuiltQuery

#: words, elided articles ("l'", "d'") and hyphenated words ("a-t-il") as tokens; anything else one by one
_TOKEN = re.compile(r"[^\W\d_]+['’]|\w+(?:-\w+)*|[^\w\s]")
#: the most words one cue phrase or KB name may span
MAX_PHRASE_WORDS = 4
#: question openings that are not yes/no even with an inversion marker ("how many … y a-t-il")
_ASKING = frozenset(WH_WORDS | {"how", "are", "is"})


def unreadable_note(code: str) -> str:
    """What the offline answer says to a question in a language it has no cue words for."""
    return (f"the offline strategy reads questions in English, German, French and Spanish; this one is in "
            f"{language_name(code)} ({code}): ask with an LLM (--llm SPEC, e.g. --strategy 4step or text2sparql), "
            f"or ask in one of those languages (--lang overrides detection)")


def read_as_english(question: str, code: str, kb: KnowledgeBase) -> str | None:
    """``question`` (in language ``code``) as the English reader should see it; ``None``: no cue words."""
    cues = foreign_cues(code)
    if cues is None:
        return None
    words = kb.remember(f"offline kb words {code}", lambda: kb_words(kb, code, cues))
    return as_english(question, cues, words)


def _fold(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text.casefold()) if not unicodedata.combining(c))


def _singular(word: str, cues: ForeignCues) -> str:
    for plural, single in cues.plural_endings:
        if word.endswith(plural) and len(word) - len(plural) >= 3:
            return word[: len(word) - len(plural)] + single
    return word


def kb_words(kb: KnowledgeBase, code: str, cues: ForeignCues) -> dict[str, str]:
    """The KB's names in language ``code`` for its types and relations → the label the schema reads them by
    (folded lower case; a plural's singular as well)."""
    named = {rel.iri: rel.label for rel in kb.schema.relations} | {t.iri: t.label for t in kb.schema.types}
    if not named:
        return {}
    values = " ".join(str(NamedNode(iri)) for iri in named)
    query = f"SELECT ?s ?l WHERE {{ VALUES ?s {{ {values} }} ?s {RDFS.label} ?l }}"
    words: dict[str, str] = {}
    for subject, label in kb.query(BuiltQuery.select(query)).rows:
        tag = label.language if isinstance(label, Literal) else None
        if isinstance(subject, NamedNode) and isinstance(label, Literal) and (tag or "").split("-")[0].lower() == code:
            key = _fold(normalize_label(label.value))
            if key and named.get(subject.value):
                words.setdefault(key, named[subject.value])
    return words


def as_english(question: str, cues: ForeignCues, words: dict[str, str]) -> str:
    """The question with its cue phrases and KB words replaced by English (longest phrase first)."""
    phrases = {k.casefold(): v for k, v in cues.phrases.items()}
    tokens = _TOKEN.findall(question.replace("¿", " ").replace("¡", " "))
    marked = any(t.casefold() in cues.yes_no_markers for t in tokens) or any(
        m in question.casefold() for m in cues.yes_no_markers if " " in m)
    out: list[str] = []
    at = 0
    while at < len(tokens):
        size, said = _match(tokens, at, phrases, words, cues)
        if size:
            out.extend(w for w in said.split() if w)
            at += size
        else:
            marker = tokens[at].casefold() in cues.yes_no_markers
            out.extend([] if marker else [tokens[at]])
            at += 1
    if marked and out and out[0].casefold() not in _ASKING:
        out.insert(0, "is")
    return " ".join(out)


def _match(tokens: list[str], at: int, phrases: dict[str, str], words: dict[str, str],
           cues: ForeignCues) -> tuple[int, str]:
    """The longest phrase or KB word starting at token ``at``: (tokens it spans, its English), or (0, "")."""
    for size in range(min(MAX_PHRASE_WORDS, len(tokens) - at), 0, -1):
        said = " ".join(tokens[at:at + size]).replace("' ", "'").replace("’", "'").casefold()
        if said in phrases:
            return size, phrases[said]
        text = _fold(said)
        if text in words:
            return size, words[text]
        single = _singular(text, cues) if size == 1 else text
        if single in words:
            return size, words[single]
    return 0, ""
