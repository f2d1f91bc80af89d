"""The question's language (issue 37): detected, or given by the asker, and the scope that names nodes in it.

Detection is ``py3langid`` restricted to :data:`LANGUAGES` (measured in ``benchmarks/bench_langdetect.py``
on 100 short questions: 97 right restricted, 88 over all its 97 languages, 98 with the two rules below;
``lingua-language-detector`` restricted to the same languages got 96 but held ~570 MB and took seconds
per first question; its low accuracy mode got 78).  The model loads lazily on the first question that
needs it (~1 s, ~100 MB): a question whose words, names left out, are mostly English function words is
English without it ("When was Erik Solberg born?" would be Dutch to the model), and a
low-confidence guess stays English (short English questions are the common case, and English prompts
stay byte-identical).

>>> resolve_language("Which films did Nolan direct?", None).code
'en'
>>> resolve_language("anything", "DE").to_dict()
{'code': 'de', 'source': 'given'}
"""

from __future__ import annotations

__all__ = ["LANGUAGES", "Language", "asked_in", "current_language", "detect_language", "in_kb_language",
           "language_name", "prompt_note", "resolve_language"]

import contextvars
import functools
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sparqlqa.errors import ConfigError, MissingExtraError

#: the languages detection chooses among (ISO 639-1): Europe's large languages, the big Asian ones, Arabic,
#: Hebrew, Hindi, Swahili.  Restricting the set is what makes short questions reliable (97 vs 88 of 100)
LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "nl", "pl", "sv", "da", "no", "fi", "cs", "ro", "hu", "el",
             "tr", "ru", "uk", "ar", "he", "hi", "zh", "ja", "ko", "id", "vi", "sw", "ca")
#: English names of languages, for prompts ("The question is in German")
NAMES = {"en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian", "pt": "Portuguese",
         "nl": "Dutch", "pl": "Polish", "sv": "Swedish", "da": "Danish", "no": "Norwegian", "nb": "Norwegian",
         "fi": "Finnish", "cs": "Czech", "ro": "Romanian", "hu": "Hungarian", "el": "Greek", "tr": "Turkish",
         "ru": "Russian", "uk": "Ukrainian", "ar": "Arabic", "he": "Hebrew", "hi": "Hindi", "zh": "Chinese",
         "ja": "Japanese", "ko": "Korean", "id": "Indonesian", "vi": "Vietnamese", "sw": "Swahili", "ca": "Catalan"}
#: below this probability a guess is not trusted and the question counts as English (0.3 let 18 of 5,000
#: MetaQA/PathQuestion questions pass as Catalan or Dutch at 0.31-0.33: "claudius 's parent 's sex ?")
MIN_CONFIDENCE = 0.5
#: words that make a question English without the model when at least half its words are among them
#: (``s``: the possessive ``'s``)
_ENGLISH_WORDS = frozenset("""a an the of in on at to for from by with is are was were be been has have had do
    does did what which who whom whose when where why how many much most least more than and or not it its
    that this these those there list name show give tell all any each every s""".split())  # noqa: SIM905
_WORD = re.compile(r"[^\W\d_]+")
_TAG = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*")
_INSTALL = "pip install py3langid"


@dataclass(frozen=True)
class Language:
    """The question's language: its ISO 639-1 ``code`` and where it came from (``detected`` | ``given``)."""

    code: str
    source: str = "detected"

    @property
    def name(self) -> str:
        return language_name(self.code)

    @property
    def english(self) -> bool:
        return self.code == "en"

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "source": self.source}


def language_name(code: str | None) -> str:
    """``"de"`` → ``"German"`` (the code itself for a language without a name here)."""
    base = (code or "").lower().split("-")[0]
    return NAMES.get(base, base or "unknown")


def _normalise_tag(tag: str) -> str:
    """A language tag as given (``"DE"``, ``"pt-BR"``) → its primary subtag, or :class:`ConfigError`."""
    cleaned = tag.strip()
    if not _TAG.fullmatch(cleaned):
        raise ConfigError(f"{tag!r} is not a language tag", hint="give an ISO 639-1 code such as en, de, fr, es")
    return cleaned.lower().split("-")[0]


def resolve_language(question: str, given: str | None) -> Language:
    """The asker's ``given`` language, else the one detected in ``question``."""
    if given:
        return Language(_normalise_tag(given), "given")
    return Language(detect_language(question), "detected")


def detect_language(text: str) -> str:
    """The ISO 639-1 code of ``text``'s language (``"en"`` when unsure)."""
    # names say nothing of the language: capitalised words after the first, and identifiers (``claudius_i``)
    found = _WORD.findall(" ".join(token for token in text.split() if "_" not in token))
    words = [w.lower() for at, w in enumerate(found) if at == 0 or not w[:1].isupper()]
    if not words or 2 * sum(w in _ENGLISH_WORDS for w in words) >= len(words):
        return "en"
    code, probability = _identifier().classify(text)
    return "en" if probability < MIN_CONFIDENCE else str(code)


_LOCK = threading.Lock()


def _identifier() -> Any:
    """py3langid's identifier over :data:`LANGUAGES`, loaded once per process (threads wait for the first load)."""
    with _LOCK:
        return _load_identifier()


@functools.cache
def _load_identifier() -> Any:
    """The identifier, loaded on the first call (a missing extra is not remembered: it is asked for again)."""
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier
    except ImportError as exc:
        raise MissingExtraError("py3langid", "detecting the question's language (or give it: --lang de)",
                                _INSTALL) from exc
    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(list(LANGUAGES))
    return identifier


# -- the asker's language while a question is answered ------------------------------------------------------

_ASKED_IN: contextvars.ContextVar[tuple[str | None, str | None]] = contextvars.ContextVar(
    "sparqlqa_asked_in", default=(None, None))


def current_language() -> str | None:
    """The language the question being answered was asked in (``None`` outside :func:`asked_in`)."""
    return _ASKED_IN.get()[0]


@contextmanager
def asked_in(code: str | None, names: str | None = None) -> Iterator[None]:
    """Name nodes in ``code`` first while the question is answered (``kb/node_text.py`` reads it);
    ``names``: the language the KB names things in (``None``: untagged), which prompts mention."""
    token = _ASKED_IN.set((code, names))
    try:
        yield
    finally:
        _ASKED_IN.reset(token)


@contextmanager
def in_kb_language() -> Iterator[None]:
    """Name nodes as the KB does (not in the asker's language): the texts a cross-lingual reranker reads."""
    with asked_in(None, _ASKED_IN.get()[1]):
        yield


def prompt_note(*, texts: bool = False) -> str:
    """The line an LLM prompt adds when the question or the KB's names are not English (issue 37); ``""``
    for an English question over English or untagged names, so those prompts stay byte-identical.
    ``texts``: for a reranker, which reads the candidates' texts in the KB's language.

    >>> with asked_in("de", "en"):
    ...     prompt_note()[:60]
    'The question is in German; the knowledge base names things i'
    >>> with asked_in("en", None):
    ...     prompt_note()
    ''
    """
    asked, names = _ASKED_IN.get()
    if (asked or "en") == "en" and (names or "en") == "en":
        return ""
    question = language_name(asked or "en")
    kb = language_name(names) if names else "English or untagged text"
    if texts:
        return (f"The question is in {question}; the candidates' texts are in {kb}, the knowledge base's "
                "language. Judge them across languages: a candidate answers the question whatever its language.")
    return (f"The question is in {question}; the knowledge base names things in {kb}. Names of things may be "
            "written in either language (both are looked up); relation and type names as the knowledge base "
            "writes them.")
