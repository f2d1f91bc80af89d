"""A knowledge base: its store and read path, terms, schema, names, and what it says about a node.

The names of the former module ``sparqlqa.kb`` (``KnowledgeBase``, ``Manifest``, ``open_kb`` ...) are still
importable from here; they live in :mod:`sparqlqa.kb.knowledge_base`.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing's, without importing typing (a query worker imports this package: sparqlqa/__init__)
if TYPE_CHECKING:
    from typing import Any

#: names re-exported from :mod:`sparqlqa.kb.knowledge_base` (imported on first use)
EXPORTS = ('KnowledgeBase', 'Manifest', 'open_kb', 'list_kbs', 'scan_kbs', 'remove_kb', 'kb_exists',
           'write_generation', 'validate_kb_name', 'canonical_kb_name', 'BrokenKB', 'KBScan')


def __getattr__(name: str) -> Any:
    if name in EXPORTS:
        return getattr(importlib.import_module("sparqlqa.kb.knowledge_base"), name)
    raise AttributeError(f"module 'sparqlqa.kb' has no attribute {name!r}")
