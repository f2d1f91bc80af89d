"""Strategies compose the stages into an answer: 4step, vss, vss+rerank, offline, fiske.

The names of the former module ``sparqlqa.strategies`` (``Strategy``, ``FourStep``, ``VectorSearch`` ...) are still
importable from here; they live in :mod:`sparqlqa.strategies.base`.
"""

from __future__ import annotations

import importlib
from typing import Any

#: names re-exported from :mod:`sparqlqa.strategies.base` (imported on first use)
EXPORTS = ('Strategy', 'FourStep', 'VectorSearch', 'VectorSearchRerank', 'strategies', 'StrategyRegistry')


def __getattr__(name: str) -> Any:
    if name in EXPORTS:
        return getattr(importlib.import_module("sparqlqa.strategies.base"), name)
    raise AttributeError(f"module 'sparqlqa.strategies' has no attribute {name!r}")
