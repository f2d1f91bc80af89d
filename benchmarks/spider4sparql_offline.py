"""Execution accuracy of the offline strategy on Spider4SPARQL's graphs (issue 35).

Ingests each ``kg/<db>.nt`` into a private ``$SPARQLQA_HOME`` as its own KB, asks each question of
``questions_dev.json`` with the ``offline`` strategy and scores ``answer.table.lexical_rows()`` against
the gold rows (:func:`sparqlqa.evaluation.execution.rows_match`), per form and per graph; questions whose
gold is empty or names vocabulary no mapping produces are counted apart.  It may later be replaced by
``sparqlqa eval --dataset spider4sparql``.

    python benchmarks/spider4sparql_offline.py --dbs concert_singer,pets_1,car_1 [--out rows.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

DATA = Path("/work/shared/data/spider4sparql")
DEV_DBS = ("concert_singer", "pets_1", "car_1")
HELD_OUT_DBS = ("dog_kennels", "employee_hire_evaluation", "orchestra")


def _scored(question: dict, answer) -> dict:
    from sparqlqa.evaluation.execution import rows_match

    rows = answer.table.lexical_rows() if answer.table is not None else []
    ok = rows_match(rows, question["gold_rows"], ordered=question["gold_ordered"])
    apart = not question["gold_rows"] or bool(question["gold_vocab_missing"])
    return {"id": question["id"], "db": question["db"], "form": question["form"], "ok": ok, "apart": apart,
            "answer_form": answer.form, "rows": rows[:5], "question": question["question"]}


def run(data: Path, dbs: list[str], out: Path | None, limit: int | None) -> list[dict]:
    import sparqlqa
    from sparqlqa.ingest import ingest

    questions = json.loads((data / "questions_dev.json").read_text(encoding="utf-8"))
    results = []
    for db in dbs:
        ingest([data / "kg" / f"{db}.nt"], kb=db.replace("_", "-"))
        chosen = [q for q in questions if q["db"] == db][:limit]
        for question in chosen:
            started = time.perf_counter()
            answer = sparqlqa.ask(db.replace("_", "-"), question["question"], strategy="offline")
            row = _scored(question, answer)
            row["ms"] = round(1000 * (time.perf_counter() - started))
            results.append(row)
            if out is not None:
                with out.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(row) + "\n")
    return results


def report(results: list[dict]) -> str:
    lines = []
    scored = [r for r in results if not r["apart"]]
    for title, group in (("all", results), ("scored (gold not empty, vocabulary present)", scored)):
        right = sum(r["ok"] for r in group)
        lines.append(f"{title}: {right}/{len(group)} = {right / max(1, len(group)):.3f}")
    for key in ("db", "form"):
        totals, rights = Counter(r[key] for r in results), Counter(r[key] for r in results if r["ok"])
        lines.append(f"per {key}: " + ", ".join(f"{k} {rights[k]}/{n}" for k, n in sorted(totals.items())))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--dbs", default=",".join(DEV_DBS), help="comma-separated graphs, or 'held-out' / 'all'")
    parser.add_argument("--out", type=Path, default=None, help="append one JSON line per question")
    parser.add_argument("--limit", type=int, default=None, help="questions per graph")
    args = parser.parse_args()
    dbs = {"held-out": list(HELD_OUT_DBS), "all": [*DEV_DBS, *HELD_OUT_DBS]}.get(args.dbs, args.dbs.split(","))
    os.environ.setdefault("SPARQLQA_HOME", tempfile.mkdtemp(prefix="s4s-offline-"))
    results = run(args.data, dbs, args.out, args.limit)
    print(report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
