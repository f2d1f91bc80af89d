"""What shape of answer a question asks for, and the SPARQL that shape needs.

A question has a *form* — ``list`` (which X …), ``count`` (how many …) or ``boolean`` (did / is …) —
and optionally an ordering (superlatives: "the largest budget" orders by a value and keeps the first),
numeric or date filters ("released after 2000") and *choices*: the named nodes the target must be one of
("which is longer, A or B"; "did Nolan direct **Inception**").  The form refers to variables of the
question's triplets: ``?x1 -> budget -> ?v`` plus ``order_by ?v desc, limit 1``.

Everything here becomes query text only through pyoxigraph terms (typed literals for values), so a
filter value such as ``"2000) || true"`` is refused, never pasted:

>>> f = ValueFilter("?v", ">", "2000")
>>> filter_expression("v_v", f, XSD + "integer")
'FILTER(?v_v > "2000"^^<http://www.w3.org/2001/XMLSchema#integer>)'
>>> filter_expression("v_v", f, XSD + "date")
'FILTER(?v_v > "2000-12-31"^^<http://www.w3.org/2001/XMLSchema#date>)'
>>> filter_expression("v_v", ValueFilter("?v", ">", "2000) || true"), XSD + "integer") is None
True
"""

from __future__ import annotations

__all__ = ["AGGREGATES", "FORM_EXAMPLE", "FORM_RULE", "FORM_SCHEMA", "OPERATORS",
           "TABLE_EXAMPLE", "TABLE_RULE", "XSD",
           "Aggregate", "AnswerForm", "OrderBy", "ValueFilter",
           "filter_expression", "form_from_data", "form_from_lines", "is_date_type", "is_numeric_type",
           "order_keys"]

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from pyoxigraph import Literal, NamedNode

from sparqlqa.query.prefixes import WELL_KNOWN_PREFIXES
from sparqlqa.stages.modes import FORMS, Form, values

#: the XML Schema namespace, as text
XSD = WELL_KNOWN_PREFIXES["xsd"]
#: the aggregate functions an analytical form may ask for (over a value variable, or COUNT of nodes)
AGGREGATES = ("count", "avg", "sum", "max", "min")
#: comparison operators a filter may use (anything else is dropped with a note)
OPERATORS = (">", ">=", "<", "<=", "=", "!=")
_NUMERIC = {"integer", "decimal", "double", "float", "int", "long", "short", "byte", "nonNegativeInteger",
            "positiveInteger", "negativeInteger", "nonPositiveInteger", "unsignedInt", "unsignedLong",
            "unsignedShort", "unsignedByte"}
_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")
_YEAR = re.compile(r"^\d{4}$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_OP_WORDS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<=", "eq": "=", "ne": "!=", "==": "="}


@dataclass
class OrderBy:
    """Order the answers by a variable's value (``desc``: largest first)."""

    variable: str
    direction: str = "desc"  # "asc" | "desc"


@dataclass
class ValueFilter:
    """``variable op value``: a number, a year or an ISO date, compared as the data's type."""

    variable: str
    op: str
    value: str


@dataclass
class Aggregate:
    """One aggregate column: ``function`` (:data:`AGGREGATES`) over a variable (``distinct``: distinct values)."""

    function: str
    variable: str
    distinct: bool = False


@dataclass
class AnswerForm:
    """The form of an answer.  ``choices``: constant texts the target must be one of.

    The analytical fields (a graph mapped from tables): ``select`` the answer's columns (variables, in order),
    ``aggregates`` its aggregate columns, ``group_by`` the variables the aggregates are per, ``distinct``
    rows without repeats (else a row per match, as SQL gives them)."""

    form: str = "list"
    order_by: list[OrderBy] = field(default_factory=list)
    filters: list[ValueFilter] = field(default_factory=list)
    limit: int | None = None
    choices: list[str] = field(default_factory=list)
    select: list[str] = field(default_factory=list)
    aggregates: list[Aggregate] = field(default_factory=list)
    group_by: list[str] = field(default_factory=list)
    distinct: bool = False

    @property
    def plain(self) -> bool:
        """True for a plain list (nothing to add to the query)."""
        return self.form == Form.LIST and not (self.order_by or self.filters or self.limit or self.choices
                                            or self.analytic)

    @property
    def analytic(self) -> bool:
        """True when the form asks for columns, aggregates or groups (compiled by :mod:`sparqlqa.stages.analytic`)."""
        return bool(self.select or self.aggregates or self.group_by)

    def variables(self) -> list[str]:
        return list(dict.fromkeys([o.variable for o in self.order_by] + [f.variable for f in self.filters]))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> AnswerForm:
        return form_from_data(data or {})[0]


#: the JSON the LLM may add to its triplets (all optional)
FORM_SCHEMA: dict[str, Any] = {
    "form": {"type": "string", "enum": [form.value for form in FORMS]},
    "order_by": {"type": "array", "items": {"type": "object", "properties": {
        "variable": {"type": "string"}, "direction": {"type": "string", "enum": ["asc", "desc"]}},
        "required": ["variable"]}},
    "filters": {"type": "array", "items": {"type": "object", "properties": {
        "variable": {"type": "string"}, "op": {"type": "string", "enum": list(OPERATORS)},
        "value": {"type": ["string", "number"]}}, "required": ["variable", "op", "value"]}},
    "limit": {"type": ["integer", "null"]},
    "choices": {"type": "array", "items": {"type": "string"}},
    "select": {"type": "array", "items": {"type": "string"}},
    "aggregates": {"type": "array", "items": {"type": "object", "properties": {
        "function": {"type": "string", "enum": list(AGGREGATES)}, "variable": {"type": "string"},
        "distinct": {"type": "boolean"}}, "required": ["function", "variable"]}},
    "group_by": {"type": "array", "items": {"type": "string"}},
    "distinct": {"type": "boolean"},
}


#: the prompt's rule on forms (stage 1)
FORM_RULE = (
    "Say the answer's form: \"form\" is \"list\" (which/who/what …), \"count\" (how many …) or "
    "\"boolean\" (did/is/was … yes-or-no; put the node the question asks about in \"choices\" and make the "
    "variable it stands for the target). For superlatives (largest, longest, earliest, oldest, most …) add a "
    "triplet to a value variable and \"order_by\" [{\"variable\": that variable, \"direction\": \"desc\" or "
    "\"asc\"}] with \"limit\": 1; for a comparison of named nodes (which is longer, A or B) also put A and B in "
    "\"choices\". Numeric or date conditions (after 2000, over 100 million) become \"filters\" [{\"variable\", "
    "\"op\" (> >= < <= = !=), \"value\" (digits, a year or YYYY-MM-DD)}] on a value variable.")
#: one worked example of a form (from a different graph)
FORM_EXAMPLE = (
    'Question: "Which is the longest novel by an author born in Dublin published after 1950?"\n'
    '{"triplets": [{"head": "?x1", "relation": "written by", "tail": "?x2"},\n'
    '  {"head": "?x2", "relation": "born in", "tail": {"kind": "constant", "text": "Dublin"}},\n'
    '  {"head": "?x1", "relation": "number of pages", "tail": "?v1"},\n'
    '  {"head": "?x1", "relation": "publication date", "tail": "?v2"}],\n'
    ' "target": "?x1", "form": "list", "order_by": [{"variable": "?v1", "direction": "desc"}], "limit": 1,\n'
    ' "filters": [{"variable": "?v2", "op": ">", "value": "1950"}]}')


#: the prompt's rule on analytical forms, for a graph mapped from tables only (other KBs keep their prompt)
TABLE_RULE = (
    "This graph was mapped from database tables: names and other data are values of relations (\"name: "
    "author → value\"). A constant the data stores as a value (a name, a country, a code) is the tail of its "
    "value relation: (?x1, name, \"Ann Berg\"). Always write a triplet, even for all things of a type (\"how many "
    "authors\": ?x1, author name, ?v1). Answer with values as the data stores them (a name variable, not "
    "the node) unless the question asks for the things themselves. Several columns (\"the names and ages\"): "
    "\"select\" lists their variables in the question's order. Figures: \"aggregates\" [{\"function\": \"count\", "
    "\"avg\", \"sum\", \"max\" or \"min\", \"variable\"}] — count a node variable to count things, the others over "
    "a value variable; an aggregated variable in \"select\" is that aggregate's column, other aggregates come "
    "after the selected columns. Figures per group (\"for each city\", \"per country\"): \"group_by\" the "
    "group's variable and select what names the group. None/never/without/not: mark the triplets that must not "
    "hold \"negated\": true. Different/distinct values: \"distinct\": true. The most/least/top k: \"order_by\" "
    "the value or aggregated variable with \"limit\": k.")
#: ... and its worked examples (from a different graph)
TABLE_EXAMPLE = (
    'Question: "Show the name of each author born in Dublin and the number of novels they wrote, most first."\n'
    '{"triplets": [{"head": {"kind": "variable", "text": "?x1", "type": "novel"}, "relation": "author",\n'
    '   "tail": {"kind": "variable", "text": "?x2", "type": "author"}},\n'
    '  {"head": "?x2", "relation": "author name", "tail": "?v1"},\n'
    '  {"head": "?x2", "relation": "birth city", "tail": {"kind": "constant", "text": "Dublin"}}],\n'
    ' "target": "?x2", "select": ["?v1", "?x1"], "aggregates": [{"function": "count", "variable": "?x1"}],\n'
    ' "group_by": ["?x2"], "order_by": [{"variable": "?x1", "direction": "desc"}]}\n'
    'Question: "What are the names of authors without any novel?"\n'
    '{"triplets": [{"head": {"kind": "variable", "text": "?x2", "type": "author"}, "relation": "author name",\n'
    '   "tail": "?v1"},\n'
    '  {"head": {"kind": "variable", "text": "?x1", "type": "novel"}, "relation": "author", "tail": "?x2",\n'
    '   "negated": true}],\n'
    ' "target": "?v1", "select": ["?v1"]}')


def _variable(text: Any) -> str | None:
    cleaned = re.sub(r"[^A-Za-z0-9_]", "", str(text or ""))
    return "?" + cleaned if cleaned else None


def _order(item: Any) -> OrderBy | None:
    if isinstance(item, str):
        parts = item.split()
        item = {"variable": parts[0] if parts else "", "direction": parts[1] if len(parts) > 1 else "desc"}
    if not isinstance(item, dict):
        return None
    variable = _variable(item.get("variable"))
    direction = str(item.get("direction") or "desc").strip().lower()
    direction = "asc" if direction.startswith("asc") else "desc"
    return OrderBy(variable, direction) if variable else None


def _value_filter(item: Any) -> ValueFilter | None:
    if not isinstance(item, dict):
        return None
    variable = _variable(item.get("variable"))
    op = str(item.get("op") or "").strip().lower()
    op = _OP_WORDS.get(op, op)
    value = str(item.get("value") if item.get("value") is not None else "").strip()
    if not variable or op not in OPERATORS or not value:
        return None
    return ValueFilter(variable, op, value)


def _aggregate(item: Any) -> Aggregate | None:
    if not isinstance(item, dict):
        return None
    function = str(item.get("function") or "").strip().lower()
    variable = _variable(item.get("variable"))
    if function not in AGGREGATES or not variable:
        return None
    return Aggregate(function, variable, bool(item.get("distinct")))


def _analytic_fields(form: AnswerForm, data: Mapping[str, object], notes: list[str]) -> None:
    """``select``, ``aggregates`` and ``group_by`` of the LLM's answer, leniently."""
    for key in ("select", "group_by"):
        raw = data.get(key)
        names = [_variable(v) for v in (raw if isinstance(raw, list) else [raw] if raw else [])]
        setattr(form, key, list(dict.fromkeys(n for n in names if n)))
    form.distinct = data.get("distinct") is True
    raw = data.get("aggregates")
    for item in raw if isinstance(raw, list) else [raw] if raw else []:
        parsed = _aggregate(item)
        if parsed is None:
            notes.append(f"aggregates: {str(item)[:80]!r} is malformed and was skipped")
        else:
            form.aggregates.append(parsed)


def form_from_data(data: Any) -> tuple[AnswerForm, list[str]]:
    """The form fields of a JSON object (the LLM's answer), leniently, and notes on what was dropped.

    >>> form, notes = form_from_data({"form": "count", "order_by": ["?v desc"], "limit": "3",
    ...                               "filters": [{"variable": "v", "op": "gt", "value": 2000}]})
    >>> form.form, form.order_by, form.filters, form.limit, notes
    ('count', [OrderBy(variable='?v', direction='desc')], [ValueFilter(variable='?v', op='>', value='2000')], 3, [])
    """
    form, notes = AnswerForm(), list[str]()
    if not isinstance(data, dict):
        return form, notes
    stated = str(data.get("form") or "list").strip().lower()
    form.form = stated if stated in FORMS else Form.LIST.value
    _analytic_fields(form, data, notes)
    if stated not in FORMS and not (stated in values(Form) and form.analytic):  # a table's form is its columns'
        notes.append(f"unknown answer form {stated!r}: answering as a list")
    for key in ("order_by", "filters"):
        raw = data.get(key)
        for item in raw if isinstance(raw, list) else [raw] if raw else []:
            parsed = _order(item) if key == "order_by" else _value_filter(item)
            if isinstance(parsed, OrderBy):
                form.order_by.append(parsed)
            elif isinstance(parsed, ValueFilter):
                form.filters.append(parsed)
            else:
                notes.append(f"{key}: {str(item)[:80]!r} is malformed and was skipped")
    limit = data.get("limit")
    if isinstance(limit, (int, str)) and str(limit).strip().isdigit() and int(limit) > 0:
        form.limit = int(limit)
    choices = data.get("choices")
    if isinstance(choices, list):
        form.choices = [str(c).strip() for c in choices if str(c).strip()]
    return form, notes


_FORM_LINE = re.compile(r"^\s*(form|order(?:\s*by)?|filters?|limit|choices?)\s*[:=]\s*(.*)$", re.IGNORECASE)
_FILTER_TEXT = re.compile(r"^\s*(\??[A-Za-z0-9_]+)\s*(>=|<=|!=|==|=|>|<)\s*['\"]?([^'\"]+?)['\"]?\s*$")


def form_from_lines(lines: list[str]) -> tuple[AnswerForm, list[str]]:
    """The form from arrow-format meta lines (``form: count``, ``order by: ?v desc``, ``filter: ?v > 2000``,
    ``limit: 1``, ``choices: Avatar; Titanic``); returns the form and the lines that were not form lines.

    >>> form, rest = form_from_lines(["form: boolean", "choices: 'Inception'", "filter: ?y >= 2000", "x"])
    >>> form.form, form.choices, form.filters[0].op, rest
    ('boolean', ['Inception'], '>=', ['x'])
    """
    data: dict[str, Any] = {"order_by": [], "filters": []}
    rest = []
    for line in lines:
        match = _FORM_LINE.match(line)
        if match is None:
            rest.append(line)
            continue
        key, value = match.group(1).lower(), match.group(2).strip()
        if key == "form":
            data["form"] = value.strip(" '\"")
        elif key.startswith("order"):
            data["order_by"] += [v.strip() for v in value.split(";") if v.strip()]
        elif key.startswith("filter"):
            for part in value.split(";"):
                found = _FILTER_TEXT.match(part)
                data["filters"].append({"variable": found.group(1), "op": found.group(2), "value": found.group(3)}
                                       if found else part)
        elif key == "limit":
            data["limit"] = value
        else:
            data["choices"] = [c.strip(" '\"") for c in value.split(";") if c.strip(" '\"")]
    return form_from_data(data)[0], rest


# -- SPARQL -------------------------------------------------------------------------------------------


def is_numeric_type(datatype: str | None) -> bool:
    return datatype is not None and datatype.startswith(XSD) and datatype[len(XSD):] in _NUMERIC


def is_date_type(datatype: str | None) -> bool:
    return datatype in (XSD + "date", XSD + "dateTime")


def _typed(value: str, datatype: str) -> str:
    return str(Literal(value, datatype=NamedNode(datatype)))


def _date_bound(op: str, value: str) -> tuple[str, str] | None:
    """A year compared with dates: "after 2000" is after 2000-12-31, "before 2000" before 2000-01-01."""
    if _DATE.match(value):
        return op, value
    if not _YEAR.match(value):
        return None
    if op in (">", "<="):
        return op, f"{value}-12-31"
    if op in ("<", ">="):
        return op, f"{value}-01-01"
    return None


def filter_expression(var: str, flt: ValueFilter, datatype: str | None) -> str | None:
    """``FILTER(...)`` comparing ``?var`` (values of ``datatype``) with the filter's value as that type:
    numbers as numbers, years and dates as dates; None when the value cannot be read as one."""
    value = flt.value.replace(",", "").strip()
    if flt.op not in OPERATORS:
        return None
    if is_date_type(datatype) or (datatype is None and _DATE.match(value)):
        if flt.op in ("=", "!=") and _YEAR.match(value):
            return f"FILTER(YEAR(?{var}) {flt.op} {_typed(value, XSD + 'integer')})"
        bound = _date_bound(flt.op, value)
        if bound is None:
            return None
        op, day = bound
        if datatype == XSD + "dateTime":
            return f"FILTER(?{var} {op} {_typed(day + 'T00:00:00', XSD + 'dateTime')})"
        return f"FILTER(?{var} {op} {_typed(day, XSD + 'date')})"
    if not _NUMBER.match(value):
        return None
    kind = "integer" if re.fullmatch(r"[+-]?\d+", value) else "decimal"
    literal = _typed(value.lstrip("+"), XSD + kind)
    if datatype == XSD + "gYear":
        return f"FILTER(YEAR(?{var}) {flt.op} {literal})"
    if is_numeric_type(datatype):
        return f"FILTER(?{var} {flt.op} {literal})"
    return f"FILTER({NamedNode(XSD + 'decimal')}(STR(?{var})) {flt.op} {literal})"


def order_keys(target: str, orders: list[tuple[str, str]], numeric_text: set[str] | frozenset[str] = frozenset(),
               ) -> list[str]:
    """The ORDER BY keys ``DESC(?v) ?target`` for (variable name, direction) pairs (the target breaks ties),
    each written from terms; variables in ``numeric_text`` hold numbers written as text and are ordered as
    decimals.

    >>> order_keys("v_x", [("v_v", "desc")])
    ['DESC(?v_v)', '?v_x']
    >>> order_keys("v_x", [("v_v", "asc")], {"v_v"})
    ['ASC(<http://www.w3.org/2001/XMLSchema#decimal>(STR(?v_v)))', '?v_x']
    """
    cast = NamedNode(XSD + "decimal")
    keys = [f"{'DESC' if d == 'desc' else 'ASC'}({f'{cast}(STR(?{v}))' if v in numeric_text else f'?{v}'})"
            for v, d in orders]
    return [*keys, f"?{target}"]
