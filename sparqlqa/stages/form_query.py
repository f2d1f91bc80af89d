"""Stage 2 for answer forms: the datatypes a filter compares with, and the count or yes/no query.

:func:`value_datatypes` reads, for each filtered or ordered variable, the datatype of the values its
relation holds (one sampled row), so "after 2000" compares a date with a date and "over 100 million"
a number with a number.  :func:`run_form` runs the ``COUNT`` or ``ASK`` query
(:func:`~sparqlqa.stages.compile.compile_form`) on the tier that found the answers; its record joins
``Candidates.queries``, so ``--save-sparql`` writes that query too.
"""

from __future__ import annotations

__all__ = ["form_anchors", "run_form", "value_datatypes"]

import re
from typing import TYPE_CHECKING, Any

from pyoxigraph import Literal

from sparqlqa.errors import QueryError
from sparqlqa.query.built_query import BuiltQuery
from sparqlqa.stages.compile import ExecuteOptions, Plan, compile_form
from sparqlqa.stages.forms import is_numeric_type
from sparqlqa.stages.modes import Form

if TYPE_CHECKING:
    from sparqlqa.kb.knowledge_base import KnowledgeBase

_NUMBER_TEXT = re.compile(r"[+-]?\d+(?:\.\d+)?")


def form_anchors(plan: Plan, used: list[int]) -> bool:
    """Whether the form ties the target to the KB when no triplet names a node: named choices ("A or B"),
    or a typed target that is ordered or filtered ("the longest film", "films with a budget over …")."""
    if plan.choices:
        return True
    if not (plan.form.order_by or plan.form.filters):
        return False
    return any(s.var == plan.target and s.type_iri for i in used
               for s in (plan.patterns[i].head, plan.patterns[i].tail))


def value_datatypes(kb: KnowledgeBase, plan: Plan) -> dict[str, str]:
    """``{variable: datatype IRI}`` for the form's variables that are objects of a known relation."""
    found: dict[str, str] = {}
    wanted = set(plan.form.variables())
    for pattern in plan.patterns.values():
        var = pattern.tail.var
        if var not in wanted or var in found or pattern.predicate is None:
            continue
        query = BuiltQuery.select(f"SELECT ?o WHERE {{ ?s {pattern.predicate} ?o . FILTER(isLiteral(?o)) }} LIMIT 1")
        try:
            rows = kb.query(query).rows
        except QueryError:
            continue
        value = rows[0][0] if rows else None
        if isinstance(value, Literal):
            found[var] = value.datatype.value
            if not is_numeric_type(found[var]) and _NUMBER_TEXT.fullmatch(value.value.strip()):
                plan.numeric_text.add(var)
    return found


def run_form(kb: KnowledgeBase, plan: Plan, used: list[int] | None, options: ExecuteOptions, result: Any) -> None:
    """Set ``result.form``/``value``/``ordered`` (``result``: the :class:`~sparqlqa.stages.execute.Candidates`
    being built) and run the count or yes/no query over the patterns ``used``."""
    result.form = plan.form.form
    result.choices = [m.iri for m in plan.choices or []]
    result.ordered = bool(plan.form.order_by) and any(o.variable for o in plan.form.order_by)
    if plan.form.form == Form.LIST:
        return
    if used is None:
        result.value = 0 if plan.form.form == Form.COUNT else False
        result.notes.append(f"no triplet could be matched: the {plan.form.form} is "
                            f"{result.value} for want of a pattern")
        return
    if plan.form.form == Form.BOOLEAN and plan.choices is not None and not plan.choices:
        result.value = False
        result.notes.append("the node the yes/no question asks about is not in the KB: no")
        return
    if plan.form.form == Form.BOOLEAN and plan.form.order_by and plan.choices:
        # "is A longer than B": yes when the ordered query (choices as VALUES) puts A first
        result.value = bool(result.items) and result.items[0].iri == plan.choices[0].iri
        return
    compiled = compile_form(plan, used, options, tier=0 if plan.form.form == Form.BOOLEAN else _tier_of(result, used))
    if compiled is None:
        return
    result.compiled.append(compiled)
    try:
        answer = kb.query(compiled.built())
    except QueryError as exc:
        result.notes.append(f"the {plan.form.form} query failed: {exc}")
        return
    result.queries.append(answer.history())
    if plan.form.form == Form.BOOLEAN:
        result.value = bool(answer.boolean)
    else:
        column = answer.column("count")
        count = column[0] if column else None
        result.value = int(count.value) if isinstance(count, Literal) else 0


def _tier_of(result: Any, used: list[int]) -> int:
    for compiled in result.compiled:
        if compiled.triplet_indexes == sorted(used):
            return int(compiled.tier)
    return 0

