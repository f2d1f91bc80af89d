"""The order of an answer's items: one module for every rule that decides it.

Stage 3 ranks by similarity, stage 4 may rerank the top, the form puts the query's order back (a
superlative's winner first, the node a yes/no asks about first), and answers that satisfied the query come
before fill-in (:func:`exact_first`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sparqlqa.stages.answer import FILTERED, AnswerItem

__all__ = ["exact_first", "query_first", "reranked"]


def exact_first(items: list[AnswerItem]) -> list[AnswerItem]:
    """Items that satisfied the query first, fill-in after, each group in its own order.  A fill-in item
    that a listwise rerank moved up *with a reason* keeps its place among the matched ones: the one
    exception, and it is explicit (``rerank_reason``).

    >>> ranked = [AnswerItem("v", source="vector"), AnswerItem("f", source="filtered"),
    ...           AnswerItem("w", source="vector", rerank_reason="named in the question's words"),
    ...           AnswerItem("g", source="filtered")]
    >>> [i.iri for i in exact_first(ranked)]
    ['f', 'w', 'g', 'v']
    """
    ahead = [i for i in items if i.source == FILTERED or i.rerank_reason]
    return ahead + [i for i in items if not (i.source == FILTERED or i.rerank_reason)]


def reranked(top: Sequence[AnswerItem], order: Sequence[int]) -> list[AnswerItem]:
    """The top of a ranking in a rerank's order (indexes into ``top``), matched items first."""
    return exact_first([top[index] for index in order])


def query_first(items: list[AnswerItem], order: Mapping[str, int], first: Sequence[str]) -> list[AnswerItem]:
    """Matched items by the query's order (``first`` ahead of them), the others after, as they were."""
    matched = [i for i in items if i.iri in order]
    rest = [i for i in items if i.iri not in order]
    matched.sort(key=lambda i: (i.iri not in first, order[i.iri]))
    return matched + rest
