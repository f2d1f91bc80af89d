"""The schema section of the triplet prompt: the KB's types and relations as text, within a token budget.

Rendering the schema for an LLM is part of stage 1 (:mod:`sparqlqa.stages.triplets`); the schema itself
(:mod:`sparqlqa.kb.schema`) only describes the KB.  When the relations do not all fit, the ones the
question names come first, then the closest by embedding similarity plus word overlap.
"""

from __future__ import annotations

__all__ = ["SCHEMA_PROMPT_TOKENS", "schema_prompt"]

from typing import Any

from sparqlqa.kb.schema import (
    INVERSE_NAME,
    RelationInfo,
    Schema,
    cached_local_name,
    folded_inverses,
    name_phrase,
    name_words,
    relation_names,
)
from sparqlqa.llm.pricing import CHARS_PER_TOKEN, estimate_tokens
from sparqlqa.vectors.index import embed_query  # its per-process cache: ranking reuses the question's vector

#: token budget of the schema section of the triplet prompt (tokens estimated at 4 characters each)
SCHEMA_PROMPT_TOKENS = 1500
#: weight of word overlap (the share of a relation's words the question uses) beside embedding similarity
LEXICAL_WEIGHT = 0.5


def _relation_text(rel: RelationInfo, name: str | None = None) -> str:
    return "; ".join([name or rel.label, *rel.aliases[:3]])


def _similarities(question: str, relations: list[RelationInfo], embedder: Any | None,
                  names: dict[str, str]) -> list[float]:
    """Cosine similarity of ``question`` to each relation's (shown) name and aliases (0 without an embedder)."""
    if embedder is None or not relations:
        return [0.0] * len(relations)
    texts = tuple(_relation_text(rel, names.get(rel.iri)) for rel in relations)
    vectors = embedder.embed_cached(texts)  # relation texts recur with every question on a KB
    return [float(x) for x in vectors @ embed_query(embedder, question)]


def _named_in(question: str, rel: RelationInfo) -> bool:
    """Whether ``question`` says the relation's label, local name or an alias as a phrase.

    >>> _named_in("which player plays_for_country Italy ?", RelationInfo("http://x/plays_for_country", "x", 1))
    True
    """
    said = f" {name_phrase(question)} "
    return any(name_words(name) and f" {name_phrase(name)} " in said
               for name in (rel.label, cached_local_name(rel.iri), *rel.aliases))


def _relevant_relations(question: str, relations: list[RelationInfo], embedder: Any | None = None,
                       names: dict[str, str] | None = None) -> list[tuple[RelationInfo, bool]]:
    """``relations`` by relevance to ``question``: those it names first (flag True), then by embedding
    similarity + :data:`LEXICAL_WEIGHT` × word overlap (of the shown ``names``, where given), then by
    frequency."""
    names = names or {}
    sims = _similarities(question, relations, embedder, names)
    asked = name_words(question)
    keys = []
    for number, rel in enumerate(relations):
        words = name_words(_relation_text(rel, names.get(rel.iri)))
        overlap = len(words & asked) / len(words) if words else 0.0
        keys.append((not _named_in(question, rel), -(sims[number] + LEXICAL_WEIGHT * overlap), -rel.count, number))
    keys.sort()
    return [(relations[key[3]], not key[0]) for key in keys]


def _relation_line(rel: RelationInfo, schema: Schema, typed: bool, reverse: RelationInfo | None,
                   names: dict[str, str]) -> str:
    """``- name (also: …): domain → range`` (``→ value`` for a value relation, its subjects' types from the
    data); ``names``: :func:`~sparqlqa.kb.schema.relation_names` (two relations labelled alike differ)."""
    aliases = f" (also: {', '.join(rel.aliases[:3])})" if rel.aliases else ""
    aliases += f" [in {', '.join(rel.kbs)}]" if rel.kbs else ""  # a KB group: the member KBs that hold it
    other = f" (reverse: {names.get(reverse.iri, reverse.label)})" if reverse is not None and not \
        INVERSE_NAME.fullmatch(cached_local_name(reverse.iri)) else ""
    name = names.get(rel.iri, rel.label)
    if not typed:  # the heading states the direction of every line: "head <relation> tail"
        return f"- {name}{aliases}{other}" + (" → value" if rel.kind == "literal" else "")
    pairs = [(d, r) for d, r, _ in rel.pairs[:2]] or [(rel.domain, rel.range)]
    if rel.kind == "literal":
        domains = list(dict.fromkeys(d for d, _ in pairs)) if rel.pairs else [rel.domain]
        shapes = "; ".join(f"{_type_name(schema, d)} → value" for d in domains)
    else:
        shapes = "; ".join(f"{_type_name(schema, d)} → {_type_name(schema, r)}" for d, r in pairs)
    return f"- {name}{aliases}{other}: {shapes}"


def _type_name(schema: Schema, iri: str | None) -> str:
    """A type's label; "any" where the data's nodes have no type (never a "?", which reads as a variable)."""
    return schema.type_label(iri) if iri else "any"


def _type_line(schema: Schema, budget_tokens: int) -> str:
    names: list[str] = []
    for number, info in enumerate(schema.types):
        if estimate_tokens(", ".join([*names, info.label])) > budget_tokens:
            names.append(f"… {len(schema.types) - number} more")
            break
        names.append(info.label)
    return f"Node types: {', '.join(names)}"


def schema_prompt(schema: Schema, question: str = "", *, budget_tokens: int = SCHEMA_PROMPT_TOKENS,
                  embedder: Any | None = None) -> str:
    """The schema section of the triplet prompt, within ``budget_tokens`` (estimated) tokens.

    Node types and the ``head type → tail type`` shapes are left out when the KB has one type or
    none; a relation that only reverses another (``X_inverse``, ``owl:inverseOf``) is folded into
    it.  When every relation fits they are listed most frequent first; otherwise the ones most
    relevant to ``question`` (:func:`_relevant_relations`; those it names always), and a last line
    says how many were left out.

    >>> from sparqlqa.kb.schema import TypeInfo
    >>> s = Schema(types=[TypeInfo("http://x/Movie", "movie", 9)],
    ...            relations=[RelationInfo("http://x/d", "directed by", 9, pairs=[("http://x/Movie", None, 9)])])
    >>> print(schema_prompt(s))
    Relations (each read head → tail, "head <relation> tail"):
    - directed by
    """
    folded = folded_inverses(schema)
    by_iri = {rel.iri: rel for rel in schema.relations}
    reverse = {kept: by_iri[dropped] for dropped, kept in folded.items()}
    typed = len(schema.types) > 1
    lines = [_type_line(schema, budget_tokens // 3)] if typed else []
    lines.append("Relations (head type → tail type):" if typed else
                 'Relations (each read head → tail, "head <relation> tail"):')
    if folded:
        example = by_iri[next(iter(folded))].label
        lines.append(f"({len(folded)} of them are also stored reversed, e.g. '{example}': write them in the "
                     "listed direction)")
    shown = [rel for rel in schema.relations if rel.iri not in folded]
    names = relation_names(schema)
    body = [_relation_line(rel, schema, typed, reverse.get(rel.iri), names) for rel in shown]
    room = budget_tokens * CHARS_PER_TOKEN - len("\n".join(lines))  # characters, as estimate_tokens counts
    if sum(len(line) + 1 for line in body) <= room:
        lines += body or ['- (none declared: use "any")']
        return "\n".join(lines)
    room -= 70  # the closing "… N more relations not shown" line
    picked = 0
    for rel, named in _relevant_relations(question, shown, embedder, names):
        line = _relation_line(rel, schema, typed, reverse.get(rel.iri), names)
        if len(line) + 1 > room and not named:
            break
        lines.append(line)
        room -= len(line) + 1
        picked += 1
    lines.append(f'- … {len(shown) - picked} more relations not shown (use "any" if none fits)')
    return "\n".join(lines)
