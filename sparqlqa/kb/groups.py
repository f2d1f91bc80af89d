"""Saved KB groups: a name for a list of member KBs (``sparqlqa kbs group add films-people films people``).

A group is asked like one KB (:mod:`sparqlqa.kb.group`); it is written either ad hoc as its members joined
by ``+`` (``films+people``) or by the name it was saved under.  Saved groups live in one file,
``$SPARQLQA_HOME/groups.json`` (``{"groups": {NAME: [member, ...]}}``), replaced atomically under the
KBs' write lock, so two processes saving at once never lose each other's group.

Removing a member KB breaks the groups that name it: ``sparqlqa kbs remove`` refuses unless
``--force`` (then it says which groups are now broken); a broken group fails to open with an error
naming the missing member (:class:`~sparqlqa.errors.GroupMemberNotFound`).

>>> split_members("people + films")
['films', 'people']
>>> split_members("films") is None
True
"""

from __future__ import annotations

__all__ = ["SEPARATOR", "SavedGroup", "broken_members", "groups_using", "load_groups", "remove_group", "save_group",
           "saved_groups", "split_members"]

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sparqlqa.errors import GroupError, GroupMemberNotFound, KBError
from sparqlqa.kb.kb_names import GROUP_SEPARATOR, canonical_kb_name, validate_kb_name
from sparqlqa.kb.knowledge_base import kb_exists, kb_lock, kb_root
from sparqlqa.paths import atomic_write_json, sparqlqa_home

#: joins the members of an ad hoc group: ``films+people``
SEPARATOR = GROUP_SEPARATOR
#: the lock name saved-group writers share (``kb_lock``)
_LOCK = "groups.json"


def _groups_file() -> Path:
    return sparqlqa_home() / "groups.json"


def load_groups() -> dict[str, list[str]]:
    """Every saved group, name → members (an empty mapping when none was saved)."""
    path = _groups_file()
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise KBError(f"cannot read the saved KB groups in {path}: {exc}",
                      hint="fix or delete that file (it only holds group names and their members)") from exc
    groups = data.get("groups", {}) if isinstance(data, dict) else {}
    return {str(name): [str(m) for m in members] for name, members in groups.items() if isinstance(members, list)}


def split_members(name: str) -> list[str] | None:
    """The member names of the group ``name`` (``a+b``, or a saved group's name); ``None`` when ``name`` is
    no group (a plain KB name that no saved group uses).  An ad hoc group's members come in their canonical
    order (:func:`~sparqlqa.kb.knowledge_base.canonical_kb_name`: sorted, each once), a saved group's as
    saved.  :class:`InvalidKBName` for a malformed ``a+``, :class:`GroupError` for ``a+a``."""
    name = canonical_kb_name(name)
    if SEPARATOR in name:
        return name.split(SEPARATOR)
    if kb_root(name).is_dir():  # a KB of that name wins over a saved group (saving refuses the clash)
        return None
    return load_groups().get(name)


def _check_members(group: str, members: list[str]) -> list[str]:
    members = list(dict.fromkeys(validate_kb_name(m) for m in members))
    if len(members) < 2:
        raise GroupError(f"a KB group needs two or more member KBs; {group!r} would have {len(members)}",
                         hint="name two or more KBs, as in 'sparqlqa kbs group add films-people films people'")
    for member in members:
        if not kb_exists(member):
            raise GroupMemberNotFound(group, member)
    return members


def save_group(name: str, members: list[str], *, replace: bool = False) -> list[str]:
    """Save group ``name`` with ``members`` (each an existing KB); the members as saved."""
    validate_kb_name(name)
    if kb_root(name).is_dir():
        raise GroupError(f"{name!r} is already the name of a knowledge base",
                         hint="choose another name for the group")
    members = _check_members(name, members)
    with kb_lock(_LOCK):
        groups = load_groups()
        if name in groups and not replace:
            raise GroupError(f"a KB group named {name!r} already exists ({' + '.join(groups[name])})",
                             hint=f"remove it first with 'sparqlqa kbs group remove {name}', or choose another name")
        groups[name] = members
        atomic_write_json(_groups_file(), {"groups": groups})
    return members


def remove_group(name: str) -> list[str]:
    """Forget group ``name`` (its members stay); the members it had."""
    with kb_lock(_LOCK):
        groups = load_groups()
        if name not in groups:
            raise GroupError(f"no KB group named {name!r}", hint="list the groups with 'sparqlqa kbs'")
        members = groups.pop(name)
        atomic_write_json(_groups_file(), {"groups": groups})
    return members


def groups_using(kb: str) -> list[str]:
    """The saved groups that name KB ``kb`` (removing ``kb`` breaks them), sorted."""
    return sorted(name for name, members in load_groups().items() if kb in members)


def broken_members(members: list[str]) -> list[str]:
    """The members that are no KB any more."""
    return [m for m in members if not kb_exists(m)]


@dataclass(frozen=True)
class SavedGroup:
    """A saved group as ``kbs`` lists it: its name, members, and the members that are no KB any more."""

    name: str
    members: list[str]
    missing: list[str]

    @property
    def broken(self) -> bool:
        return bool(self.missing)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "group": True, "members": list(self.members), "missing": list(self.missing),
                "broken": self.broken}


def saved_groups() -> list[SavedGroup]:
    """Every saved group, by name."""
    return [SavedGroup(name, members, broken_members(members)) for name, members in sorted(load_groups().items())]
