"""The KBs a served process holds open: at most ``--max-open-kbs``, the least recently used closed first.

Every open KB costs memory (its label and node indexes, the offline strategy's tables) and processes (its
query workers, :mod:`sparqlqa.query.query_pool`), so a server asked for many KBs or KB groups (``a+b``,
``a+c``, ...) must let some go.  :class:`OpenKBs` keeps them in least-recently-used order, keyed by the
canonical name (:func:`~sparqlqa.kb.knowledge_base.canonical_kb_name`: the caller passes names already in
it), and closes the one used longest ago when one more is opened: its reader lease is released and its
query workers stop (:meth:`~sparqlqa.kb.knowledge_base.KnowledgeBase.close`).

Closing is never pulled from under a request: each entry counts the requests using it, an idle entry is
evicted before a busy one, and a busy one that must go (every entry busy) or whose KB was re-ingested
(a new generation) is closed by its last request.  Opening and warming a KB happens under that name's own
lock (concurrent first requests build its indexes once) and outside the set's lock (other KBs answer
meanwhile); the per-name locks live only while someone holds or waits for them.

>>> opened = OpenKBs(capacity=1)
>>> opened.capacity, len(opened)
(1, 0)
"""

from __future__ import annotations

__all__ = ["DEFAULT_MAX_OPEN_KBS", "OpenKBs"]

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sparqlqa.kb.knowledge_base import KnowledgeBase

#: KBs held open at once unless ``--max-open-kbs`` says otherwise
DEFAULT_MAX_OPEN_KBS = 8


@dataclass(eq=False)
class _Entry:
    """One open KB: which generation it is (``stamp``) and how many requests use it now."""

    kb: KnowledgeBase
    stamp: Hashable
    users: int = 0
    #: no longer in the set (evicted or replaced): its last user closes it
    retired: bool = False


@dataclass(eq=False)
class _NameLock:
    lock: threading.Lock = field(default_factory=threading.Lock)
    holders: int = 0


class OpenKBs:
    """Open KBs by canonical name, least recently used first, at most ``capacity`` of them."""

    def __init__(self, capacity: int = DEFAULT_MAX_OPEN_KBS) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._names: dict[str, _NameLock] = {}
        self._guard = threading.Lock()

    def __len__(self) -> int:
        with self._guard:
            return len(self._entries)

    def names(self) -> list[str]:
        """The open KBs' names, least recently used first."""
        with self._guard:
            return list(self._entries)

    @contextmanager
    def using(self, name: str, stamp: Callable[[], Hashable],
              open_kb: Callable[[], KnowledgeBase]) -> Iterator[KnowledgeBase]:
        """The open KB ``name`` for one request: the one held when its ``stamp()`` (the generation it should
        be) is unchanged, else ``open_kb()`` (and the old one retired).  ``stamp`` may raise (no such KB)."""
        with self._name_lock(name):
            wanted = stamp()
            with self._guard:
                entry = self._entries.get(name)
                fresh = entry is not None and entry.stamp == wanted
                if fresh:
                    assert entry is not None
                    entry.users += 1
                    self._entries.move_to_end(name)
            if not fresh:
                entry = self._add(name, _Entry(open_kb(), wanted, users=1))
        assert entry is not None
        try:
            yield entry.kb
        finally:
            self._release(entry)

    def _add(self, name: str, entry: _Entry) -> _Entry:
        """Hold ``entry`` under ``name`` (most recently used); close what it replaces or evicts."""
        with self._guard:
            dropped = [old] if (old := self._entries.pop(name, None)) is not None else []
            self._entries[name] = entry
            while len(self._entries) > self.capacity:
                victim = next((key for key, held in self._entries.items() if not held.users),
                              next(iter(self._entries)))
                dropped.append(self._entries.pop(victim))
            idle = [old for old in dropped if not old.users]
            for old in dropped:
                old.retired = True
        for old in idle:
            old.kb.close()
        return entry

    def _release(self, entry: _Entry) -> None:
        with self._guard:
            entry.users -= 1
            last = entry.retired and not entry.users
        if last:
            entry.kb.close()

    @contextmanager
    def _name_lock(self, name: str) -> Iterator[None]:
        with self._guard:
            held = self._names.setdefault(name, _NameLock())
            held.holders += 1
        try:
            with held.lock:
                yield
        finally:
            with self._guard:
                held.holders -= 1
                if not held.holders:
                    del self._names[name]

    def close(self) -> None:
        """Close every KB no request uses; the others are closed by their last request."""
        with self._guard:
            dropped = list(self._entries.values())
            self._entries.clear()
            for entry in dropped:
                entry.retired = True
            idle = [entry for entry in dropped if not entry.users]
        for entry in idle:
            entry.kb.close()
