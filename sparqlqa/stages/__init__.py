"""The 4StepFocus stages, one module each, in the order a question meets them.

1. :mod:`~sparqlqa.stages.triplets` — the question becomes triplet patterns (LLM, or parsed arrows).
2. :mod:`~sparqlqa.stages.linking` (constants → nodes), :mod:`~sparqlqa.stages.compile` (triplets → SPARQL)
   and :mod:`~sparqlqa.stages.execute` (SPARQL → candidates with evidence).
3. :mod:`~sparqlqa.stages.ranking` — candidates sorted by embedding similarity, topped up by vector search.
4. :mod:`~sparqlqa.stages.rerank` — an LLM reranks the top k.

:mod:`~sparqlqa.stages.answer` holds what a question returns; :mod:`~sparqlqa.stages.audit` saves its SPARQL.
"""

from __future__ import annotations

__all__: list[str] = []  # the package has no names of its own: its modules are its API
