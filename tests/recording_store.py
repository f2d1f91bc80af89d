"""A store wrapper that keeps every query it ran (shared by the remote-store tests)."""

from __future__ import annotations

from sparqlqa.kb.store import QueryResult, Store


class RecordingStore(Store):
    """Wraps a store and keeps every query it ran."""

    kind = "recording"

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.seen: list[str] = []

    def _execute(self, sparql: str, form: str) -> QueryResult:
        self.seen.append(sparql)
        return self.inner._execute(sparql, form)
