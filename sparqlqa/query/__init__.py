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
