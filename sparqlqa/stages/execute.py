"""Stage 2: run the compiled triplet patterns on the KB and collect answer candidates by tier.

Substitution (the paper's SUBSTITUTE) is done as one conjunctive query per tier:
the join of all usable triplets binds each variable to exactly the nodes that
satisfy every triplet together, which is the fixpoint SUBSTITUTE reaches by
narrowing variable sets one triplet at a time (the same on tree-shaped patterns,
tighter on cycles).  When a tier finds fewer than ``min_candidates`` targets the
weakest triplet is dropped and the next tier runs; earlier tiers rank first.

Per tier two queries run, both recorded in ``Candidates.queries``: the
standalone target query (also kept as a :class:`CompiledQuery`) and an evidence
query over the found targets that binds every edge connecting them to the
linked constants.

>>> from sparqlqa.kb.store import OxigraphStore
>>> from sparqlqa.kb.knowledge_base import KnowledgeBase
>>> from sparqlqa.stages.triplets import parse_arrow_triplets
>>> from sparqlqa.stages.linking import LinkedConstants, NodeMatch
>>> store = OxigraphStore.in_memory()
>>> store.oxstore.update("INSERT DATA { <http://x/alien> <http://x/by> <http://x/ridley> }")
>>> kb = KnowledgeBase.in_memory("demo", store)
>>> t = parse_arrow_triplets("|?1| -> by -> 'Ridley Scott'", schema=kb.schema)
>>> linked = LinkedConstants({"Ridley Scott": [NodeMatch("http://x/ridley", "Ridley Scott", 1.0, "exact")]})
>>> found = find_candidates(t, linked, kb, ExecuteOptions())
>>> [(c.iri, c.tier, c.evidence.triples) for c in found.items]
[('http://x/alien', 0, [('http://x/alien', 'http://x/by', 'http://x/ridley')])]
"""

from __future__ import annotations

__all__ = ["Candidate", "Candidates", "CompiledQuery", "Evidence", "ExecuteOptions", "drop_constant_nodes",
           "find_candidates"]

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from pyoxigraph import BlankNode, Literal, NamedNode

from sparqlqa.errors import QueryError
from sparqlqa.kb.identity import identity_of
from sparqlqa.kb.records import QueryRecord
from sparqlqa.kb.terms import is_node_key, term_key
from sparqlqa.query.built_query import BuiltQuery
from sparqlqa.stages.compile import (
    CompiledQuery,
    ExecuteOptions,
    Plan,
    alias_names,
    compile_query,
    component,
    prepare,
)
from sparqlqa.stages.form_query import form_anchors, run_form, value_datatypes
from sparqlqa.stages.modes import Form

if TYPE_CHECKING:
    from sparqlqa.kb.knowledge_base import KnowledgeBase
    from sparqlqa.kb.store import QueryResult
    from sparqlqa.stages.linking import LinkedConstants
    from sparqlqa.stages.triplets import Triplets

#: evidence triples kept per candidate
MAX_EVIDENCE = 20


@dataclass
class Evidence:
    """Edges ``(s, p, o)`` (IRIs) connecting an answer to the linked constants."""

    triples: list[tuple[str, str, str]] = field(default_factory=list)


@dataclass
class Candidate:
    """A node that satisfies ``satisfied`` triplets (tier 0: all kept triplets)."""

    iri: str
    tier: int
    satisfied: int
    evidence: Evidence


@dataclass
class Candidates:
    """Stage 2's result: candidates best tier first, every query that ran, what was dropped and why."""

    target: str | None
    items: list[Candidate] = field(default_factory=list)
    queries: list[QueryRecord] = field(default_factory=list)
    compiled: list[CompiledQuery] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    elapsed_ms: float = 0.0
    #: the target is a value (a literal, e.g. a date): items may be value keys (:mod:`sparqlqa.kb.terms`)
    target_is_value: bool = False
    #: the answer form (:class:`~sparqlqa.stages.modes.Form`): list, count, boolean, value or table;
    #: ``value`` the count, the yes/no or the one value (its lexical form); ``ordered``: ``items`` are in the
    #: order the question asks for
    form: str = Form.LIST
    value: int | bool | str | None = None
    ordered: bool = False
    #: the nodes the form's choices named ("A or B", the node a yes/no asks about): answers, never dropped
    choices: list[str] = field(default_factory=list)

    def iris(self, tier: int | None = None) -> list[str]:
        return [c.iri for c in self.items if tier is None or c.tier == tier]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["compiled"] = [c.to_dict() for c in self.compiled]  # the JSON of a compiled query: its own
        data["queries"] = [q.to_dict() for q in self.queries]
        data["elapsed_ms"] = round(self.elapsed_ms, 3)
        return data


def find_candidates(triplets: Triplets, linked: LinkedConstants, kb: KnowledgeBase,
                    options: ExecuteOptions | None = None) -> Candidates:
    """Narrow the target variable with the triplets; relax tier by tier while too few are found."""
    start = time.perf_counter()
    options = options or ExecuteOptions()
    result = Candidates(target=triplets.target)
    plan = prepare(triplets, linked, kb.schema, options)
    result.notes.extend(plan.notes)
    result.target_is_value = plan.target_is_value
    plan.datatypes = value_datatypes(kb, plan)
    plan.identity = identity_of(kb)
    kept = _initial(plan, result)
    last_used: list[int] = []
    found_used: list[int] | None = None
    tier = 0
    while kept:
        used = component(plan, kept)
        if not any(s.nodes for i in used for s in (plan.patterns[i].head, plan.patterns[i].tail)) \
                and not form_anchors(plan, used):
            result.notes.append(f"tier {tier}: no triplet ties the target to a known node; "
                                "leaving the ranking to vector search")
            break
        last_used = used
        if not _run_tier(kb, plan, used, tier, options, result):
            break
        if found_used is None and (result.items or plan.form.form != Form.LIST):
            found_used = used  # a count or yes/no is asked of every triplet, never of a relaxed tier
        if len(result.items) >= options.min_candidates or tier >= options.max_tiers or len(used) <= 1:
            break
        weakest = plan.relax_order(used)[0]
        kept = [i for i in used if i != weakest]
        tier += 1
        result.notes.append(f"relaxing: dropped triplet {weakest} (least reliable) for tier {tier}")
    result.dropped = [i for i in range(len(triplets.triplets)) if i not in last_used]
    run_form(kb, plan, found_used, options, result)
    result.elapsed_ms = (time.perf_counter() - start) * 1000
    return result


def _initial(plan: Plan, result: Candidates) -> list[int]:
    """The patterns connected to the target (others constrain nothing the answer depends on)."""
    if plan.target is None:
        result.notes.append("no target variable: no candidates from the KB (vector ranking takes over)")
        return []
    connected = component(plan, plan.usable)
    for i in plan.usable:
        if i not in connected:
            result.notes.append(f"triplet {i} is not connected to the target: ignored")
    if not connected:
        result.notes.append("no usable triplet constrains the target: no candidates from the KB "
                            "(vector ranking takes over)")
    return connected


def _run(kb: KnowledgeBase, sparql: BuiltQuery, result: Candidates) -> QueryResult | None:
    try:
        answer = kb.query(sparql)
    except QueryError as exc:
        result.notes.append(f"a query failed: {exc}")
        return None
    result.queries.append(answer.history())
    return answer


def _run_tier(kb: KnowledgeBase, plan: Plan, used: list[int], tier: int, options: ExecuteOptions,
              result: Candidates) -> bool:
    """Run one tier's target query and evidence query; add new candidates.  False if a query failed."""
    note = f"tier {tier}: {len(used)} triplet(s) {used}"
    compiled = compile_query(plan, used, options, tier=tier, note=note)
    result.compiled.append(compiled)
    answer = _run(kb, compiled.built(), result)
    if answer is None:
        return False
    have = {c.iri for c in result.items}
    found = [key for key in map(_answer_key(plan), answer.bindings()) if key is not None]
    new = [iri for iri in dict.fromkeys(found) if iri not in have]
    if len(answer.rows) >= options.limit:
        result.notes.append(f"tier {tier}: results cut at LIMIT {options.limit}")
    if not new:
        return True
    evidence = _evidence(kb, plan, used, tier, options, new, result)
    result.items.extend(Candidate(iri, tier, len(used), Evidence(evidence.get(iri, []))) for iri in new)
    return True


def _evidence(kb: KnowledgeBase, plan: Plan, used: list[int], tier: int, options: ExecuteOptions,
              targets: list[str], result: Candidates) -> dict[str, list[tuple[str, str, str]]]:
    """``{target: [(s, p, o), ...]}`` from one query binding every edge of the tier's patterns."""
    restrict = targets[: options.limit] if all(is_node_key(t) for t in targets) else None  # a blank node's
    query = compile_query(plan, used, options, tier=tier, evidence=True, restrict=restrict)  # name: no VALUES
    answer = _run(kb, query.built(), result)
    found: dict[str, list[tuple[str, str, str]]] = {}
    if answer is None:
        return found
    answer_key = _answer_key(plan)
    aliases = alias_names(plan, used)
    wanted = set(targets)
    for row in answer.bindings():
        target = answer_key(row)
        if target is None or target not in wanted:
            continue
        bucket = found.setdefault(target, [])
        for i in used:
            edge = _edge_of(plan, i, row, options, aliases)
            if edge is not None and edge not in bucket and len(bucket) < MAX_EVIDENCE:
                bucket.append(edge)
    return found


def _edge_of(plan: Plan, index: int, row: dict[str, Any], options: ExecuteOptions,
             aliases: dict[tuple[int, str], str] | None = None) -> tuple[str, str, str] | None:
    pattern = plan.patterns[index]
    names = aliases or {}
    head = row.get(names.get((index, "head"), pattern.head.var))
    tail = row.get(names.get((index, "tail"), pattern.tail.var))
    predicate = pattern.predicate if pattern.predicate is not None else row.get(f"p{index}")
    head_key, tail_key = term_key(head), term_key(tail)
    if head_key is None or tail_key is None or predicate is None:
        return None
    direction = row.get(f"d{index}")
    if options.undirected and direction is not None and direction.value == "0":
        head_key, tail_key = tail_key, head_key
    return (head_key, predicate.value, tail_key)


def _answer_key(plan: Plan) -> Callable[[dict[str, Any]], str | None]:
    """The key (:mod:`sparqlqa.kb.terms`) of a result row's target that can be an answer: an IRI (an alias's
    canonical node's), a literal when the target is a value, a blank node's label (it has no name of its
    own); ``None`` for anything else."""
    def key(row: dict[str, Any]) -> str | None:
        term = row.get(plan.target or "")
        if isinstance(term, NamedNode):
            return plan.identity.canonical(term.value)  # an owl:sameAs alias answers as its canonical node
        if plan.target_is_value and isinstance(term, Literal):
            return term_key(term)
        name = row.get(f"{plan.target}_name") if isinstance(term, BlankNode) else None
        return term_key(name) if isinstance(name, Literal) else None
    return key


def drop_constant_nodes(candidates: Candidates, linked: LinkedConstants) -> None:
    """A question does not ask for the nodes it names: drop a linked constant from the candidates when
    some other candidate satisfies its tier (or a better one).  A named node that alone satisfies its
    tier stays: the question asks for it back ("permission of permission of X's permission" on a KB
    where that chain returns X).

    >>> from sparqlqa.stages.linking import LinkedConstants, NodeMatch
    >>> items = [Candidate("x", 0, 2, Evidence([])), Candidate("y", 1, 1, Evidence([]))]
    >>> found = Candidates(None, list(items), [], [], [], [])
    >>> drop_constant_nodes(found, LinkedConstants({"X": [NodeMatch("x", "X", 1.0, "exact")]}))
    >>> [c.iri for c in found.items]
    ['x', 'y']
    """
    named = {match.iri for matches in linked.links.values() for match in matches} - set(candidates.choices)
    others = [c.tier for c in candidates.items if c.iri not in named]
    if not others:
        return
    best_other = min(others)
    kept = [c for c in candidates.items if c.iri not in named or c.tier < best_other]
    if len(kept) < len(candidates.items):
        candidates.items = kept
        candidates.notes.append("the nodes named in the question were left out of the candidates")
