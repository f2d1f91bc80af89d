"""Strategies compose the stages into an answer: 4step, vss, vss+rerank, offline, fiske.

The package's public names (:data:`__all__`: ``Strategy``, ``FourStep``, ``VectorSearch`` ...) live in
:mod:`sparqlqa.strategies.base` and are imported on first use.
"""

from __future__ import annotations

__all__ = ["FourStep", "Strategy", "StrategyRegistry", "VectorSearch", "VectorSearchRerank", "strategies"]

from typing import Any

from sparqlqa.registry import lazy_attribute


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, dict.fromkeys(__all__, "sparqlqa.strategies.base"), name)
