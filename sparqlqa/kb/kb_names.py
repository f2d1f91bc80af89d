"""KB names: what a KB's name may be (:func:`validate_kb_name`) and the one spelling of a KB or KB group name
(:func:`canonical_kb_name`), applied once where a name enters: the CLI's ``KB_NAME`` type,
:func:`~sparqlqa.kb.knowledge_base.open_kb` (and so :func:`sparqlqa.ask`), ``serve``'s and ``mcp``'s request
checks.  Below that edge every cache, lock and query worker is keyed on the canonical name.
"""

from __future__ import annotations

__all__ = ["GROUP_SEPARATOR", "canonical_kb_name", "validate_kb_name"]

import re

from sparqlqa.errors import GroupError, InvalidKBName

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def validate_kb_name(name: str) -> str:
    """KB names are short file-name-safe words: letters, digits, ``_ . -``."""
    if not _NAME.match(name) or name in (".", ".."):
        raise InvalidKBName(
            f"invalid knowledge base name {name!r}",
            hint="use 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit",
        )
    return name


#: joins the members of an ad hoc KB group: ``films+people`` (:mod:`sparqlqa.kb.groups`)
GROUP_SEPARATOR = "+"


def canonical_kb_name(name: str) -> str:
    """The one spelling of a KB (or KB group) name, applied where a name enters (CLI, :func:`open_kb`,
    ``serve``/``mcp`` requests): every cache, lock and query worker is keyed on it.  Whitespace around
    the name and its members goes, a member named twice counts once, and a group's members are sorted
    (a group is the RDF merge of a *set* of KBs: its cached generation, ``kbs/.groups/<members>/``, and
    everything in it, base IRI and prefixes included, come from the members in this order).

    :class:`InvalidKBName` for a malformed name or member, :class:`GroupError` for a group of fewer than
    two different KBs.

    >>> canonical_kb_name(" tiny +movies+ movies")
    'movies+tiny'
    >>> canonical_kb_name(" movies ")
    'movies'
    """
    name = name.strip()
    if GROUP_SEPARATOR not in name:
        return validate_kb_name(name)
    members = [part.strip() for part in name.split(GROUP_SEPARATOR)]
    for member in members:
        if not member:
            raise InvalidKBName(f"invalid knowledge base group {name!r}: an empty member name",
                                hint="join two or more KB names with '+', as in 'films+people'")
        validate_kb_name(member)
    unique = sorted(set(members))
    if len(unique) < 2:
        raise GroupError(f"a KB group needs two or more member KBs; {name!r} has {len(unique)}",
                         hint="join two or more KB names with '+', as in 'films+people'")
    return GROUP_SEPARATOR.join(unique)
