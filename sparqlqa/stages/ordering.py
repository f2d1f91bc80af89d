"""The one ordering step: the order of an answer's items and of its table's rows, from the stages' results.

Each stage hands over a small frozen result and leaves the order to :func:`order_answer`:

- stage 3's similarity ranking (the items, best first: stricter tiers, then the most similar);
- stage 4's :class:`RerankOrder` (the top of that ranking in the reranker's order), when a rerank applied;
- stage 2's :class:`FormShape` (the form, its value, the matched keys in the query's order and whether the
  query has ORDER BY; the node a yes/no asks about).

The rule, in one place: the query's ORDER BY when it has one (a superlative's winner first; for a yes/no
the node asked about first), else the rerank's order, else similarity; answers that satisfied the query
before fill-in (:func:`exact_first`, whose one exception is a fill-in item a listwise rerank moved up with
a reason).  A query's own table keeps the rows as the query returned them (in its ORDER BY when it has
one); a list's table is its matched items in this order
(:func:`~sparqlqa.stages.answer.answer_table`).

>>> from sparqlqa.stages.answer import AnswerItem
>>> ranking = [AnswerItem.ranked(iri, score, "filtered", 0) for iri, score in [("a", .9), ("b", .8), ("c", .7)]]
>>> [i.iri for i in order_answer(ranking).items]
['a', 'b', 'c']
>>> [i.iri for i in order_answer(ranking, rerank=RerankOrder((1, 0))).items]
['b', 'a', 'c']
>>> shape = FormShape(query_order=("c", "a", "b"), ordered=True)
>>> [i.iri for i in order_answer(ranking, rerank=RerankOrder((1, 0)), shape=shape).items]
['c', 'a', 'b']
"""

from __future__ import annotations

__all__ = ["FormShape", "Ordered", "RerankOrder", "exact_first", "order_answer"]

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sparqlqa.stages.answer import AnswerItem
from sparqlqa.stages.modes import Form

if TYPE_CHECKING:
    from sparqlqa.stages.execute import Candidates
    from sparqlqa.stages.linking import LinkedConstants
    from sparqlqa.stages.rerank import RerankResult
    from sparqlqa.stages.triplets import Triplets


@dataclass(frozen=True)
class FormShape:
    """Stage 2's form as the answer takes it: the form and its value (the count, the yes/no, the one value),
    the matched keys in the query's order, whether that order is the question's (the query has ORDER BY),
    and the nodes a yes/no asks about (they come first)."""

    form: str = Form.LIST
    value: int | bool | str | None = None
    query_order: tuple[str, ...] = ()
    ordered: bool = False
    first: tuple[str, ...] = ()

    @classmethod
    def of(cls, candidates: Candidates | None, triplets: Triplets | None = None,
           linked: LinkedConstants | None = None) -> FormShape | None:
        """The shape of stage 2's :class:`~sparqlqa.stages.execute.Candidates` (``None`` without them)."""
        if candidates is None:
            return None
        form = candidates.form or Form.LIST
        first: list[str] = []
        if form == Form.BOOLEAN and linked is not None and triplets is not None:
            first = [m.iri for text in triplets.form.choices for m in linked.links.get(text, [])[:1]]
        return cls(form, candidates.value, tuple(c.iri for c in candidates.items), candidates.ordered,
                   tuple(first))


@dataclass(frozen=True)
class RerankOrder:
    """Stage 4's order: the top of the similarity ranking as the reranker ordered it (positions in it)."""

    positions: tuple[int, ...]

    @classmethod
    def of(cls, result: RerankResult) -> RerankOrder | None:
        """The order of a :class:`~sparqlqa.stages.rerank.RerankResult`; ``None`` when it was not applied."""
        return cls(tuple(result.order)) if result.applied else None


@dataclass(frozen=True)
class Ordered:
    """What :func:`order_answer` decided: ``ranked``, the ranking as stages 3 and 4 leave it (the JSON's
    ``meta.ranking``), and ``items``, the answer's order."""

    ranked: tuple[AnswerItem, ...]
    items: tuple[AnswerItem, ...]


def order_answer(similarity: Sequence[AnswerItem], *, rerank: RerankOrder | None = None,
                 shape: FormShape | None = None) -> Ordered:
    """The one ordering step (see the module docstring): ``similarity``, stage 3's ranking (or a strategy's
    own items, best first), reordered by ``rerank`` at its top, then by ``shape``'s query order."""
    ranked = list(similarity)
    if rerank is not None:
        top = ranked[: len(rerank.positions)]
        ranked[: len(top)] = exact_first([top[index] for index in rerank.positions])
    items = ranked
    if shape is not None and (shape.ordered or shape.first):
        items = _query_first(ranked, {key: n for n, key in enumerate(shape.query_order)}, shape.first)
    return Ordered(tuple(ranked), tuple(exact_first(items)))


def exact_first(items: Sequence[AnswerItem]) -> list[AnswerItem]:
    """Items that satisfied the query first, fill-in after, each group in its own order.  A fill-in item
    that a listwise rerank moved up *with a reason* keeps its place among the matched ones: the one
    exception, and it is explicit (``rerank_reason``).

    >>> ranked = [AnswerItem("v", source="vector"), AnswerItem("f", source="filtered"),
    ...           AnswerItem("w", source="vector", rerank_reason="named in the question's words"),
    ...           AnswerItem("g", source="filtered")]
    >>> [i.iri for i in exact_first(ranked)]
    ['f', 'w', 'g', 'v']
    """
    ahead = [i for i in items if i.matched or i.rerank_reason]
    return ahead + [i for i in items if not (i.matched or i.rerank_reason)]


def _query_first(items: list[AnswerItem], order: Mapping[str, int], first: Sequence[str]) -> list[AnswerItem]:
    """Matched items by the query's order (``first`` ahead of them), the others after, as they were."""
    matched = [i for i in items if i.iri in order]
    rest = [i for i in items if i.iri not in order]
    matched.sort(key=lambda i: (i.iri not in first, order[i.iri]))
    return matched + rest
