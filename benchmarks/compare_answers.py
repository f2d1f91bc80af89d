"""``ask --json`` of a fixed set of questions, for a before/after comparison of a refactoring.

Runs 24 questions (with ``--sets`` also the 159 of the six user-style sets) in one process (private
``$SPARQLQA_HOME``, the ``fake`` embedder): the offline strategy over
the bundled movie sample, two user-style sets and a graph mapped from tables; 4step, vss+rerank and text2sparql
with scripted FakeLLM answers.  Writes ``{label: answer.to_dict()}`` (what ``ask --json`` prints) with the
timings taken out, so two runs of the same code give the same file::

    PYTHONPATH=$PWD python benchmarks/compare_answers.py --out /tmp/before.json   # on the old code
    PYTHONPATH=$PWD python benchmarks/compare_answers.py --out /tmp/after.json    # on the new code
    cmp /tmp/before.json /tmp/after.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
VOLATILE = {"elapsed_ms", "timings_ms", "latency_ms", "created_at", "started_at", "store"}

OFFLINE = [
    ("movies", "who directed Blade Runner"),
    ("movies", "which films did Ridley Scott direct"),
    ("movies", "how many films did Ginger Rogers star in"),
    ("movies", "did Ridley Scott direct Prometheus"),
    ("movies", "which films starred Fred Astaire and Ginger Rogers"),
    ("movies", "what genre is Forrest Gump"),
    ("movies", "which is the newest film with Audrey Hepburn"),
    ("movies", "when was Monkey Business released"),
    ("books", "Which books did Mara Lindqvist write?"),
    ("books", "How many books were published by Marrow House?"),
    ("books", "Is Marrow House located in Brno?"),
    ("books", "Which is longer, Copper Season or Iron Meadow?"),
    ("companies", "Which product was released most recently?"),
    ("companies", "How many people work for Nordlicht GmbH?"),
    ("library", "how many books does each library have"),
    ("library", "what are the names of the libraries"),
]


def _strip(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _strip(v) for k, v in data.items() if k not in VOLATILE}
    if isinstance(data, list):
        return [_strip(v) for v in data]
    return data


def _term(kind: str, text: str, type_: str | None) -> dict[str, Any]:
    return {"kind": kind, "text": text, "type": type_}


SCOTT_SCIFI = {"triplets": [
    {"head": _term("variable", "?x1", "movie"), "relation": "directed by",
     "tail": _term("constant", "Ridley Scott", "person")},
    {"head": _term("variable", "?x1", "movie"), "relation": "has genre",
     "tail": _term("constant", "Science Fiction", "genre")}],
    "target": "?x1", "requirements": ["about a deadly creature aboard a spaceship"]}
SCOTT_Q = "Which science fiction film by Ridley Scott is about a creature on a spaceship?"


def _pick(word: str) -> Any:
    def answer(request: Any) -> str:
        passages = re.findall(r"^\[(\d+)\] (.*)$", request.messages[-1].content, flags=re.M)
        ranked = sorted(passages, key=lambda p: (word not in p[1], int(p[0])))
        return " > ".join(f"[{slot}]" for slot, _ in ranked)
    return answer


def _t2s(sparql: str, columns: list[str], form: str = "list") -> dict[str, Any]:
    return {"sparql": sparql, "columns": columns, "form": form}


def _llm_runs(kbs: dict[str, Any]) -> dict[str, Any]:
    from sparqlqa.llm import FakeLLM
    from sparqlqa.strategies.ask import ask

    lib = "<http://db.example/library#name>"
    runs: dict[str, Any] = {}
    runs["4step listwise"] = ask(kbs["fixture"], SCOTT_Q, llm=FakeLLM([SCOTT_SCIFI, _pick("Witness")]), k=5)
    runs["4step listwise spaceship"] = ask(kbs["fixture"], SCOTT_Q, llm=FakeLLM([SCOTT_SCIFI, _pick("spaceship")]),
                                           k=5)
    runs["4step no rerank exact"] = ask(kbs["fixture"], SCOTT_Q, llm=FakeLLM([SCOTT_SCIFI]), k=5, rerank="none",
                                        exact=True)
    runs["vss+rerank"] = ask(kbs["fixture"], SCOTT_Q, strategy="vss+rerank", llm=FakeLLM([_pick("space")]), k=5)
    runs["text2sparql names ordered"] = ask(
        kbs["library"], "library names, reverse order", strategy="text2sparql",
        llm=FakeLLM([_t2s(f"SELECT ?n WHERE {{ ?l {lib} ?n }} ORDER BY DESC(?n)", ["?n"])]))
    runs["text2sparql nodes"] = ask(
        kbs["library"], "the libraries", strategy="text2sparql",
        llm=FakeLLM([_t2s("SELECT ?l WHERE { ?l a <http://db.example/library> }", ["?l"])]))
    runs["text2sparql count"] = ask(
        kbs["library"], "how many libraries", strategy="text2sparql",
        llm=FakeLLM([_t2s("SELECT (COUNT(?l) AS ?c) WHERE { ?l a <http://db.example/library> }", ["?c"],
                          "count")]))
    runs["text2sparql table"] = ask(
        kbs["library"], "libraries and names", strategy="text2sparql",
        llm=FakeLLM([_t2s(f"SELECT ?l ?n WHERE {{ ?l {lib} ?n }} ORDER BY ?n", ["?l", "?n"], "table")]))
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sets", action="store_true",
                        help="also every question of the six user-style sets (benchmarks/data/forms_*), offline")
    args = parser.parse_args()
    os.environ["SPARQLQA_HOME"] = tempfile.mkdtemp(prefix="sparqlqa-compare-")
    os.environ.setdefault("SPARQLQA_EMBEDDER", "fake")
    from sparqlqa.ingest import ingest
    from sparqlqa.strategies.ask import ask

    kbs = {"movies": ingest([ROOT / "sparqlqa/data/samples/movies.txt"], kb="movies"),
           "books": ingest([ROOT / "benchmarks/data/forms_books.ttl"], kb="books"),
           "companies": ingest([ROOT / "benchmarks/data/forms_companies.ttl"], kb="companies"),
           "library": ingest([ROOT / "tests/fixtures/library_db.nt"], kb="library"),
           "fixture": ingest([ROOT / "tests/fixtures/movies.ttl"], kb="fixture")}
    answers = {f"offline {kb}: {q}": ask(kbs[kb], q, strategy="offline") for kb, q in OFFLINE}
    for path in sorted((ROOT / "benchmarks/data").glob("forms_*_questions.json")) if args.sets else ():
        name = path.name.removesuffix("_questions.json")
        kb = kbs.get(name.removeprefix("forms_")) or ingest([path.with_name(f"{name}.ttl")], kb=name)
        for entry in json.loads(path.read_text(encoding="utf-8")):
            answers[f"offline {name}: {entry['question']}"] = ask(kb, entry["question"], strategy="offline")
    answers.update(_llm_runs(kbs))
    out = {label: _strip(answer.to_dict()) for label, answer in answers.items()}
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(out)} answers -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
