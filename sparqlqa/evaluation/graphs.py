"""One KB per graph (Spider4SPARQL: a database mapped to RDF is one graph, asked by its own questions): the
KB a question asks is ``prefix + db`` (``--kb-prefix s4s_`` → ``s4s_concert_singer``), and
:func:`ingest_graphs` builds those KBs from the benchmark's ``kg/<db>.nt`` files in one call
(``sparqlqa eval spider4sparql DIR --kb-prefix s4s_ --ingest``).
"""

from __future__ import annotations

__all__ = ["GraphIngest", "GraphKBs", "ingest_graphs"]

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparqlqa.evaluation.datasets import graph_files

if TYPE_CHECKING:
    from sparqlqa.kb.knowledge_base import KnowledgeBase


@dataclass
class GraphKBs:
    """The KBs of a benchmark's graphs, opened once each (thread-safe: the runner's workers share it)."""

    prefix: str
    _opened: dict[str, KnowledgeBase] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def name(self, db: str) -> str:
        """The KB name of graph ``db``."""
        return f"{self.prefix}{db}"

    def __call__(self, db: str) -> KnowledgeBase:
        """The opened KB of graph ``db`` (:class:`~sparqlqa.errors.KBNotFound` when it was never ingested)."""
        with self._lock:
            if db not in self._opened:
                from sparqlqa.errors import KBNotFound
                from sparqlqa.kb.knowledge_base import open_kb

                try:
                    self._opened[db] = open_kb(self.name(db))
                except KBNotFound as exc:
                    exc.hint = (f"ingest the benchmark's graphs first: add --ingest (builds KB "
                                f"{self.prefix}<db> from each kg/<db>.nt), or 'sparqlqa ingest kg/{db}.nt "
                                f"--kb {self.name(db)}'")
                    raise
            return self._opened[db]

    def generations(self, dbs: Iterable[str]) -> str:
        """``"db=generation,…"`` of the graphs ``dbs`` (what a resumed run must find unchanged); opening
        them all first also fails before the first question when one is missing."""
        return ",".join(f"{db}={getattr(self(db).manifest, 'generation', '')}" for db in sorted(set(dbs)))


@dataclass
class GraphIngest:
    """What :func:`ingest_graphs` did with one graph: ``built`` (else the KB was there and kept)."""

    db: str
    kb: str
    built: bool
    triples: int = 0
    seconds: float = 0.0


def ingest_graphs(source: str | Path, prefix: str, *, replace: bool = False,
                  on_graph: Callable[[GraphIngest], None] | None = None, progress: Any = None) -> list[GraphIngest]:
    """Ingest every ``kg/<db>.nt`` of the Spider4SPARQL folder ``source`` as KB ``prefix + db``; a KB already
    there is kept unless ``replace``.  ``on_graph`` is told after each graph."""
    from sparqlqa.ingest import ingest
    from sparqlqa.kb.knowledge_base import list_kbs

    existing = {manifest.name for manifest in list_kbs()}
    done = []
    for db, path in graph_files(source).items():
        kb = f"{prefix}{db}"
        if kb in existing and not replace:
            outcome = GraphIngest(db, kb, built=False)
        else:
            start = time.perf_counter()
            with ingest([path], kb=kb, format="nt", replace=kb in existing, progress=progress) as built:
                outcome = GraphIngest(db, kb, True, built.schema.triple_count, time.perf_counter() - start)
        done.append(outcome)
        if on_graph is not None:
            on_graph(outcome)
    return done
