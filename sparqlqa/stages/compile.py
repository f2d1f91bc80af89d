"""Triplets + linked constants → SPARQL 1.1 basic graph patterns, one standalone query per tier.

Every piece of query text comes from a term object or a name made here:
IRIs via ``str(NamedNode(iri))`` (which validates them), strings via
``str(Literal(text))``, variables as ``?v_<[A-Za-z0-9_]>`` / ``?c0`` / ``?p0``.
LLM or user text is never pasted, so a constant such as ``"} UNION {`` cannot
change a query's structure; the queries are plain SPARQL 1.1 and run unchanged
on Oxigraph and rdflib.

>>> from sparqlqa.stages.triplets import Term, Triplet, Triplets
>>> from sparqlqa.stages.linking import LinkedConstants, NodeMatch
>>> from sparqlqa.kb.schema import Schema
>>> t = Triplets("q", [Triplet(Term("variable", "?x1"), "directed by", Term("constant", "Ridley Scott"),
...                            relation_iri="http://x/directed_by")], "?x1", [], "parsed", [], [])
>>> linked = LinkedConstants({"Ridley Scott": [NodeMatch("http://x/ridley", "Ridley Scott", 1.0, "exact")]})
>>> plan = prepare(t, linked, Schema(), ExecuteOptions())
>>> print(compile_query(plan, plan.usable, ExecuteOptions(), tier=0).sparql)
SELECT DISTINCT ?v_x1 WHERE {
  VALUES ?c0 { <http://x/ridley> }
  ?v_x1 <http://x/directed_by> ?c0 .
  FILTER(isIRI(?v_x1))
}
ORDER BY ?v_x1
LIMIT 1000
"""

from __future__ import annotations

__all__ = ["CompiledQuery", "ExecuteOptions", "Pattern", "Plan", "Slot", "alias_names", "compile_form", "compile_query",
           "component", "label_lookup_query", "prepare", "variable_name"]

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pyoxigraph import Literal, NamedNode, Variable

from sparqlqa.errors import QueryError
from sparqlqa.kb.identity import Identity
from sparqlqa.kb.labels import NodeMatch, resolve_type
from sparqlqa.kb.schema import Schema
from sparqlqa.kb.terms import term_from_key
from sparqlqa.kb.vocab import OWL, RDF, RDFS
from sparqlqa.query import sparql_model as sq
from sparqlqa.query.built_query import BuiltQuery
from sparqlqa.stages.forms import AnswerForm, OrderBy, ValueFilter, filter_expression, order_keys

if TYPE_CHECKING:
    from sparqlqa.stages.linking import LinkedConstants
    from sparqlqa.stages.triplets import Term, Triplets


@dataclass
class ExecuteOptions:
    """How triplets become queries.

    ``ignore_relations``: match any predicate (the paper found this more robust);
    ``undirected``: match edges in either direction; ``use_types``: ``rdf:type`` for typed variables;
    ``limit``: LIMIT of every query; ``max_values``: most nodes per constant's VALUES;
    ``min_candidates``: relax (drop the weakest triplet) while fewer candidates were found;
    ``max_tiers``: most triplets dropped by relaxation.
    """

    ignore_relations: bool = False
    undirected: bool = False
    use_types: bool = True
    limit: int = 1000
    max_values: int = 50
    min_candidates: int = 1
    max_tiers: int = 3


@dataclass
class CompiledQuery:
    """A standalone SELECT for one tier: re-running it gives the same target bindings.  ``sparql`` is the
    text :attr:`query` renders to (:func:`~sparqlqa.query.sparql_model.render`)."""

    sparql: str
    triplet_indexes: list[int]
    tier: int
    note: str = ""
    #: the query as compiled (not in :meth:`to_dict`): the structure ``sparql`` was rendered from
    query: sq.SparqlQuery | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, query: sq.SparqlQuery, triplet_indexes: list[int], tier: int, note: str = "") -> CompiledQuery:
        return cls(sq.render(query), triplet_indexes, tier, note, query)

    @property
    def form(self) -> str:
        return self.query.form if self.query is not None else "SELECT"

    @property
    def services(self) -> tuple[str, ...]:
        """The endpoints its SERVICE blocks call."""
        return self.query.services() if self.query is not None else ()

    def to_dict(self) -> dict[str, Any]:
        return {"sparql": self.sparql, "triplet_indexes": list(self.triplet_indexes), "tier": self.tier,
                "note": self.note}

    def built(self) -> BuiltQuery:
        """The query to run: written from terms, so it declares its reading (no parse); with its structure
        (a KB group runs a remote member's SERVICE blocks from it)."""
        if self.query is not None:
            return BuiltQuery.of(self.query)
        return BuiltQuery(self.sparql, self.form, self.services)


@dataclass
class Slot:
    """One end of a pattern: a SPARQL variable name, plus the linked nodes when it is a constant."""

    var: str  # without "?"
    nodes: list[NodeMatch] | None = None  # None: a variable
    type_iri: str | None = None


@dataclass
class Pattern:
    """A triplet ready for SPARQL."""

    index: int
    head: Slot
    tail: Slot
    predicate: NamedNode | None  # None: any predicate
    reliability: float = 1.0


@dataclass
class Plan:
    """What can be queried: usable patterns (weakest last in ``relax_order``), the target, notes."""

    patterns: dict[int, Pattern] = field(default_factory=dict)
    target: str | None = None  # SPARQL variable name of the target, without "?"
    notes: list[str] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    type_predicate: str = RDF.type.value
    distinct: list[tuple[str, str]] = field(default_factory=list)  # SPARQL variable names, without "?"
    #: variables that may hold a value (a literal): objects of literal relations ("birth date")
    value_vars: set[str] = field(default_factory=set)
    #: the answer's form (:mod:`sparqlqa.stages.forms`); its variables are SPARQL names here (no "?")
    form: AnswerForm = field(default_factory=AnswerForm)
    #: the nodes the target must be one of (the form's linked choices); None: no choices
    choices: list[NodeMatch] | None = None
    #: each filtered or ordered variable's datatype IRI, when known (set by the caller from the data)
    datatypes: dict[str, str] = field(default_factory=dict)
    #: ordered variables whose values are numbers written as plain text ("2500000"): ordered as numbers
    numeric_text: set[str] = field(default_factory=set)
    #: a merged node type's IRIs (``dbo:Person`` and ``foaf:Person``), by the type IRI a slot names
    type_iris: dict[str, list[str]] = field(default_factory=dict)
    #: the KB's ``owl:sameAs`` groups: a named node matches its aliases' facts too (set by the caller)
    identity: Identity = field(default_factory=Identity)
    #: the target may be a blank node (it is the object of a relation with blank objects): such an answer
    #: is its label, bound to ``?<target>_name`` by the predicate here (None: the target is never blank)
    blank_label: str | None = None
    #: a KB group with a remote member: relation / node type IRI → the endpoint holding it; its patterns
    #: go into a ``SERVICE`` block (:mod:`sparqlqa.kb.group_service`)
    services: dict[str, str] = field(default_factory=dict)

    @property
    def target_is_value(self) -> bool:
        return self.target is not None and self.target in self.value_vars

    @property
    def usable(self) -> list[int]:
        return sorted(self.patterns)

    def relax_order(self, indexes: list[int]) -> list[int]:
        """``indexes`` weakest first: lowest reliability, then later triplets."""
        return sorted(indexes, key=lambda i: (self.patterns[i].reliability, -i))


def variable_name(text: str) -> str:
    """``?x1`` → ``v_x1``: only ``[A-Za-z0-9_]`` survive, so the name is always valid SPARQL."""
    return "v_" + (re.sub(r"[^A-Za-z0-9_]", "", text) or "x")


def _iri(value: str | None) -> NamedNode | None:
    """A validated IRI term, or None when ``value`` is empty or not an IRI."""
    if not value:
        return None
    try:
        return NamedNode(value)
    except ValueError:
        return None


def _reliability(matches: list[NodeMatch], flags: list[str], options: ExecuteOptions) -> float:
    """How much a triplet is trusted: strong, unambiguous links and known relations score high.

    >>> exact = NodeMatch("http://x/a", "A", 1.0, "exact")
    >>> _reliability([exact], [], ExecuteOptions()) > _reliability([exact, exact], [], ExecuteOptions())
    True
    >>> _reliability([exact], ["unknown-relation"], ExecuteOptions())
    0.5
    """
    score = 1.0 if matches else 0.95  # variable-variable triplets
    if matches:
        score = max(m.score for m in matches) / (1.0 + 0.1 * (len(matches) - 1))
    if "unknown-relation" in flags and not options.ignore_relations:
        score *= 0.5
    if "unknown-type" in flags:
        score *= 0.8
    return score


def _variable_types(triplets: Triplets, schema: Schema) -> dict[str, str]:
    """Each variable's first type that resolves against the schema (the target's stated type too)."""
    types: dict[str, str] = {}
    terms = [t for tr in triplets.triplets for t in (tr.head, tr.tail) if t.is_variable and t.type]
    for term in terms:
        iri = resolve_type(schema, term.type)
        name = variable_name(term.text)
        if iri is not None and name not in types:
            types[name] = iri
    if triplets.target and triplets.target_type:
        iri = resolve_type(schema, triplets.target_type)
        if iri is not None:
            types.setdefault(variable_name(triplets.target), iri)
    return types


def _slot(term: Term, linked: LinkedConstants, constants: dict[str, str], types: dict[str, str],
          options: ExecuteOptions) -> Slot:
    if term.is_variable:
        name = variable_name(term.text)
        return Slot(name, None, types.get(name) if options.use_types else None)
    var = constants.setdefault(term.text, f"c{len(constants)}")
    nodes = [m for m in linked.links.get(term.text, []) if _iri(m.iri) is not None]
    return Slot(var, nodes[: max(1, options.max_values)])


def prepare(triplets: Triplets, linked: LinkedConstants, schema: Schema, options: ExecuteOptions) -> Plan:
    """Usable patterns: constant–constant triplets skipped, triplets with unlinked constants dropped."""
    plan = Plan(target=variable_name(triplets.target) if triplets.target is not None else None,
                type_predicate=schema.type_predicate or RDF.type.value)
    constants: dict[str, str] = {}
    types = _variable_types(triplets, schema)
    plan.type_iris = {iri: schema.type_alternatives(iri) for iri in types.values()}
    plan.services = {**{r.iri: r.service for r in schema.relations if r.service},
                     **{t.iri: t.service for t in schema.types if t.service}}
    for index, triplet in enumerate(triplets.triplets):
        if triplet.negated:  # only the analytical compiler (stages/analytic.py) says what must not hold
            plan.skipped.append(index)
            plan.notes.append(f"triplet {index} is negated: skipped")
            continue
        if not triplet.head.is_variable and not triplet.tail.is_variable:
            plan.skipped.append(index)
            plan.notes.append(f"triplet {index} relates two constants: skipped")
            continue
        head, tail = (_slot(t, linked, constants, types, options) for t in (triplet.head, triplet.tail))
        unlinked = [t.text for t, s in ((triplet.head, head), (triplet.tail, tail)) if s.nodes == []]
        if unlinked:
            plan.skipped.append(index)
            plan.notes.append(f"triplet {index} dropped: {unlinked[0]!r} matches no KB node")
            continue
        predicate = None if options.ignore_relations else _iri(triplet.relation_iri)
        if triplet.relation_iri and predicate is None and not options.ignore_relations:
            plan.notes.append(f"triplet {index}: relation IRI is not a valid IRI; matching any predicate")
        matches = (head.nodes or []) + (tail.nodes or [])
        plan.patterns[index] = Pattern(index, head, tail, predicate,
                                       _reliability(matches, triplet.flags, options))
    names = {t.text: (variable_name(t.text) if t.is_variable else constants.get(t.text, ""))
             for tr in triplets.triplets for t in (tr.head, tr.tail)}
    plan.distinct = [(names[a], names[b]) for a, b in triplets.distinct
                     if names.get(a) and names.get(b) and names[a] != names[b]]
    plan.value_vars = _value_variables(plan, schema)
    plan.blank_label = _blank_label(plan, schema)
    _prepare_form(plan, triplets, linked)
    return plan


def _prepare_form(plan: Plan, triplets: Triplets, linked: LinkedConstants) -> None:
    """The form with SPARQL variable names, its choices linked; filters on unknown variables dropped."""
    form = triplets.form
    present = {s.var for p in plan.patterns.values() for s in (p.head, p.tail) if s.nodes is None}
    orders = [OrderBy(variable_name(o.variable), o.direction) for o in form.order_by]
    filters = [ValueFilter(variable_name(f.variable), f.op, f.value) for f in form.filters]
    for name in [o.variable for o in orders] + [f.variable for f in filters]:
        if name not in present:
            plan.notes.append(f"the answer form names {name[2:]!r}, which no usable triplet binds: ignored")
    plan.form = AnswerForm(form.form, [o for o in orders if o.variable in present],
                           [f for f in filters if f.variable in present], form.limit, list(form.choices))
    plan.value_vars |= {v for v in plan.form.variables() if v != plan.target}
    for pattern in plan.patterns.values():  # relaxation drops what the form compares last, if ever
        if pattern.tail.var in plan.form.variables():
            pattern.reliability = max(pattern.reliability, 1.5)
    if form.choices:
        nodes = [m for text in form.choices for m in linked.links.get(text, [])[:1] if _iri(m.iri) is not None]
        plan.choices = nodes
        missing = [text for text in form.choices if not linked.links.get(text)]
        if missing:
            plan.notes.append(f"choices that match no KB node: {', '.join(repr(t) for t in missing)}")


def _blank_label(plan: Plan, schema: Schema) -> str | None:
    """The label predicate to name a blank-node target by, when a relation that binds the target in the
    object place has blank objects ("filming location": ``[ a dbo:Place ; rdfs:label "…" ]``)."""
    blank = {r.iri for r in schema.relations if r.blank}
    if plan.target is None or plan.target in plan.value_vars or not any(
            p.tail.var == plan.target and p.predicate is not None and p.predicate.value in blank
            for p in plan.patterns.values()):
        return None
    return (schema.label_predicates or [RDFS.label.value])[0]


def _value_variables(plan: Plan, schema: Schema) -> set[str]:
    """Variables in the object place of a relation whose values are mostly literals."""
    literal = {r.iri for r in schema.relations if r.kind == "literal"}
    return {p.tail.var for p in plan.patterns.values()
            if p.tail.nodes is None and p.predicate is not None and p.predicate.value in literal}


def _filter(plan: Plan, var: str) -> list[sq.Element]:
    """What a variable may bind: the target an IRI (or a value, when it is one), an intermediate node an
    IRI or a blank node (an address record, a Freebase CVT), never a literal."""
    v = Variable(var)
    if var in plan.value_vars:
        return [sq.Filter.of(f"!isBlank({v})", var)]
    if var == plan.target and plan.blank_label is not None:  # a blank node answers by its label
        name = Variable(f"{var}_name")
        return [sq.Filter.of(f"isIRI({v}) || isBlank({v})", var),
                sq.Optional((sq.Triple(v, NamedNode(plan.blank_label), name, sq.Filter.of(f"isBlank({v})", var),
                                       dot=False),))]
    return [sq.Filter.of(f"isIRI({v})", var) if var == plan.target else sq.Filter.of(f"!isLiteral({v})", var)]


def _edge(pattern: Pattern, options: ExecuteOptions, plan: Plan | None = None,
          values: dict[str, sq.Values] | None = None) -> list[sq.Element]:
    """The patterns matching one triplet (a UNION of both directions when undirected); a relation a KB
    group's remote member holds: one ``SERVICE`` block, its constants' ``VALUES`` inside (``values``)."""
    head, tail, n = Variable(pattern.head.var), Variable(pattern.tail.var), pattern.index
    predicate: sq.Predicate = pattern.predicate if pattern.predicate is not None else Variable(f"p{n}")
    guard = None if pattern.predicate is not None else \
        sq.Filter.of(f"{predicate} != {NamedNode(RDF.type.value)}", f"p{n}")
    elements: list[sq.Element]
    if not options.undirected:
        elements = [sq.Triple(head, predicate, tail, guard)]
    else:
        direction = Variable(f"d{n}")
        elements = [sq.Union(((sq.Triple(head, predicate, tail, guard), sq.Bind("1", direction)),
                           (sq.Triple(tail, predicate, head, guard), sq.Bind("0", direction))))]
    endpoint = plan.services.get(pattern.predicate.value) if plan is not None and pattern.predicate else None
    if endpoint is None:
        return elements
    bound = [values[slot.var] for slot in (pattern.head, pattern.tail) if values and slot.var in values]
    return [sq.Service(NamedNode(endpoint), (*bound, *elements))]


def alias_names(plan: Plan, indexes: list[int]) -> dict[tuple[int, str], str]:
    """In a KB with ``owl:sameAs`` groups, a variable that several of ``indexes``' patterns share is matched,
    in each pattern after the first, by a variable of its own linked to it by ``(owl:sameAs|^owl:sameAs)?``:
    the patterns join on a node and on its other names (a fact one KB of a group states on ``dbr:X``,
    another on ``wd:Q…``).  ``{(pattern index, "head" | "tail"): that variable}``; empty without groups."""
    if not plan.identity:
        return {}
    seen: set[str] = set()
    names: dict[tuple[int, str], str] = {}
    for i in indexes:
        pattern = plan.patterns[i]
        for end, slot in (("head", pattern.head), ("tail", pattern.tail)):
            if slot.nodes is not None:
                continue
            if slot.var in seen:
                names[(i, end)] = f"{slot.var}_same{i}{end[0]}"
            seen.add(slot.var)
    return names


def _aliased(pattern: Pattern, names: dict[tuple[int, str], str]) -> Pattern:
    head, tail = names.get((pattern.index, "head")), names.get((pattern.index, "tail"))
    if head is None and tail is None:
        return pattern
    return replace(pattern, head=replace(pattern.head, var=head) if head else pattern.head,
                   tail=replace(pattern.tail, var=tail) if tail else pattern.tail)


def component(plan: Plan, indexes: list[int]) -> list[int]:
    """The patterns among ``indexes`` connected to the target (through shared variables)."""
    if plan.target is None:
        return []
    reached, chosen, changed = {plan.target}, set(), True
    while changed:
        changed = False
        for i in indexes:
            pattern = plan.patterns[i]
            ends = {s.var for s in (pattern.head, pattern.tail) if s.nodes is None}
            if i not in chosen and ends & reached:
                chosen.add(i)
                reached |= ends
                changed = True
    return sorted(chosen)


def _nodes(plan: Plan, nodes: list[NodeMatch]) -> tuple[NamedNode, ...]:
    """The IRIs of ``nodes`` and of their ``owl:sameAs`` aliases, as terms."""
    iris = dict.fromkeys(iri for m in nodes for iri in plan.identity.members(m.iri))
    return tuple(NamedNode(iri) for iri in iris)


def _type_nodes(plan: Plan, type_iri: str) -> list[NamedNode]:
    """The IRIs of a type (a merged type's several), as nodes."""
    return [node for iri in plan.type_iris.get(type_iri, [type_iri]) if (node := _iri(iri)) is not None]


def _type_patterns(plan: Plan, var: str, type_iri: str | None) -> list[sq.Element]:
    """``?var`` is of the type: one triple, or any of a merged type's IRIs (``VALUES ?var_type {…}``); in a
    KB with ``owl:sameAs`` groups, a node whose other name has the type is of it too."""
    if type_iri is None:
        return []
    nodes, v = _type_nodes(plan, type_iri), Variable(var)
    type_predicate: sq.Predicate = NamedNode(plan.type_predicate)
    if plan.identity:  # an owl:sameAs alias has its canonical node's type (and the other way round)
        type_predicate = sq.PathThen(sq.EitherWay(NamedNode(OWL.sameAs.value)), NamedNode(plan.type_predicate))
    elements: list[sq.Element]
    if len(nodes) <= 1:
        elements = [sq.Triple(v, type_predicate, node) for node in nodes]
    else:
        kind = Variable(f"{var}_type")
        elements = [sq.Values(kind, tuple(nodes)), sq.Triple(v, type_predicate, kind)]
    endpoint = plan.services.get(type_iri)  # a type only a KB group's remote member holds
    return [sq.Service(NamedNode(endpoint), tuple(elements))] if endpoint is not None and elements else elements


def _restriction(plan: Plan, restrict: list[str] | None, choices: bool) -> list[sq.Element]:
    """The target's ``VALUES``: the nodes an evidence query explains, else the form's choices."""
    if restrict is not None and plan.target:
        keys = dict.fromkeys(k for key in restrict for k in plan.identity.members(key))
        return [sq.Values(Variable(plan.target), tuple(term_from_key(k) for k in keys))]
    if choices and plan.choices is not None and plan.target:
        return [sq.Values(Variable(plan.target), _nodes(plan, plan.choices))]
    return []


def _where(plan: Plan, indexes: list[int], options: ExecuteOptions, restrict: list[str] | None,
           choices: bool = True, filters: bool = True) -> tuple[tuple[sq.Element, ...], list[str]]:
    """The group graph pattern and the variables (target first) of a conjunction of patterns (``choices``:
    the form's choices restrict the target; ``filters``: the form's value filters apply)."""
    elements = _restriction(plan, restrict, choices)
    variables: dict[str, str | None] = {plan.target: None} if plan.target else {}
    constants: dict[str, list[NodeMatch]] = {}
    for i in indexes:
        for slot in (plan.patterns[i].head, plan.patterns[i].tail):
            if slot.nodes is None:
                variables[slot.var] = variables.get(slot.var) or slot.type_iri
            else:
                constants[slot.var] = slot.nodes
    values = {var: sq.Values(Variable(var), _nodes(plan, nodes)) for var, nodes in constants.items()}
    elements.extend(values.values())
    aliases = alias_names(plan, indexes)
    for i in indexes:
        elements.extend(_edge(_aliased(plan.patterns[i], aliases), options, plan, values))
    same = sq.EitherWay(NamedNode(OWL.sameAs.value))
    for (i, end), name in aliases.items():  # the join also holds between a node's owl:sameAs names
        elements.append(sq.Triple(Variable(getattr(plan.patterns[i], end).var), same, Variable(name)))
    for var, type_iri in variables.items():
        elements.extend(_type_patterns(plan, var, type_iri))
    for var in variables:
        elements.extend(_filter(plan, var))
    present = set(variables) | set(constants)
    elements.extend(sq.Filter.of(f"{Variable(a)} != {Variable(b)}", a, b)
                    for a, b in plan.distinct if a in present and b in present)
    for flt in plan.form.filters if filters else []:
        expression = filter_expression(flt.variable, flt, plan.datatypes.get(flt.variable)) \
            if flt.variable in variables else None
        if expression is not None:
            elements.append(sq.Filter(expression, frozenset({flt.variable})))
    return (sq.merge_services(elements) if plan.services else tuple(elements)), list(variables)


def _projection(plan: Plan, indexes: list[int], options: ExecuteOptions, variables: list[str],
                orders: list[tuple[str, str]], evidence: bool) -> tuple[Variable, ...]:
    """The target (its blank node's name, its order keys), or every variable for evidence."""
    assert plan.target is not None
    named = [f"{plan.target}_name"] if plan.blank_label is not None else []
    if not evidence:
        return tuple(Variable(v) for v in dict.fromkeys([plan.target, *named, *(v for v, _ in orders)]))
    extra = [*named, *(v for i in indexes for v in (plan.patterns[i].head.var, plan.patterns[i].tail.var))]
    extra += alias_names(plan, indexes).values()
    extra += [f"p{i}" for i in indexes if plan.patterns[i].predicate is None]
    extra += [f"d{i}" for i in indexes if options.undirected]
    return tuple(Variable(v) for v in dict.fromkeys([*variables, *extra]))


def compile_query(plan: Plan, indexes: list[int], options: ExecuteOptions, *, tier: int, note: str = "",
                  evidence: bool = False, restrict: list[str] | None = None) -> CompiledQuery:
    """The conjunction of ``indexes`` as one SELECT (target only, or every variable for evidence)."""
    if plan.target is None:
        raise QueryError("cannot compile triplets without a target variable", hint="give the target, e.g. ?x1")
    # a yes/no lists what holds: of the node it asks about when it compares that node's values ("is A longer
    # than B", "was X released in 2010": the values shown, the ASK filters), else of the other end
    boolean = plan.form.form == "boolean"
    own = bool(plan.form.order_by or plan.form.filters)
    where, variables = _where(plan, indexes, options, restrict, choices=not boolean or own, filters=not boolean)
    orders = [(o.variable, o.direction) for o in plan.form.order_by if o.variable in variables]
    numeric = {v for v, _ in orders if v in plan.numeric_text}
    order = order_keys(plan.target, orders, numeric) if orders and not evidence else [f"{Variable(plan.target)}"]
    limit = max(1, int(options.limit))
    if orders and plan.form.limit and not evidence and plan.form.form != "count":
        limit = min(limit, plan.form.limit)
    query = sq.SparqlQuery("SELECT", where, _projection(plan, indexes, options, variables, orders, evidence),
                        distinct=True, order_by=tuple(order), limit=limit)
    return CompiledQuery.of(query, sorted(indexes), tier, note)


def compile_form(plan: Plan, indexes: list[int], options: ExecuteOptions, *, tier: int) -> CompiledQuery | None:
    """The query that answers a count or yes/no question over the tier's patterns: ``SELECT (COUNT(DISTINCT
    ?target) AS ?count)`` or ``ASK`` (the form's choices restrict the target); None for a list."""
    if plan.target is None or plan.form.form not in ("count", "boolean"):
        return None
    where, _ = _where(plan, indexes, options, None, choices=True)
    if plan.form.form == "count":
        count = sq.Projection(f"COUNT(DISTINCT {Variable(plan.target)})", Variable("count"))
        query = sq.SparqlQuery("SELECT", where, (count,))
    else:
        query = sq.SparqlQuery("ASK", where)
    return CompiledQuery.of(query, sorted(indexes), tier, f"{plan.form.form} of tier {tier}")


def label_lookup_query(text: str, label_predicates: list[str], *, type_iri: str | None = None,
                       type_predicate: str = RDF.type.value, limit: int = 10) -> str:
    """Nodes whose label equals ``text`` case-insensitively (for stores without a label index).

    The text enters the query only as ``str(Literal(text))``:

    >>> print(label_lookup_query('x" } UNION { ?s ?p ?o', ["http://www.w3.org/2000/01/rdf-schema#label"]))
    SELECT DISTINCT ?node ?label WHERE {
      VALUES ?p { <http://www.w3.org/2000/01/rdf-schema#label> }
      ?node ?p ?label .
      FILTER(isIRI(?node))
      FILTER(LCASE(STR(?label)) = LCASE("x\\" } UNION { ?s ?p ?o"))
    }
    ORDER BY ?node ?label
    LIMIT 10
    """
    predicates = " ".join(str(NamedNode(p)) for p in label_predicates)
    lines = ["SELECT DISTINCT ?node ?label WHERE {", f"  VALUES ?p {{ {predicates} }}", "  ?node ?p ?label .",
             "  FILTER(isIRI(?node))", f"  FILTER(LCASE(STR(?label)) = LCASE({Literal(text)}))"]
    type_node = _iri(type_iri)
    if type_node is not None:
        lines.append(f"  ?node {NamedNode(type_predicate)} {type_node} .")
    lines += ["}", "ORDER BY ?node ?label", f"LIMIT {max(1, int(limit))}"]
    return "\n".join(lines)
