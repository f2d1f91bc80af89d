"""The answer's form on the :class:`~sparqlqa.stages.answer.Answer`: form, value and item order.

Stage 2 (:mod:`sparqlqa.stages.form_query`) leaves the form, the count or yes/no and the order of the
matched candidates on :class:`~sparqlqa.stages.execute.Candidates`; ranking orders nodes by similarity.
:func:`shape_answer` puts the form's order back: for a superlative or comparison the matched items come
in the query's order (the winner first), for a yes/no the node asked about first; vector additions stay
after the matched items.
"""

from __future__ import annotations

from sparqlqa.stages.answer import Answer
from sparqlqa.stages.ordering import query_first

__all__ = ["shape_answer"]


def shape_answer(answer: Answer) -> Answer:
    """Copy the form and value from ``answer.candidates`` and order the items as the form asks."""
    candidates = answer.candidates
    if candidates is None:
        return answer
    answer.form = candidates.form or "list"
    answer.value = candidates.value
    order = {c.iri: n for n, c in enumerate(candidates.items)}
    first: list[str] = []
    if answer.form == "boolean" and answer.linked is not None and answer.triplets is not None:
        first = [m.iri for text in answer.triplets.form.choices for m in answer.linked.links.get(text, [])[:1]]
    if candidates.ordered or first:
        answer.items = query_first(answer.items, order, first)
    return answer

