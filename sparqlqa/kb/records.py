"""Typed records that reach the JSON edge: :class:`QueryRecord` and the base :class:`JsonRecord`.

Public results are dataclasses read by attribute; ``to_dict()`` is their JSON form (the only place a
``dict`` appears).  Results that used to be plain dicts keep answering ``record["key"]`` and
``record.get("key")`` — from their JSON form, with a :class:`DeprecationWarning` naming the attribute.

>>> record = QueryRecord(query="ASK {}", form="ASK", rows=0, elapsed_ms=0.5, store="oxigraph").at("sparql")
>>> record.stage, record.to_dict()
('sparql', {'query': 'ASK {}', 'form': 'ASK', 'rows': 0, 'elapsed_ms': 0.5, 'store': 'oxigraph', 'stage': 'sparql'})
"""

from __future__ import annotations

__all__ = ["JsonRecord", "QueryRecord"]

import warnings
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any


class JsonRecord:
    """A typed result whose JSON form is :meth:`to_dict`; dict-style reads still work, deprecated."""

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def _legacy(self, key: str) -> dict[str, Any]:
        warnings.warn(f"{type(self).__name__}[{key!r}] reads the JSON form and is deprecated: use the attribute "
                      f"(or .to_dict() for JSON)", DeprecationWarning, stacklevel=3)
        return self.to_dict()

    def __getitem__(self, key: str) -> Any:
        return self._legacy(key)[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._legacy(key).get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self.to_dict()

    def keys(self) -> Iterator[str]:
        return iter(self.to_dict())


@dataclass(frozen=True)
class QueryRecord(JsonRecord):
    """One SPARQL query that ran: its text, form, row count, time and store (``QueryResult.history()``),
    and where it ran: ``stage`` (``sparql``, ``labels``, ``texts``, ``fiske``, ...; ``None`` until an
    :class:`~sparqlqa.strategies.pipeline.AskContext` records it) and FiSKE's ``direction``."""

    query: str
    form: str = "SELECT"
    rows: int = 0
    elapsed_ms: float = 0.0
    store: str = ""
    direction: str | None = None
    stage: str | None = None
    #: why a query written by an LLM did not run (text2sparql): the first line of the error
    error: str | None = None

    def at(self, stage: str) -> QueryRecord:
        """The same record, run by ``stage``."""
        return replace(self, stage=stage)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"query": self.query, "form": self.form, "rows": self.rows,
                                "elapsed_ms": self.elapsed_ms, "store": self.store}
        if self.direction is not None:
            data["direction"] = self.direction
        if self.stage is not None:
            data["stage"] = self.stage
        if self.error is not None:
            data["error"] = self.error
        return data
