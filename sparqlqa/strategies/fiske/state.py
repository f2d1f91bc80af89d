"""FiSKE's stateful record: clues, routes (with the clues each covers), and the whole run.

A :class:`Route` starts at the nodes one clue names and grows one :class:`Hop` per
step.  Its end is a set of nodes (the neighbours the LLM accepted, or whose name
equals a clue), so an answer set stays one route.  ``covered`` is the stateful
record: the clues this route has mapped, so each step only asks about the rest.

>>> route = Route(number=1, start_clue="Alien", start=["https://x/alien"], covered=["Alien"])
>>> route.unmapped(["Alien", "director"]), route.end, route.hops
(['director'], ['https://x/alien'], [])
"""

from __future__ import annotations

__all__ = ["FiskeRun", "Hop", "ModelFallback", "Relation", "Route"]

from dataclasses import asdict, dataclass, field
from typing import Any

from sparqlqa.kb.labels import NodeMatch, normalize_label
from sparqlqa.stages.modes import RouteStatus


@dataclass(frozen=True)
class Relation:
    """One way out of a node: a predicate and its direction; ``via`` is the second predicate
    when the neighbour is reached through an unnamed intermediate node (a Freebase CVT)."""

    predicate: str
    direction: str  # "out": end -p-> neighbour;  "in": neighbour -p-> end
    via: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Hop:
    """One step of a route: the relation taken, the clues it mapped, and every edge it used."""

    relation: Relation
    label: str  # the relation as shown to the LLM, e.g. "[in] directed by"
    clues: list[str]
    #: (from node, intermediate node or "", to node) for every accepted neighbour
    edges: list[tuple[str, str, str]]
    how: str  # "llm" (scored) | "name" (a neighbour's name equals a clue; no LLM call)
    score: float = 0.0

    @property
    def nodes(self) -> list[str]:
        return list(dict.fromkeys(edge[2] for edge in self.edges))

    def to_dict(self) -> dict[str, Any]:
        return {"relation": self.relation.to_dict(), "label": self.label, "clues": list(self.clues),
                "edges": [list(e) for e in self.edges], "how": self.how, "score": self.score}


@dataclass
class Route:
    """A path from a clue's start nodes; ``covered`` lists the clues it has mapped so far."""

    number: int
    start_clue: str
    start: list[str]
    covered: list[str]
    hops: list[Hop] = field(default_factory=list)
    status: RouteStatus = RouteStatus.ACTIVE
    parent: int | None = None
    note: str = ""

    @property
    def end(self) -> list[str]:
        """The nodes the route ends at."""
        return self.hops[-1].nodes if self.hops else list(self.start)

    def visited(self) -> set[str]:
        nodes = set(self.start)
        for hop in self.hops:
            nodes.update(hop.nodes)
        return nodes

    def unmapped(self, clues: list[str]) -> list[str]:
        """The clues this route has not mapped yet (in question order)."""
        done = {normalize_label(c) for c in self.covered}
        return [c for c in clues if normalize_label(c) not in done]

    def covers(self, clues: list[str]) -> bool:
        return not self.unmapped(clues)

    def extended(self, number: int, hop: Hop) -> Route:
        """A new route: this one plus ``hop`` (its clues added to the record)."""
        covered = list(dict.fromkeys([*self.covered, *hop.clues]))
        return Route(number=number, start_clue=self.start_clue, start=list(self.start), covered=covered,
                     hops=[*self.hops, hop], parent=self.number)

    def evidence(self, node: str) -> list[tuple[str, str, str]]:
        """The (s, p, o) triples leading from the start to ``node`` (one path, walked backwards)."""
        triples: list[tuple[str, str, str]] = []
        target = node
        for hop in reversed(self.hops):
            edge = next((e for e in hop.edges if e[2] == target), None)
            if edge is None:
                break
            triples[:0] = _edge_triples(hop.relation, *edge)
            target = edge[0]
        return triples

    def answer_nodes(self) -> list[tuple[str, list[tuple[str, str, str]]]]:
        """The route's answers with their evidence: its end nodes, except that a node reached because
        its name equals a clue is named in the question, not asked for, so the nodes that lead to it
        (over such name hops, backwards) answer instead.  Start nodes never answer."""
        cut = len(self.hops)
        while cut and self.hops[cut - 1].how == "name":
            cut -= 1
        prefix = Route(self.number, self.start_clue, self.start, self.covered, self.hops[:cut])
        answers = []
        for node in prefix.end if cut else []:
            onward = self._onward(cut, node)
            if onward is not None:
                answers.append((node, prefix.evidence(node) + onward))
        return answers

    def _onward(self, cut: int, node: str) -> list[tuple[str, str, str]] | None:
        """The name-hop edges from ``node`` on to the route's end (None when it does not get there)."""
        triples: list[tuple[str, str, str]] = []
        sources = {node}
        for hop in self.hops[cut:]:
            used = [e for e in hop.edges if e[0] in sources]
            if not used:
                return None
            for edge in used[:3]:
                triples.extend(_edge_triples(hop.relation, *edge))
            sources = {e[2] for e in used}
        return triples

    def to_dict(self) -> dict[str, Any]:
        return {"number": self.number, "start_clue": self.start_clue, "start": list(self.start),
                "covered": list(self.covered), "hops": [h.to_dict() for h in self.hops], "status": self.status,
                "parent": self.parent, "note": self.note, "end": self.end[:50]}


def _edge_triples(relation: Relation, source: str, middle: str, node: str) -> list[tuple[str, str, str]]:
    if relation.via is None:
        pair = (source, relation.predicate, node) if relation.direction == "out" else \
            (node, relation.predicate, source)
        return [pair]
    first = (source, relation.predicate, middle) if relation.direction == "out" else \
        (middle, relation.predicate, source)
    return [first, (middle, relation.via, node)]


@dataclass
class ModelFallback:
    """The model's own answer when no route covered every clue (not from the KB)."""

    reasoning: str = ""
    answers: list[str] = field(default_factory=list)


@dataclass
class FiskeRun:
    """Everything one FiSKE run did: clues, start links, routes, stop reason, calls used."""

    clues: list[str] = field(default_factory=list)
    starts: dict[str, list[NodeMatch]] = field(default_factory=dict)
    routes: list[Route] = field(default_factory=list)
    stop: str = ""  # "covered" | "exhausted" | "budget" | "pending" | "no-clues" | "no-start"
    answer_source: str = ""  # "kb-routes" | "model-knowledge" | "" (no answer)
    calls: int = 0
    budget: int = 0
    steps: int = 0
    fallback: ModelFallback | None = None
    names: dict[str, str] = field(default_factory=dict)  # labels of the nodes on the routes (for display)

    def covering(self) -> list[Route]:
        return [r for r in self.routes if r.status == RouteStatus.COVERING]

    def coverage(self) -> dict[str, list[int]]:
        """For each clue, the routes that mapped it."""
        table: dict[str, list[int]] = {c: [] for c in self.clues}
        for route in self.routes:
            for clue in route.covered:
                for key in table:
                    if normalize_label(key) == normalize_label(clue) and route.number not in table[key]:
                        table[key].append(route.number)
        return table

    def to_dict(self) -> dict[str, Any]:
        return {"clues": list(self.clues), "starts": {clue: [m.to_dict() for m in found] for clue, found in
                                                       self.starts.items()},
                "routes": [r.to_dict() for r in self.routes],
                "coverage": self.coverage(), "stop": self.stop, "answer_source": self.answer_source,
                "calls": self.calls, "budget": self.budget, "steps": self.steps,
                "fallback": asdict(self.fallback) if self.fallback is not None else None,
                "names": dict(self.names)}
