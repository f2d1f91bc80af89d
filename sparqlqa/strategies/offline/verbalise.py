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

__all__ = ["category_texts", "inverse_twins", "relation_texts", "relation_word_forms", "round_trip_texts"]

from collections.abc import Sequence

from sparqlqa.english import (
    FUNCTION_WORDS,
    INVERSE_SUFFIX,
    PARTICIPLE,
    VALUE_PREPOSITIONS,
    agent_nouns,
    agent_verbs,
    category_phrase,
    co_phrase,
    is_passive,
    same_phrases,
    says_verb,
    together_phrase,
    without_auxiliary,
)
from sparqlqa.kb.schema import RelationInfo, Schema, humanize, local_name


def relation_texts(info: RelationInfo) -> list[str]:
    """How a relation can be said: its label, its aliases, its comment (first sentence), its split
    name, and the word forms of those (:func:`relation_word_forms`)."""
    texts = [info.label, *info.aliases, humanize(local_name(info.iri))]
    texts += [without_auxiliary(t) for t in texts]
    texts += [form for t in list(texts) for form in relation_word_forms(t)]
    if info.comment:
        texts.append(info.comment.split(". ")[0].strip().rstrip("."))
    return list(dict.fromkeys(t.strip() for t in texts if t and t.strip()))


def relation_word_forms(text: str) -> list[str]:
    """Single words a question may use for a relation named ``text`` (see the module doc)."""
    words = text.strip().casefold().split()
    forms: list[str] = []
    if is_passive(words):
        forms += agent_nouns(text)
    elif len(words) >= 2 and not FUNCTION_WORDS & set(words) and not PARTICIPLE.fullmatch(words[0]):
        forms.append(words[-1])  # "release year" → "year" (but "starred actors" ↛ "actors", which
        # resembles "films" as much as "actors")
    elif len(words) == 3 and words[1] in VALUE_PREPOSITIONS and not FUNCTION_WORDS & {words[0], words[2]}:
        forms.append(words[2])  # "plays in club" → "club", "plays for country" → "country"
    forms += [verb for word in [*words, *forms] for verb in agent_verbs(word)]
    return list(dict.fromkeys(f for f in forms if f not in FUNCTION_WORDS and f != text.strip().casefold()))


def category_texts(texts: Sequence[str], noun: str) -> list[str]:
    """How a relation reads as a category of ``noun`` ("what kind of **film** …"): "<value noun> of
    <noun>", for the texts of ``texts`` that are not verbs.

    >>> category_texts(["has genre", "genre", "directed by", "director"], "film")
    ['has genre of film', 'genre of film', 'director of film']
    """
    nouns = [t for t in texts if not says_verb(t, texts)] or list(texts)
    return [category_phrase(t, noun) for t in nouns]


def round_trip_texts(texts: Sequence[str], forward_first: bool) -> list[str]:
    """Two hops along one relation, out and back, say "the same <label>" (X -r-> y <-r- z: z shares
    X's r) or "<verb> together with" / "co-<noun>" (X <-r- y -r-> z: z is a co-<r> of X).

    >>> round_trip_texts(["written by", "writer"], forward_first=False)
    ['written together with', 'writer together with', 'co-writer']
    """
    verbs = [t for t in texts if says_verb(t, texts)]
    nouns = [t for t in texts if t not in verbs]
    if forward_first:  # a relation said only by verbs ("is aged") still has a "same ..." reading
        return [phrase for t in nouns or texts for phrase in same_phrases(t)]
    together = [together_phrase(t) for t in [*verbs, *nouns]]
    return list(dict.fromkeys([*together, *(co_phrase(t) for t in nouns)]))


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
