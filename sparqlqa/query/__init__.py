"""The read path: what runs a SPARQL query safely, whatever store answers it.

One reading of a query by a SPARQL 1.1 parser (:mod:`~sparqlqa.query.sparql_reading`; lexical helpers that
only show or rewrite text: :mod:`~sparqlqa.query.sparql_text`), the guards built on it (read queries only:
:mod:`~sparqlqa.query.sparql_guard`; SERVICE only to allowed hosts: :mod:`~sparqlqa.query.service_guard`),
sparqlqa's own queries carrying their reading (:mod:`~sparqlqa.query.built_query`), the bounds of a query
(:mod:`~sparqlqa.query.limits`) and the worker processes that enforce them (:mod:`~sparqlqa.query.query_pool`,
:mod:`~sparqlqa.query.query_worker`, without network: :mod:`~sparqlqa.query.sandbox`), readable syntax errors
(:mod:`~sparqlqa.query.query_errors`) and the well-known prefixes they suggest (:mod:`~sparqlqa.query.prefixes`).

It imports nothing of :mod:`sparqlqa.kb` (the store and schema) or above: ``kb`` imports it.
"""

from __future__ import annotations

__all__ = ["BuiltQuery", "QueryLimits", "QueryReading", "bounded", "read_query"]

from typing import TYPE_CHECKING, Any

from sparqlqa.registry import lazy_attribute

if TYPE_CHECKING:
    from sparqlqa.query.built_query import BuiltQuery
    from sparqlqa.query.limits import QueryLimits, bounded
    from sparqlqa.query.sparql_reading import QueryReading, read_query

#: where each public name lives, imported on first use (``sparqlqa.query.limits`` alone stays light)
_HOME = {"BuiltQuery": "sparqlqa.query.built_query", "QueryLimits": "sparqlqa.query.limits",
         "bounded": "sparqlqa.query.limits", "QueryReading": "sparqlqa.query.sparql_reading",
         "read_query": "sparqlqa.query.sparql_reading"}


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _HOME, name)
