"""sparqlqa: answer natural-language questions over RDF knowledge graphs with text.

The public API is :data:`__all__` (``tests/test_api.py`` lists it with each package's): :func:`ask`,
:func:`open_kb`, what they return, and the root of the error tree.  Each name is imported on first use,
so ``import sparqlqa`` stays light.  The package layout is described in ARCHITECTURE.md.

>>> import sparqlqa
>>> callable(sparqlqa.ask), callable(sparqlqa.open_kb)
(True, True)
"""

from __future__ import annotations

__all__ = ["Answer", "AnswerItem", "AnswerMeta", "KnowledgeBase", "QueryRecord", "SparqlqaError", "__version__",
           "ask", "open_kb"]

from sparqlqa.version import __version__

#: ``typing.TYPE_CHECKING`` without importing ``typing`` (0.006 s CPU of a query worker's start, which
#: imports this package and little else); mypy reads any ``TYPE_CHECKING`` as true
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

    from sparqlqa.errors import SparqlqaError
    from sparqlqa.kb.knowledge_base import KnowledgeBase, open_kb
    from sparqlqa.kb.records import QueryRecord
    from sparqlqa.stages.answer import Answer, AnswerItem, AnswerMeta
    from sparqlqa.strategies.ask import ask

#: where each public name lives (the result types :func:`ask` returns among them)
_HOME = {"ask": "sparqlqa.strategies.ask", "open_kb": "sparqlqa.kb.knowledge_base",
         "KnowledgeBase": "sparqlqa.kb.knowledge_base", "SparqlqaError": "sparqlqa.errors",
         "Answer": "sparqlqa.stages.answer", "AnswerItem": "sparqlqa.stages.answer",
         "AnswerMeta": "sparqlqa.stages.answer", "QueryRecord": "sparqlqa.kb.records"}


def __getattr__(name: str) -> Any:
    from sparqlqa.registry import lazy_attribute  # not at import: a query worker imports this package

    return lazy_attribute(__name__, _HOME, name)
