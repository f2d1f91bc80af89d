"""A knowledge base: its store, terms, schema, names, and what it says about a node (read path: :mod:`sparqlqa.query`).

The package's public names (:data:`__all__`) live in :mod:`sparqlqa.kb.knowledge_base`, imported on first use;
the rest of the package is reached by module (``sparqlqa.kb.store``, ``sparqlqa.kb.schema`` ...).
"""

from __future__ import annotations

__all__ = ["BrokenKB", "KBScan", "KnowledgeBase", "Manifest", "canonical_kb_name", "kb_exists", "list_kbs", "open_kb",
           "remove_kb", "scan_kbs", "validate_kb_name", "write_generation"]

from typing import Any

from sparqlqa.registry import lazy_attribute


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, dict.fromkeys(__all__, "sparqlqa.kb.knowledge_base"), name)
