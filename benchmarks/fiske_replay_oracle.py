"""Answer pending FiSKE prompts of a PathQuestion eval from the gold path: checks the ``--llm-cache only``
replay mechanics end to end.  NOT a quality figure (the answers come from the gold relation path).

    sparqlqa eval pathquestion ../shared/data/pathquestion/PQ-2H.txt --kb pq2h --strategy fiske \\
        --llm anthropic --llm-cache only --limit 3 --no-plots --out DIR
    sparqlqa llm export-pending pending.jsonl
    python benchmarks/fiske_replay_oracle.py ../shared/data/pathquestion/PQ-2H.txt pending.jsonl answers.jsonl
    sparqlqa llm import answers.jsonl          # then rerun the eval; repeat until nothing is pending

Clues: the path's start entity and its relation names; relations and pairs score 9 when the shown relation
names an unmapped clue; rerank prompts keep the given order; anything else is left unanswered.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

LINE = re.compile(r"^(\d+)\. (.*)$", re.MULTILINE)


def gold_clues(questions: Path) -> dict[str, list[str]]:
    """question → [start entity, relation 1, relation 2, ...] from PathQuestion's ``e#r#e#r#...`` paths."""
    clues = {}
    for line in questions.read_text(encoding="utf-8").splitlines():
        question, _answer, path = line.split("\t")
        parts = path.split("#<end>#")[0].split("#")
        clues[question.strip()] = [parts[0], *parts[1::2]]
    return clues


def respond(record: dict[str, Any], clues: dict[str, list[str]]) -> Any | None:
    prompt = record["messages"][-1]["content"]
    name = record["schema_name"]
    if record["schema"] is None and "Order all" in prompt:
        count = int(re.search(r"Order all (\d+) candidates", prompt).group(1))  # type: ignore[union-attr]
        return " > ".join(f"[{i}]" for i in range(1, count + 1))
    found = re.search(r"Question: (.*)", prompt)
    question = found.group(1).strip() if found else ""
    if name == "fiske_clues":
        return {"clues": clues.get(question, [])}
    if name == "fiske_answer":
        return {"reasoning": "not known", "answers": []}
    if name not in ("fiske_relations", "fiske_pairs"):
        return None
    unmapped = json.loads(re.search(r"Clues not yet found in the graph: (.*)", prompt).group(1))  # type: ignore[union-attr]
    items = []
    for number, shown in LINE.findall(prompt):
        hit = next((c for c in unmapped if c.replace("_", " ") in shown.replace("_", " ")), None)
        items.append({"index": int(number), "clue": hit, "score": 9 if hit else 1})
    return {"items": items}


def main(questions: str, pending: str, answers: str) -> None:
    clues = gold_clues(Path(questions))
    lines = []
    for raw in Path(pending).read_text(encoding="utf-8").splitlines():
        record = json.loads(raw)
        response = respond(record, clues)
        if response is not None:
            lines.append(json.dumps({"id": record["id"], "response": response}))
    Path(answers).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    print(f"answered {len(lines)} prompt(s)")


if __name__ == "__main__":
    main(*sys.argv[1:4])
