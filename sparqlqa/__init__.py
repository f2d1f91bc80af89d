"""sparqlqa: answer natural-language questions over RDF knowledge graphs with text.

``ask`` and ``open_kb`` are imported on first use, so ``import sparqlqa`` stays light.
The package layout is described in ARCHITECTURE.md.

>>> import sparqlqa
>>> callable(sparqlqa.ask), callable(sparqlqa.open_kb)
(True, True)
"""

from __future__ import annotations

import importlib

from sparqlqa.version import __version__

#: ``typing.TYPE_CHECKING`` without importing ``typing`` (0.006 s CPU of a query worker's start, which
#: imports this package and little else); mypy reads any ``TYPE_CHECKING`` as true
TYPE_CHECKING = False

__all__ = ["Answer", "AnswerItem", "AnswerMeta", "QueryRecord", "__version__", "ask", "open_kb"]

if TYPE_CHECKING:
    from typing import Any

    from sparqlqa.kb.knowledge_base import open_kb
    from sparqlqa.kb.records import QueryRecord
    from sparqlqa.stages.answer import Answer, AnswerItem, AnswerMeta
    from sparqlqa.strategies.ask import ask

#: public names, imported on first use (the result types :func:`ask` returns among them)
_LAZY = {"ask": "sparqlqa.strategies.ask", "open_kb": "sparqlqa.kb.knowledge_base",
         "Answer": "sparqlqa.stages.answer", "AnswerItem": "sparqlqa.stages.answer",
         "AnswerMeta": "sparqlqa.stages.answer", "QueryRecord": "sparqlqa.kb.records"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sparqlqa' has no attribute {name!r}")
