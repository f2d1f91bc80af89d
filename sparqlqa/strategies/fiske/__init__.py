"""FiSKE: fine-grained stateful knowledge exploration (strategy ``fiske``).

The question becomes clues (LLM); clues that name KB nodes start routes; each route
keeps the record of the clues it has mapped and steps along relations the LLM scores
against the clues still unmapped, until one route covers every clue (the answer:
its end nodes, ranked), nothing new is found, or the call budget is spent (then the
model answers from its own knowledge, marked as such).

Modules: :mod:`~sparqlqa.strategies.fiske.state` (routes, the run record),
:mod:`~sparqlqa.strategies.fiske.explore` (exploration SPARQL), :mod:`~sparqlqa.strategies.fiske.prompts`
(the LLM steps), :mod:`~sparqlqa.strategies.fiske.strategy` (the loop, the answer).
"""

from __future__ import annotations

__all__: list[str] = []  # the package has no names of its own: its modules are its API
