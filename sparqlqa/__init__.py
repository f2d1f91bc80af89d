"""sparqlqa: answer natural-language questions over RDF knowledge graphs with text.

``ask`` and ``open_kb`` are imported on first use, so ``import sparqlqa`` stays light.

>>> import sparqlqa
>>> callable(sparqlqa.ask), callable(sparqlqa.open_kb)
(True, True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["__version__", "ask", "open_kb"]

if TYPE_CHECKING:
    from sparqlqa.kb import open_kb
    from sparqlqa.pipeline import ask

_LAZY = {"ask": "sparqlqa.pipeline", "open_kb": "sparqlqa.kb"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sparqlqa' has no attribute {name!r}")
