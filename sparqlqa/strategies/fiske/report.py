"""FiSKE's record as readable lines (``sparqlqa ask --explain``).

>>> record = {"clues": ["Alien", "director"], "calls": 3, "budget": 30, "steps": 1, "names": {"urn:a": "Alien"},
...           "starts": {"Alien": [{"iri": "urn:a"}], "director": []}, "coverage": {"Alien": [1], "director": []},
...           "routes": [{"number": 1, "parent": None, "status": "dead", "start_clue": "Alien", "start": ["urn:a"],
...                       "covered": ["Alien"], "hops": [], "note": "no new neighbours"}]}
>>> print("\\n".join(route_lines(record)))
clues: 'Alien', 'director'  (3 of 30 LLM calls, 1 step(s))
start 'Alien' → Alien; 'director' → no node
route 1 [dead] from 'Alien' (Alien): covers Alien — no new neighbours
coverage: 'Alien' by route(s) 1; 'director' by none
"""

from __future__ import annotations

__all__ = ["route_lines"]

from collections.abc import Mapping
from typing import Any

from sparqlqa.kb.schema import local_name


def _names(nodes: list[str], names: Mapping[str, str], shown: int = 4) -> str:
    text = ", ".join(names.get(n) or local_name(n) for n in nodes[:shown])
    return text + (f" (+{len(nodes) - shown})" if len(nodes) > shown else "")


def route_lines(record: Mapping[str, Any], labels: Mapping[str, str] | None = None) -> list[str]:
    """Clues, start links, each route (status, hops, clues covered), coverage and the fallback."""
    names = {**(labels or {}), **record.get("names", {})}
    clues = ", ".join(repr(c) for c in record.get("clues", [])) or "(none)"
    lines = [f"clues: {clues}  ({record.get('calls', 0)} of {record.get('budget', '?')} LLM calls, "
             f"{record.get('steps', 0)} step(s))"]
    starts = record.get("starts", {})
    if starts:
        lines.append("start " + "; ".join(
            f"{clue!r} → {_names([m['iri'] for m in found], names) if found else 'no node'}"
            for clue, found in starts.items()))
    for route in record.get("routes", []):
        origin = f"from {route['start_clue']!r} ({_names(route['start'], names)})" if route.get("parent") is None \
            else f"← {route['parent']}"
        hops = [f"{h['label']} ({h['how']}{'' if h['how'] == 'name' else ' ' + format(h['score'], 'g')})"
                f" → {_names(list(dict.fromkeys(e[2] for e in h['edges'])), names)}"
                for h in route.get("hops", [])[-1:]] if route.get("parent") is not None else []
        covered = ", ".join(route.get("covered", []))
        note = f" — {route['note']}" if route.get("note") else ""
        lines.append(f"route {route['number']} [{route['status']}] {origin}{': ' + hops[0] if hops else ''}: "
                     f"covers {covered}{note}")
    coverage = record.get("coverage", {})
    if coverage:
        lines.append("coverage: " + "; ".join(
            f"{clue!r} by {'route(s) ' + ', '.join(map(str, found)) if found else 'none'}"
            for clue, found in coverage.items()))
    fallback = record.get("fallback")
    if fallback:
        lines.append(f"fallback (model's own knowledge, NOT from the KB): {', '.join(fallback['answers']) or '-'}")
        lines.append(f"  reasoning: {' '.join(str(fallback.get('reasoning', '')).split())[:300]}")
    return lines
