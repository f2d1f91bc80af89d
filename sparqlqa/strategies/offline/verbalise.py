"""How a relation can be said: texts from the ontology alone (label, aliases, comment, split name) and
the word forms a question uses for them, by plain English morphology (no lexicon, no KB-specific list).

A name such as ``starred_actors`` is said "starred actors", but questions say "who **acted** in X"
or "the **director** of X".  So a name also yields

- the noun for its value: ``has genre`` → "genre", ``release year`` → "year" (not "actors" from
  "starred actors": a participle leads that name, and "actors" alone resembles "films" too much);
- who does it, for a passive ``<verb>ed by``: ``directed by`` → "director";
- the verb behind an agent noun: "actors" → "act", "acted"; "director" → "direct", "directed".

The embedding model ignores a form that is not quite a word ("directer"), so forms are offered freely.

>>> relation_word_forms("starred actors")
['act', 'acted']
>>> relation_word_forms("directed by")
['directer', 'director', 'direct', 'directed']
>>> relation_word_forms("plays for country"), relation_word_forms("place of birth")
(['country'], [])
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sparqlqa.english import FUNCTION_WORDS, INVERSE_SUFFIX, PARTICIPLE, VALUE_PREPOSITIONS
from sparqlqa.kb.schema import RelationInfo, Schema, humanize, local_name

__all__ = ["category_texts", "inverse_twins", "relation_texts", "relation_word_forms", "round_trip_texts"]


def relation_texts(info: RelationInfo) -> list[str]:
    """How a relation can be said: its label, its aliases, its comment (first sentence), its split
    name, and the word forms of those (:func:`relation_word_forms`)."""
    texts = [info.label, *info.aliases, humanize(local_name(info.iri))]
    texts += [_without_auxiliary(t) for t in texts]
    texts += [form for t in list(texts) for form in relation_word_forms(t)]
    if info.comment:
        texts.append(info.comment.split(". ")[0].strip().rstrip("."))
    return list(dict.fromkeys(t.strip() for t in texts if t and t.strip()))


def relation_word_forms(text: str) -> list[str]:
    """Single words a question may use for a relation named ``text`` (see the module doc)."""
    words = text.strip().casefold().split()
    forms: list[str] = []
    if len(words) == 2 and words[1] == "by" and PARTICIPLE.fullmatch(words[0]):
        forms += agent_nouns(text)
    elif len(words) >= 2 and not FUNCTION_WORDS & set(words) and not PARTICIPLE.fullmatch(words[0]):
        forms.append(words[-1])  # "release year" → "year" (but "starred actors" ↛ "actors", which
        # resembles "films" as much as "actors")
    elif len(words) == 3 and words[1] in VALUE_PREPOSITIONS and not FUNCTION_WORDS & {words[0], words[2]}:
        forms.append(words[2])  # "plays in club" → "club", "plays for country" → "country"
    forms += [verb for word in [*words, *forms] for verb in agent_verbs(word)]
    return list(dict.fromkeys(f for f in forms if f not in FUNCTION_WORDS and f != text.strip().casefold()))


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


def _without_auxiliary(text: str) -> str:
    """``has genre`` → ``genre``, ``is part of`` → ``part of``: the noun a question uses for the value."""
    head, _, rest = text.partition(" ")
    return rest if head.casefold() in ("has", "have", "is", "in") and rest else text


def _is_verb(text: str, texts: Sequence[str]) -> bool:
    """"starred", "directed by", or the verb of an agent noun among ``texts`` ("acted" beside "actors")."""
    if text.endswith(("ed", " by")) or f"{text} by" in texts:
        return True
    return any(text in agent_verbs(word) for other in texts for word in other.split())


def category_texts(texts: Sequence[str], noun: str) -> list[str]:
    """How a relation reads as a category of ``noun`` ("what kind of **film** …"): "<value noun> of
    <noun>", for the texts of ``texts`` that are not verbs.

    >>> category_texts(["has genre", "genre", "directed by", "director"], "film")
    ['has genre of film', 'genre of film', 'director of film']
    """
    nouns = [t for t in texts if not _is_verb(t, texts)] or list(texts)
    return [f"{t} of {noun}" for t in nouns]


def round_trip_texts(texts: Sequence[str], forward_first: bool) -> list[str]:
    """Two hops along one relation, out and back, say "the same <label>" (X -r-> y <-r- z: z shares
    X's r) or "<verb> together with" / "co-<noun>" (X <-r- y -r-> z: z is a co-<r> of X).

    >>> round_trip_texts(["written by", "writer"], forward_first=False)
    ['written together with', 'writer together with', 'co-writer']
    """
    verbs = [t for t in texts if _is_verb(t, texts)]
    nouns = [t for t in texts if t not in verbs]
    if forward_first:  # a relation said only by verbs ("is aged") still has a "same ..." reading
        return [form.format(t) for t in nouns or texts for form in ("same {}", "share {}")]
    together = [f"{t.removesuffix(' by')} together with" for t in [*verbs, *nouns]]
    return list(dict.fromkeys([*together, *(f"co-{t}" for t in nouns)]))


#: how a delimited KB names the reverse twin of relation ``r`` (``r_inverse``, ``r_reverse``)


def inverse_twins(schema: Schema) -> dict[str, str]:
    """Relations that only restate another one backwards, by name: ``plays_in_club_inverse`` → the
    IRI of ``plays_in_club``, when the KB has both and as many edges of each.  A path along the twin
    is a path backwards along the original, so the twin is not walked (nor scored as "inverse").

    >>> from sparqlqa.kb.schema import RelationInfo, Schema
    >>> rels = [RelationInfo(f"https://x/relation/{n}", n, 3) for n in ("aged", "aged_inverse", "sibling_inv")]
    >>> inverse_twins(Schema(relations=rels))
    {'https://x/relation/aged_inverse': 'https://x/relation/aged'}
    """
    by_iri = {r.iri: r for r in schema.object_relations}
    twins: dict[str, str] = {}
    for relation in by_iri.values():
        base = INVERSE_SUFFIX.sub("", relation.iri)
        original = by_iri.get(base)
        if base != relation.iri and original is not None and original.count == relation.count:
            twins[relation.iri] = original.iri
    return twins
