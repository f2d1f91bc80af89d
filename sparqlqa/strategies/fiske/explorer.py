"""The FiSKE loop: clues → start routes → stateful steps until a route covers every clue.

Per round every active route takes one step: the (relation, neighbour) pairs of its
end come from :mod:`~sparqlqa.strategies.fiske.explore`; a neighbour whose name equals an
unmapped clue extends the route without an LLM call; otherwise the LLM scores the
relations against the unmapped clues (chunks of :attr:`FiskeSettings.chunk`), then
the pairs of the best relations.  Accepted pairs extend the route (their clues are
added to its record); a route with nothing accepted is dead.  Stops: a route covers
every clue (``covered``), no route is left (``exhausted``), the call budget is
spent (``budget``, one call kept for the fallback answer), or ``--llm-cache only``
met an uncached prompt (``pending``: the run stops there, so each replay round
queues exactly the next prompt and nothing that could go stale).
"""

from __future__ import annotations

__all__ = ["Explorer", "FiskeSettings", "Stop"]

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sparqlqa.errors import ConfigError, LLMParseError, NotInCache, SparqlqaError
from sparqlqa.kb.labels import FUZZY_CUTOFF, NodeLookup, normalize_label
from sparqlqa.llm.context import llm_context
from sparqlqa.stages.modes import RouteStatus
from sparqlqa.strategies.fiske import prompts
from sparqlqa.strategies.fiske.explore import MAX_END_NODES, Pair, neighbour_pairs, relation_label
from sparqlqa.strategies.fiske.state import FiskeRun, Hop, Relation, Route

if TYPE_CHECKING:
    from sparqlqa.strategies.pipeline import AskContext

#: the reference code's call budget per question
DEFAULT_BUDGET = 30
BUDGET_ENV = "SPARQLQA_FISKE_BUDGET"
#: nodes per hop whose names the record keeps (for --explain)
SHOWN_NODES = 10


@dataclass(frozen=True)
class FiskeSettings:
    """Knobs of one run.  ``budget`` counts every FiSKE LLM call (clues, scoring, fallback answer);
    a rerank of the final answers is a separate stage and not counted."""

    budget: int = DEFAULT_BUDGET
    min_score: float = 5.0  # relations and pairs scoring below this (0–10) are not taken
    relations_per_step: int = 3  # best relations whose pairs are scored, per route and step
    chunk: int = 20  # relations or pairs per scoring prompt (the reference code's 20)
    pairs_per_step: int = 60  # pairs scored per route and step at most
    max_hops: int = 6
    max_routes: int = 60
    max_start_nodes: int = 5

    @classmethod
    def resolve(cls, budget: int | None = None) -> FiskeSettings:
        """``budget`` > ``$SPARQLQA_FISKE_BUDGET`` > 30; at least 2 (clues + one more call)."""
        raw: Any = budget if budget is not None else os.environ.get(BUDGET_ENV, DEFAULT_BUDGET)
        try:
            value = int(raw)
        except (TypeError, ValueError):
            raise ConfigError(f"the FiSKE call budget must be a whole number, got {raw!r}",
                              hint=f"set {BUDGET_ENV} (or --call-budget) to e.g. 30") from None
        if value < 2:
            raise ConfigError(f"the FiSKE call budget must be at least 2, got {value}",
                              hint="one call extracts the clues; exploration needs more")
        return cls(budget=value)


class Stop(Exception):
    """Ends exploration; ``reason`` becomes :attr:`FiskeRun.stop`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Explorer:
    """One FiSKE run over ``ctx``; the record is :attr:`run`."""

    def __init__(self, ctx: AskContext, settings: FiskeSettings) -> None:
        self.ctx = ctx
        self.settings = settings
        self.run = FiskeRun(budget=settings.budget)
        self.names: dict[str, str] = {}

    # -- LLM calls -------------------------------------------------------------------------------------

    def call(self, prompt: str, schema: dict[str, Any], name: str, *, reserve: bool = True) -> Any | None:
        """One structured call inside the budget; ``None`` when the answer could not be parsed."""
        if self.ctx.llm is None:
            raise ConfigError("the fiske strategy needs an LLM", hint="pass --llm SPEC")
        if self.run.calls >= self.settings.budget - (1 if reserve else 0):
            raise Stop("budget")
        try:
            with llm_context(stage=name):  # a pending prompt says which FiSKE step asked it
                reply = self.ctx.llm.complete(prompt, system=prompts.SYSTEM_PROMPT, schema=schema, schema_name=name)
        except NotInCache as exc:
            self.ctx.pending.append(exc.key)
            raise Stop("pending") from None
        except LLMParseError as exc:
            self.run.calls += 1
            self.ctx.llm_calls.append(_failed_call(self.ctx, prompt, schema, exc))
            self.ctx.note(f"FiSKE: an LLM answer ({name}) could not be parsed ({exc}); treated as empty")
            return None
        self.run.calls += 1
        self.ctx.llm_calls.append(reply.call)
        return reply.data

    # -- the loop ------------------------------------------------------------------------------------

    def explore(self) -> FiskeRun:
        try:
            self._explore()
        except Stop as stop:
            self.run.stop = stop.reason
        shown: set[str] = set()
        for route in self.run.routes:
            if route.status == RouteStatus.ACTIVE:
                route.status = RouteStatus.STOPPED
            shown.update(route.start, *(hop.nodes[:SHOWN_NODES] for hop in route.hops))
        self.run.names = {iri: self.names[iri] for iri in sorted(shown) if iri in self.names}
        return self.run

    def _explore(self) -> None:
        data = self.call(prompts.clue_prompt(self.ctx.question), prompts.CLUES_SCHEMA, "fiske_clues")
        self.run.clues = prompts.clues_from(data)
        if not self.run.clues:
            raise Stop("no-clues")
        active = self.start_routes()
        if not active:
            raise Stop("no-start")
        if any(r.status == RouteStatus.COVERING for r in active):
            raise Stop("covered")
        while active:
            self.run.steps += 1
            following: list[Route] = []
            for route in active:
                following.extend(self.step(route))
            active = following
        raise Stop("exhausted")

    def start_routes(self) -> list[Route]:
        """One route per clue that names KB nodes (exact name, else fuzzy ≥ 0.95, like the reference)."""
        lookup = self.lookup()
        for clue in self.run.clues:
            matches = lookup.exact(clue) or lookup.fuzzy(clue, cutoff=FUZZY_CUTOFF, limit=5)
            matches = matches[: self.settings.max_start_nodes]
            self.run.starts[clue] = list(matches)
            if matches:
                route = Route(len(self.run.routes) + 1, clue, [m.iri for m in matches], covered=[clue])
                self.names.update({m.iri: m.label for m in matches})
                self._add(route)
        return list(self.run.routes)

    def lookup(self) -> NodeLookup:
        from sparqlqa.remote.labels import lookup_for_kb

        return lookup_for_kb(self.ctx.kb)

    def step(self, route: Route) -> list[Route]:
        """One step of ``route``: its children (routes that took one more hop), maybe none."""
        if len(route.hops) >= self.settings.max_hops:
            return self._dead(route, f"reached {self.settings.max_hops} hops")
        visited = route.visited()
        if len(route.end) > MAX_END_NODES:
            self.ctx.note(f"FiSKE: route {route.number} ends at {len(route.end)} nodes; the first "
                          f"{MAX_END_NODES} were explored")
        try:
            found = neighbour_pairs(self.ctx.kb, route.end, sink=self.ctx.sink("fiske"))
        except SparqlqaError as exc:
            self.ctx.note(f"FiSKE: an exploration query of route {route.number} failed ({exc})")
            return self._dead(route, "the exploration query failed")
        pairs = [p for p in found if p.node not in visited]
        if not pairs:
            return self._dead(route, "no new neighbours")
        self._fetch_names([p.node for p in pairs])
        unmapped = route.unmapped(self.run.clues)
        hops = self.name_hops(pairs, unmapped) or self.scored_hops(route, pairs, unmapped)
        if not hops:
            return self._dead(route, "no relation and neighbour map a remaining clue")
        route.status = RouteStatus.EXTENDED
        children = []
        for hop in hops:
            child = self._add(route.extended(len(self.run.routes) + 1, hop))
            if child is not None:
                children.append(child)
        if any(c.status == RouteStatus.COVERING for c in children):
            raise Stop("covered")
        return children

    def _add(self, route: Route) -> Route | None:
        if len(self.run.routes) >= self.settings.max_routes:
            self.ctx.note(f"FiSKE: more than {self.settings.max_routes} routes; the rest were not followed")
            return None
        if route.covers(self.run.clues):
            route.status = RouteStatus.COVERING
        self.run.routes.append(route)
        return route

    @staticmethod
    def _dead(route: Route, why: str) -> list[Route]:
        route.status, route.note = RouteStatus.DEAD, why
        return []

    # -- hops ------------------------------------------------------------------------------------------

    def name_hops(self, pairs: Sequence[Pair], unmapped: Sequence[str]) -> list[Hop]:
        """Hops to neighbours whose name equals an unmapped clue (no LLM call), one per clue and relation."""
        wanted = {normalize_label(c): c for c in unmapped}
        groups: dict[tuple[str, Relation], list[Pair]] = {}
        for pair in pairs:
            clue = wanted.get(normalize_label(self.names.get(pair.node, "")))
            if clue is not None:
                groups.setdefault((clue, pair.relation), []).append(pair)
        return [Hop(relation, relation_label(self.ctx.kb, relation), [clue], _edges(group), "name", 10.0)
                for (clue, relation), group in groups.items()]

    def scored_hops(self, route: Route, pairs: Sequence[Pair], unmapped: Sequence[str]) -> list[Hop]:
        """Relation mapping, then pair mapping of the best relations; one hop per (relation, clues)."""
        chosen = self.score_relations(route, pairs, unmapped)
        if not chosen:
            return []
        shown = _dedupe([p for relation in chosen for p in pairs if p.relation == relation])
        if len(shown) > self.settings.pairs_per_step:
            self.ctx.note(f"FiSKE: route {route.number} had {len(shown)} candidate pairs; the first "
                          f"{self.settings.pairs_per_step} were scored")
            shown = shown[: self.settings.pairs_per_step]
        groups: dict[tuple[Relation, tuple[str, ...]], tuple[list[str], float]] = {}
        for start, chunk in _chunks(shown, self.settings.chunk):
            rows = [(relation_label(self.ctx.kb, p.relation), self.names.get(p.node, p.node)) for p in chunk]
            data = self.call(prompts.pair_prompt(self.ctx.question, unmapped, rows), prompts.SCORES_SCHEMA,
                             "fiske_pairs")
            for index, clue, score in prompts.scored_items(data, len(chunk)):
                pair = shown[start + index]
                clues = _clues(chosen[pair.relation], _match(clue, unmapped), unmapped)
                if score < self.settings.min_score or not clues:
                    continue
                nodes, best = groups.get((pair.relation, clues), ([], 0.0))
                groups[(pair.relation, clues)] = ([*nodes, pair.node], max(best, score))
        return [Hop(relation, relation_label(self.ctx.kb, relation), list(clues),
                    _edges([p for p in pairs if p.relation == relation and p.node in nodes]), "llm", score)
                for (relation, clues), (nodes, score) in groups.items()]

    def score_relations(self, route: Route, pairs: Sequence[Pair], unmapped: Sequence[str],
                        ) -> dict[Relation, str | None]:
        """The best relations (score ≥ ``min_score``) with the clue each maps (None: leads toward one)."""
        relations = list(dict.fromkeys(p.relation for p in pairs))
        at = [self.names.get(n, n) for n in route.end[:5]] + (["…"] if len(route.end) > 5 else [])
        path = " → ".join(h.label for h in route.hops)
        scored: list[tuple[float, int, str | None]] = []
        for start, chunk in _chunks(relations, self.settings.chunk):
            labels = [relation_label(self.ctx.kb, r) for r in chunk]
            data = self.call(prompts.relation_prompt(self.ctx.question, unmapped, at, path, labels),
                             prompts.SCORES_SCHEMA, "fiske_relations")
            scored.extend((score, start + index, _match(clue, unmapped))
                          for index, clue, score in prompts.scored_items(data, len(chunk)))
        kept = sorted((s for s in scored if s[0] >= self.settings.min_score), key=lambda s: (-s[0], s[1]))
        return {relations[i]: clue for _, i, clue in kept[: self.settings.relations_per_step]}

    def _fetch_names(self, nodes: Sequence[str]) -> None:
        from sparqlqa.kb.node_text import fetch_labels

        missing = [n for n in dict.fromkeys(nodes) if n not in self.names]
        if missing:
            labels, _types = fetch_labels(self.ctx.kb, missing, sink=self.ctx.sink("fiske-names"))
            self.names.update(labels)


def _edges(pairs: Sequence[Pair]) -> list[tuple[str, str, str]]:
    return list(dict.fromkeys((p.source, p.middle, p.node) for p in pairs))


def _dedupe(pairs: Sequence[Pair]) -> list[Pair]:
    """One pair per (relation, neighbour) (several end nodes may reach the same neighbour)."""
    seen: dict[tuple[Relation, str], Pair] = {}
    for pair in pairs:
        seen.setdefault((pair.relation, pair.node), pair)
    return list(seen.values())


def _chunks(items: Sequence[Any], size: int) -> Iterator[tuple[int, Sequence[Any]]]:
    for start in range(0, len(items), max(1, size)):
        yield start, items[start:start + size]


def _match(clue: str | None, unmapped: Sequence[str]) -> str | None:
    """The unmapped clue the LLM named (normalised equality, else containment either way)."""
    if not clue:
        return None
    key = normalize_label(clue)
    for candidate in unmapped:
        if normalize_label(candidate) == key:
            return candidate
    for candidate in unmapped:
        other = normalize_label(candidate)
        if other and key and (other in key or key in other):
            return candidate
    return None


def _clues(relation_clue: str | None, pair_clue: str | None, unmapped: Sequence[str]) -> tuple[str, ...]:
    """The clues a hop maps (question order): the relation's and the neighbour's (the paper's cases 1–2)."""
    named = {c for c in (relation_clue, pair_clue) if c}
    return tuple(c for c in unmapped if c in named)


def _failed_call(ctx: AskContext, prompt: str, schema: dict[str, Any], exc: LLMParseError) -> Any:
    from sparqlqa.llm import LLMCall

    llm = ctx.llm
    return LLMCall(backend=getattr(llm, "backend_name", "llm"), model=getattr(llm, "model", ""),
                   system=prompts.SYSTEM_PROMPT, messages=[{"role": "user", "content": prompt}], schema=schema,
                   response_text=getattr(exc, "raw", "") or "", error=f"{type(exc).__name__}: {exc}")
