"""A store wrapper that keeps every query it ran (shared by the remote-store tests)."""

from __future__ import annotations

from sparqlqa.kb.store import QueryResult, Store
from sparqlqa.query.built_query import BuiltQuery


class RecordingStore(Store):
    """Wraps a store and keeps every query it ran."""

    kind = "recording"

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.seen: list[str] = []

    def _prepared(self, sparql: str | BuiltQuery, form: str) -> str:
        return self.inner._prepared(sparql, form)  # what the inner store would send (an endpoint's LIMIT)

    def _execute(self, sparql: str, form: str) -> QueryResult:
        self.seen.append(sparql)
        return self.inner._execute(sparql, form)
