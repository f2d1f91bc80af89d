"""sparqlqa: answer natural-language questions over RDF knowledge graphs with text.

``ask`` and ``open_kb`` are imported on first use, so ``import sparqlqa`` stays light.
The package layout is described in ARCHITECTURE.md; modules that moved in 0.2 are still
importable under their old names (``sparqlqa.pipeline``, ``sparqlqa.rdflib_interop`` ...),
with a :class:`DeprecationWarning` naming the new place.

>>> import sparqlqa
>>> callable(sparqlqa.ask), callable(sparqlqa.open_kb)
(True, True)
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from typing import TYPE_CHECKING, Any

from sparqlqa.version import __version__

__all__ = ["Answer", "AnswerItem", "AnswerMeta", "QueryRecord", "__version__", "ask", "open_kb"]

if TYPE_CHECKING:
    from sparqlqa.kb.knowledge_base import open_kb
    from sparqlqa.kb.records import QueryRecord
    from sparqlqa.stages.answer import Answer, AnswerItem, AnswerMeta
    from sparqlqa.strategies.ask import ask

#: public names, imported on first use (the result types :func:`ask` returns among them)
_LAZY = {"ask": "sparqlqa.strategies.ask", "open_kb": "sparqlqa.kb.knowledge_base",
         "Answer": "sparqlqa.stages.answer", "AnswerItem": "sparqlqa.stages.answer",
         "AnswerMeta": "sparqlqa.stages.answer", "QueryRecord": "sparqlqa.kb.records"}

#: modules of sparqlqa 0.1 (flat layout) -> where they live now
MOVED_MODULES = {
    "store": "kb.store", "sparql_guard": "kb.sparql_guard", "terms": "kb.terms",
    "vocab": "kb.vocab",
    "profile": "kb.profile", "schema": "kb.schema", "naming": "kb.naming", "results_format": "kb.results_format",
    "rdflib_interop": "ingest.rdflib_interop", "ontologies": "kb.ontologies", "node_text": "kb.node_text",
    "embed_onnx": "embed.onnx", "ann": "vectors.ann",
    "index_files": "vectors.index_files", "linking": "stages.linking", "triplets": "stages.triplets",
    "compile": "stages.compile", "execute": "stages.execute", "ranking": "stages.ranking", "rerank": "stages.rerank",
    "answer": "stages.answer", "audit": "stages.audit", "pipeline": "strategies.ask",
    "offline": "strategies.offline", "fiske": "strategies.fiske",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sparqlqa' has no attribute {name!r}")


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``sparqlqa.<old name>`` as the module at its new place, warning once per import."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        prefix, _, rest = fullname.partition(".")
        old = rest.split(".")[0] if prefix == "sparqlqa" else ""
        if old not in MOVED_MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: Any) -> Any:
        old = spec.name.split(".")[1]
        new = "sparqlqa." + MOVED_MODULES[old] + spec.name[len("sparqlqa." + old):]
        warnings.warn(f"{spec.name} moved to {new}; import it from there", DeprecationWarning, stacklevel=2)
        return importlib.import_module(new)

    def exec_module(self, module: Any) -> None:
        """The module at the new place ran already."""


sys.meta_path.append(_MovedModuleFinder())
