"""The named choices of an answer, each defined once: its forms, where its items come from, the rerank and
topic modes, what a table's column holds, where a FiSKE route stands.  Each is a :class:`~enum.StrEnum`: a
member *is* its string (``RerankMode.LISTWISE == "listwise"``), so the JSON, the CLI's choices and the prompts
read the same words as before.

>>> Form.COUNT == "count", f"{ItemSource.FILTERED}", [m.value for m in RerankMode]
(True, 'filtered', ['listwise', 'pointwise', 'none'])
>>> import json; json.dumps({"source": ItemSource.VECTOR})
'{"source": "vector"}'
"""

from __future__ import annotations

__all__ = ["FORMS", "ColumnKind", "Form", "ItemSource", "RerankMode", "RouteStatus", "TopicMode", "values"]

import sys
from enum import Enum

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # pragma: no cover - Python 3.10 has no StrEnum: the same behaviour, spelt out

    class StrEnum(str, Enum):
        def __str__(self) -> str:
            return str(self.value)


class Form(StrEnum):
    """An answer's form: a list of nodes or values, a count, a yes/no, one value ("the population of Aruba",
    "the average age"), a table (several columns, per-group figures)."""

    LIST = "list"
    COUNT = "count"
    BOOLEAN = "boolean"
    VALUE = "value"
    TABLE = "table"


class ItemSource(StrEnum):
    """Where an answer item comes from: the SPARQL stage (``filtered``: it satisfied the query, the item is
    :attr:`~sparqlqa.stages.answer.AnswerItem.matched`), the vector ranking (``vector``), FiSKE's fallback
    to the model's own knowledge (``model-knowledge``); the last two are fill-in."""

    FILTERED = "filtered"
    VECTOR = "vector"
    MODEL_KNOWLEDGE = "model-knowledge"


class RerankMode(StrEnum):
    """Stage 4: a listwise LLM rerank (sliding window), a pointwise one (STaRK's), or none."""

    LISTWISE = "listwise"
    POINTWISE = "pointwise"
    NONE = "none"


class RouteStatus(StrEnum):
    """Where one FiSKE exploration route stands (``Route.status``): still growing, grown into children, covering
    the question, given up, or stopped by the run's budget."""

    ACTIVE = "active"
    EXTENDED = "extended"
    COVERING = "covering"
    DEAD = "dead"
    STOPPED = "stopped"


class TopicMode(StrEnum):
    """What happens to the nodes the question names (its topic entities) among the answers.  ``auto``: left
    out unless they alone satisfy the query (the question asks for them back), and not added as fill-in once
    the query found answers (with none, the similarity list is left as it is: a question whose path leads
    back to its own entity is about that entity); ``exclude``: always left out (MetaQA's gold); ``keep``:
    treated like any node."""

    AUTO = "auto"
    EXCLUDE = "exclude"
    KEEP = "keep"


class ColumnKind(StrEnum):
    """What a column of an answer's :class:`~sparqlqa.stages.table.Table` holds: nodes (IRIs), values
    (literals), or aggregates (a COUNT, AVG, … of the query)."""

    NODE = "node"
    VALUE = "value"
    AGGREGATE = "aggregate"


def values(choices: type[StrEnum]) -> tuple[str, ...]:
    """The plain strings of an enum, in order (for ``click.Choice``, JSON schemas, hints).

    >>> values(TopicMode)
    ('auto', 'exclude', 'keep')
    """
    return tuple(member.value for member in choices)


#: the forms the triplets' JSON may ask for (an analytical form may also ask for a value or a table)
FORMS = (Form.LIST, Form.COUNT, Form.BOOLEAN)
