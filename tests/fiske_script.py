"""A scripted LLM for FiSKE tests: answers each FiSKE prompt from small tables."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sparqlqa.llm import FakeLLM, LLMRequest

_LINE = re.compile(r"^(\d+)\. (.*)$", re.MULTILINE)


@dataclass
class Script:
    """``relations``: shown relation (``[out] directed by``) → (clue, score); ``pairs``: neighbour name →
    (clue, score); anything not listed scores 0."""

    clues: list[str]
    relations: dict[str, tuple[str, float]] = field(default_factory=dict)
    pairs: dict[str, tuple[str, float]] = field(default_factory=dict)
    answers: list[str] = field(default_factory=list)

    def respond(self, prompt: str, schema_name: str) -> dict[str, Any]:
        if schema_name == "fiske_clues":
            return {"clues": self.clues}
        if schema_name == "fiske_answer":
            return {"reasoning": "I recall it.", "answers": self.answers}
        items = []
        for number, shown in _LINE.findall(prompt):
            if schema_name == "fiske_relations":
                clue, score = self.relations.get(shown, (None, 0.0))
            else:
                name = shown[1:-1].split(", ", 1)[1]
                clue, score = self.pairs.get(name, (None, 0.0))
            items.append({"index": int(number), "clue": clue, "score": score})
        return {"items": items}

    def answer(self, request: LLMRequest) -> dict[str, Any]:
        return self.respond(request.messages[-1].content, request.schema_name)

    def llm(self, calls: int = 40, **kwargs: Any) -> FakeLLM:
        return FakeLLM([self.answer] * calls, **kwargs)
