"""Stage 2 for analytical forms: the triplets as one query with columns, aggregates, groups, a negated
pattern, an order and a limit (issue 34 item 3: what people ask of a graph mapped from tables).

The triplet JSON says which variables are the answer's columns (``select``), which are aggregated
(``aggregates``: COUNT/AVG/SUM/MAX/MIN), per what (``group_by``), which triplets must not hold
(``negated``), and the order and limit.  :func:`compile_analytic` builds the query from pyoxigraph terms:
a constant is the VALUES of its linked nodes, or, at the value end of a literal relation ("France" in
``singer#country``), a literal the stored value is compared with (case and datatype aside); filter values
go through :func:`~sparqlqa.stages.forms.filter_expression`.  Nothing of the LLM's text is pasted.

>>> from sparqlqa.kb.schema import RelationInfo, Schema
>>> from sparqlqa.stages.linking import LinkedConstants
>>> from sparqlqa.stages.triplets import triplets_from_data
>>> schema = Schema(relations=[RelationInfo("http://d/s#country", "country", 3, kind="literal")])
>>> t = triplets_from_data({"triplets": [{"head": "?x1", "relation": "country", "tail": "France"}],
...                         "target": "?x1", "form": "count"}, "q", schema)
>>> print(compile_analytic(t, LinkedConstants(), schema).sparql)
SELECT (COUNT(DISTINCT ?v_x1) AS ?count) WHERE {
  ?v_x1 <http://d/s#country> ?c0 .
  FILTER(LCASE(STR(?c0)) = "france")
}
"""

from __future__ import annotations

__all__ = ["AnalyticQuery", "compile_analytic", "wants_analytic"]

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyoxigraph import Literal, NamedNode

from sparqlqa.errors import QueryError
from sparqlqa.kb import vocab
from sparqlqa.kb.labels import resolve_type
from sparqlqa.stages.compile import variable_name
from sparqlqa.stages.forms import Aggregate, filter_expression

if TYPE_CHECKING:
    from sparqlqa.kb.schema import Schema
    from sparqlqa.stages.linking import LinkedConstants
    from sparqlqa.stages.triplets import Term, Triplet, Triplets

DECIMAL = vocab.XSD.decimal
#: most linked nodes a constant's VALUES holds
MAX_NODES = 5
#: one answer column: its variable name and its aggregate (None: the variable's own values)
Column = tuple[str, Aggregate | None]


@dataclass
class AnalyticQuery:
    """The compiled query, its answer columns (variable names, no ``?``), its aggregate columns
    (name → function) and whether its rows are ordered."""

    sparql: str
    columns: list[str]
    aggregates: dict[str, str] = field(default_factory=dict)
    ordered: bool = False


def _literal_relations(schema: Schema) -> set[str]:
    return {r.iri for r in schema.relations if r.kind == "literal"}


def wants_analytic(triplets: Triplets, *, tables: bool) -> bool:
    """Whether the triplets need the analytical query: columns, aggregates, groups or a negated triplet, or any
    triplets on a graph mapped from tables (``tables``: names and other data are values there, and rows repeat
    as SQL's do), except a yes/no or a choice between named nodes (the usual compiler's forms)."""
    form = triplets.form
    if form.analytic or any(t.negated for t in triplets.triplets):
        return True
    return tables and form.form != "boolean" and not form.choices


class _Builder:
    """The WHERE lines of the triplets, one variable per term."""

    def __init__(self, schema: Schema, linked: LinkedConstants) -> None:
        self.schema, self.linked = schema, linked
        self.literal = _literal_relations(schema)
        self.constants: dict[tuple[str, bool], str] = {}
        self.value_vars: set[str] = set()
        self.typed: set[str] = set()

    def term(self, term: Term, lines: list[str], after: list[str], *, value: bool) -> str:
        """The variable of one end (a constant's VALUES goes into ``lines``, a value's comparison into ``after``)."""
        if term.is_variable:
            return variable_name(term.text)
        key = (term.text, value)
        if key in self.constants:
            return self.constants[key]
        var = self.constants[key] = f"c{len(self.constants)}"
        if value:
            after.append(f"  FILTER(LCASE(STR(?{var})) = {Literal(term.text.strip().lower())})")
            return var
        nodes = [m.iri for m in self.linked.links.get(term.text, [])][:MAX_NODES]
        if not nodes:
            raise QueryError(f"{term.text!r} matches no KB node", hint="name it as the data does")
        lines.append(f"  VALUES ?{var} {{ {' '.join(str(NamedNode(iri)) for iri in nodes)} }}")
        return var

    def triple(self, index: int, triplet: Triplet, lines: list[str]) -> None:
        value = triplet.relation_iri in self.literal
        after: list[str] = []
        head = self.term(triplet.head, lines, after, value=False)
        tail = self.term(triplet.tail, lines, after, value=value and not triplet.tail.is_variable)
        predicate = str(NamedNode(triplet.relation_iri)) if triplet.relation_iri else f"?p{index}"
        lines.extend([f"  ?{head} {predicate} ?{tail} .", *after])
        if value:
            self.value_vars.add(tail)
        for term, var in ((triplet.head, head), (triplet.tail, tail)):
            type_iri = resolve_type(self.schema, term.type) if term.is_variable and term.type else None
            if type_iri is not None and var not in self.typed and not (value and var == tail):
                self.typed.add(var)
                lines.append(f"  ?{var} {NamedNode(self.schema.type_predicate)} {NamedNode(type_iri)} .")


def _where(triplets: Triplets, builder: _Builder) -> list[str]:
    lines: list[str] = []
    for index, triplet in enumerate(triplets.triplets):
        if not triplet.negated:
            builder.triple(index, triplet, lines)
    negated: list[str] = []
    for index, triplet in enumerate(triplets.triplets):
        if triplet.negated:
            builder.triple(index, triplet, negated)
    if negated:
        lines.append("  FILTER NOT EXISTS {\n  " + "\n  ".join(negated) + "\n  }")
    for flt in triplets.form.filters:
        expression = filter_expression(variable_name(flt.variable), flt, None)
        if expression is None:
            raise QueryError(f"the filter value {flt.value!r} is neither a number nor a date")
        lines.append("  " + expression)
    return lines


def _aggregate(agg: Aggregate, builder: _Builder) -> str:
    var = variable_name(agg.variable)
    if agg.function == "count":
        distinct = agg.distinct or var not in builder.value_vars
        return f"COUNT({'DISTINCT ' if distinct else ''}?{var})"
    if agg.function in ("avg", "sum"):
        return f"{agg.function.upper()}({DECIMAL}(STR(?{var})))"
    return f"{agg.function.upper()}(COALESCE({DECIMAL}(STR(?{var})), ?{var}))"


def _columns(triplets: Triplets) -> list[Column]:
    """The answer's columns: (variable name, its aggregate or None), in the order ``select`` names them,
    then the aggregates it does not name (two aggregates of one variable are two columns)."""
    form, target = triplets.form, triplets.target
    aggregates = list(form.aggregates)
    if not aggregates and form.form == "count" and target:
        aggregates = [Aggregate("count", target)]
    wanted = [variable_name(v) for v in form.select]
    if not wanted and target and (not aggregates or variable_name(target) in
                                  {variable_name(g) for g in form.group_by}):
        wanted = [variable_name(target)]
    columns: list[tuple[str, Aggregate | None]] = []
    for var in dict.fromkeys(wanted):
        found = next((a for a in aggregates if variable_name(a.variable) == var), None)
        if found is not None:
            aggregates.remove(found)
        columns.append((var, found))
    columns += [(variable_name(a.variable), a) for a in aggregates]
    if not columns:
        raise QueryError("the triplets name no answer column", hint="give the target or select")
    return columns


def _ranked(triplets: Triplets, columns: list[Column], builder: _Builder) -> tuple[list[Column], dict[str, Aggregate]]:
    """The columns with the figure a ranking is computed from last ("the most", "top k": an order on an aggregate
    with a limit shows that figure after the asked columns), and the order's aggregates that are no column.
    An order on a node variable the groups leave out is a count of it ("the library with the most books")."""
    form = triplets.form
    grouped = {variable_name(g) for g in form.group_by}
    selected = {variable_name(v) for v in form.select}
    plain = {var for var, agg in columns if agg is None}
    ranked, hidden = list(columns), {}
    for order in form.order_by:
        var = variable_name(order.variable)
        found = next((column for column in ranked if column[0] == var and column[1] is not None), None)
        if found is None and grouped and var not in grouped | plain | builder.value_vars:
            found = (var, Aggregate("count", order.variable))
            if not form.limit:
                hidden[var] = Aggregate("count", order.variable)
                continue
        elif found is None or var in selected or not form.limit:
            continue
        if found in ranked:
            ranked.remove(found)
        ranked.append(found)
    return ranked, hidden


def _order(triplets: Triplets, builder: _Builder, names: dict[str, str],
           hidden: dict[str, Aggregate]) -> list[str]:
    """ORDER BY keys: an aggregated variable by its aggregate, a value as a number when it reads as one."""
    keys = []
    for order in triplets.form.order_by:
        var = variable_name(order.variable)
        key = f"?{names[var]}" if var in names else _aggregate(hidden[var], builder) if var in hidden else \
            f"COALESCE({DECIMAL}(STR(?{var})), ?{var})" if var in builder.value_vars else f"?{var}"
        keys.append(f"{'DESC' if order.direction == 'desc' else 'ASC'}({key})")
    return keys


def compile_analytic(triplets: Triplets, linked: LinkedConstants, schema: Schema) -> AnalyticQuery:
    """The analytical query of ``triplets`` (:class:`~sparqlqa.errors.QueryError` when it cannot be built)."""
    builder = _Builder(schema, linked)
    lines = _where(triplets, builder)
    columns, hidden = _ranked(triplets, _columns(triplets), builder)
    summed = [(var, agg) for var, agg in columns if agg is not None]
    single_count = len(summed) == 1 and summed[0][1].function == "count"
    outputs = [var if agg is None else "count" if single_count else f"{agg.function}_{var[2:]}"
               for var, agg in columns]
    head = [f"?{out}" if agg is None else f"({_aggregate(agg, builder)} AS ?{out})"
            for (_, agg), out in zip(columns, outputs, strict=True)]
    distinct = "DISTINCT " if triplets.form.distinct else ""
    text = f"SELECT {distinct}" + " ".join(head) + " WHERE {\n" + "\n".join(lines) + "\n}"
    plain = [var for var, agg in columns if agg is None]
    groups = list(dict.fromkeys([*(variable_name(g) for g in triplets.form.group_by), *plain])) \
        if summed or hidden else []
    if groups:
        text += "\nGROUP BY " + " ".join(f"?{g}" for g in groups)
    names = {var: out for (var, agg), out in zip(columns, outputs, strict=True) if agg is not None}
    orders = _order(triplets, builder, names, hidden)
    if orders:
        text += "\nORDER BY " + " ".join(orders)
    if triplets.form.limit:
        text += f"\nLIMIT {int(triplets.form.limit)}"
    return AnalyticQuery(text, outputs, {out: agg.function for (_, agg), out in zip(columns, outputs, strict=True)
                                         if agg is not None}, bool(orders))
