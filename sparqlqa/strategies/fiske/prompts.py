"""FiSKE's four LLM steps as prompts with JSON schemas (structured output through :mod:`sparqlqa.llm`).

1. clue extraction: the question's names and relation/answer words;
2. relation mapping: candidate relations of a route's end scored 0–10 against the unmapped clues;
3. pair mapping: candidate (relation, neighbour) pairs scored 0–10 against the unmapped clues;
4. the chain-of-thought fallback: the model's own knowledge, used only when no route covers every clue.

>>> "China" in clue_prompt("What is the population of the capital of China?")
True
>>> scored_items({"items": [{"index": 1, "clue": "director", "score": 8}, {"index": 9, "score": 3}]}, 2)
[(1, 'director', 8.0)]
"""

from __future__ import annotations

__all__ = ["ANSWER_SCHEMA", "CLUES_SCHEMA", "SCORES_SCHEMA", "SYSTEM_PROMPT", "answer_prompt", "clue_prompt",
           "clues_from", "pair_prompt", "relation_prompt", "scored_items"]

import json
from collections.abc import Sequence
from typing import Any

from sparqlqa.language import prompt_note

SYSTEM_PROMPT = ("You help answer questions over a knowledge graph by mapping the question's clues to the "
                 "graph's relations and nodes. Answer with the JSON asked for, nothing else.")

CLUES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"clues": {"type": "array", "items": {"type": "string"}}},
    "required": ["clues"],
}
_SCORED_ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {"index": {"type": "integer"}, "clue": {"type": ["string", "null"]},
                   "score": {"type": "number", "minimum": 0, "maximum": 10}},
    "required": ["index", "score"],
}
#: relation mapping and pair mapping answer the same shape
SCORES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"items": {"type": "array", "items": _SCORED_ITEM}},
    "required": ["items"],
}
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"}, "answers": {"type": "array", "items": {"type": "string"}}},
    "required": ["reasoning", "answers"],
}


def clue_prompt(question: str) -> str:
    return (
        "List the clues of the question: every name it mentions (people, places, titles, ...) and every "
        "word for a relation or for the kind of thing asked about, each as short as possible and in the "
        "question's own words. Leave out question words and filler.\n"
        "Example: What is the population of the capital of China? -> "
        '{"clues": ["China", "capital", "population"]}\n'
        "Example: Which place is the madam satan located? -> " '{"clues": ["place", "madam satan"]}\n'
        f"Question: {question}\n{_language_line()}"
        'Answer as {"clues": [...]}.'
    )


def _numbered(lines: Sequence[str]) -> str:
    return "\n".join(f"{number}. {line}" for number, line in enumerate(lines))


def relation_prompt(question: str, unmapped: Sequence[str], at: Sequence[str], path: str,
                    relations: Sequence[str]) -> str:
    return (
        f"Question: {question}\n{_language_line()}"
        f"Clues not yet found in the graph: {json.dumps(list(unmapped), ensure_ascii=False)}\n"
        f"We are at: {', '.join(at)}" + (f" (reached by: {path})" if path else "") + "\n"
        "Candidate relations ([out] r: the current node -r-> a neighbour; [in] r: a neighbour -r-> the "
        "current node; 'a / b' passes through an unnamed intermediate node):\n"
        f"{_numbered(relations)}\n"
        "Rate each relation from 0 to 10 by how well it expresses one of the clues, or leads to the node "
        "a clue describes, and name that clue. Be brief.\n"
        'Answer as {"items": [{"index": 0, "clue": "...", "score": 7}, ...]}.'
    )


def pair_prompt(question: str, unmapped: Sequence[str], pairs: Sequence[tuple[str, str]]) -> str:
    shown = [f"({relation}, {name})" for relation, name in pairs]
    return (
        f"Question: {question}\n{_language_line()}"
        f"Clues not yet found in the graph: {json.dumps(list(unmapped), ensure_ascii=False)}\n"
        "Candidate (relation, neighbour) pairs:\n"
        f"{_numbered(shown)}\n"
        "Rate each pair from 0 to 10 by how well the neighbour fits one of the clues (the named thing, or "
        "the kind of thing the clue asks for) along that relation, and name that clue. Be brief.\n"
        'Answer as {"items": [{"index": 0, "clue": "...", "score": 7}, ...]}.'
    )


def answer_prompt(question: str) -> str:
    return (
        "The knowledge graph did not give a complete answer. Answer the question from your own knowledge: "
        "think step by step in 'reasoning', then list the answers as short names (most likely first; "
        "an empty list when you do not know).\n"
        f"Question: {question}\n{_language_line()}"
        'Answer as {"reasoning": "...", "answers": ["..."]}.'
    )


def scored_items(data: Any, count: int) -> list[tuple[int, str | None, float]]:
    """(index, clue, score) of a scoring answer, indexes checked against ``count``, duplicates dropped."""
    found: dict[int, tuple[int, str | None, float]] = {}
    items = data.get("items", []) if isinstance(data, dict) else []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        index, score, clue = item.get("index"), item.get("score"), item.get("clue")
        if not isinstance(index, int) or not 0 <= index < count or not isinstance(score, (int, float)):
            continue
        found.setdefault(index, (index, clue if isinstance(clue, str) and clue.strip() else None, float(score)))
    return list(found.values())


def clues_from(data: Any) -> list[str]:
    """The distinct non-empty clues of a clue answer, in order."""
    clues = data.get("clues", []) if isinstance(data, dict) else []
    seen: dict[str, str] = {}
    for clue in clues if isinstance(clues, list) else []:
        if isinstance(clue, str) and clue.strip():
            seen.setdefault(clue.strip().lower(), clue.strip())
    return list(seen.values())


def _language_line() -> str:
    """The question's and the KB's languages, when either is not English (issue 37); else nothing."""
    note = prompt_note()
    return note + "\n" if note else ""
