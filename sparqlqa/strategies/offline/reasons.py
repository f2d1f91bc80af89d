"""Why the offline step read the question as it did: :class:`OfflineReasons` (``Answer.meta.offline``).

A typed record read by attribute; :meth:`OfflineReasons.to_dict` is the JSON ``meta.offline`` (and
``triplets.offline``), with the same keys, rounding and omissions for each kind of reading:

* a reading scored over relation paths: ``mentions``, ``paths``, ``chosen`` (with ``confidence``), ``elapsed_ms``;
* a reading of the answer's form (choices, one name's value, an ordering or filter over a type):
  ``form``, ``order``, ``filters``, and for a yes/no between two names its one ``chosen`` (no confidence);
* a question too long to read: nothing (``{}``).

>>> reasons = OfflineReasons(chosen=[ChosenReading("'X' -p->", 0.123456, 0.9)], elapsed_ms=1.23456)
>>> reasons.chosen[0].reading, reasons.to_dict()["chosen"], reasons.to_dict()["elapsed_ms"]
("'X' -p->", [{'reading': "'X' -p->", 'score': 0.1235, 'confidence': 0.9}], 1.235)
>>> OfflineReasons(form="count").to_dict()
{'form': 'count', 'order': None, 'filters': []}
"""

from __future__ import annotations

__all__ = ["ChosenReading", "OfflineReasons"]

from dataclasses import dataclass, field
from typing import Any

from sparqlqa.kb.records import JsonRecord
from sparqlqa.strategies.offline.mentions import Mention
from sparqlqa.strategies.offline.paths import RelationPath


@dataclass(frozen=True)
class ChosenReading:
    """One reading the step chose (best first): its text, its score and, for scored readings, how sure
    the step is of it (a softmax over the readings' scores; ``None`` for a yes/no between two names)."""

    reading: str
    score: float
    confidence: float | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"reading": self.reading, "score": round(self.score, 4)}
        if self.confidence is not None:
            data["confidence"] = round(self.confidence, 4)
        return data


@dataclass
class OfflineReasons(JsonRecord):
    """The offline step's reasons.  ``form`` / ``order`` / ``filters``: the answer form it read (set only
    when the form itself gave the reading); ``mentions``: the names found; ``paths``: the relation paths
    considered from each mention, best first (the shown ones); ``chosen``: the readings chosen, best first;
    ``elapsed_ms``: how long the path scoring took (``None`` when no paths were scored)."""

    form: str | None = None
    order: str | None = None
    filters: list[str] = field(default_factory=list)
    mentions: list[Mention] = field(default_factory=list)
    paths: dict[str, list[RelationPath]] = field(default_factory=dict)
    chosen: list[ChosenReading] = field(default_factory=list)
    elapsed_ms: float | None = None

    @property
    def empty(self) -> bool:
        """No reasons at all (the question was too long to read)."""
        return not self.to_dict()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.form is not None:
            data.update(form=self.form, order=self.order, filters=list(self.filters))
        if self.elapsed_ms is not None:
            data.update(mentions=[m.to_dict() for m in self.mentions],
                        paths={text: [p.to_dict() for p in paths] for text, paths in self.paths.items()},
                        chosen=[c.to_dict() for c in self.chosen], elapsed_ms=round(self.elapsed_ms, 3))
        elif self.chosen:
            data["chosen"] = [c.to_dict() for c in self.chosen]
        return data
