"""Offline strategy benchmark: Hits@1 and per-question latency on MetaQA / PathQuestion, no network.

Runs the full offline pipeline (``sparqlqa.strategies.ask.ask(kb, q, strategy="offline", rerank="none")``)
on a seeded sample of questions and prints Hits@1 (top answer's label is a gold answer,
case-insensitive) and latency p50/p95.

MetaQA's KB here is an approximate reconstruction (see ../shared/data/metaqa/SOURCE.md), so
Hits@1 is also reported on the questions whose gold answers the KB can produce: the gold relation
path (from ``qa_*_qtype.txt``) is executed from the bracketed topic entity, and a question counts as
answerable when that yields at least one gold answer ("any") or every gold answer ("all").

Usage::

    SPARQLQA_HOME=/tmp/bench .venv/bin/python benchmarks/bench_offline.py metaqa \\
        ../shared/data/metaqa/1-hop/qa_dev.txt --kb metaqa \\
        --ingest ../shared/data/metaqa/kb_reconstructed.txt --limit 300 --seed 0
    .venv/bin/python benchmarks/bench_offline.py pathquestion ../shared/data/pathquestion/PQ-2H.txt \\
        --kb pq2h --ingest ../shared/data/pathquestion/2H-kb.txt --limit 300
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyoxigraph import NamedNode

from sparqlqa.kb.knowledge_base import KnowledgeBase, kb_exists, open_kb
from sparqlqa.kb.labels import LabelIndex, normalize_label

#: MetaQA qtype words → relation names of its KB
METAQA_RELATIONS = {"actor": "starred_actors", "director": "directed_by", "writer": "written_by",
                    "genre": "has_genre", "year": "release_year", "language": "in_language",
                    "tags": "has_tags", "tag": "has_tags", "imdbrating": "has_imdb_rating",
                    "imdbvotes": "has_imdb_votes"}


@dataclass
class Item:
    question: str
    answers: list[str]
    gold_path: list[tuple[str, bool]] = field(default_factory=list)  # (relation name, forward)
    topic: str = ""


def metaqa_path(qtype: str) -> list[tuple[str, bool]]:
    """``actor_to_movie_to_director`` → [(starred_actors, backward), (directed_by, forward)]."""
    parts = qtype.strip().split("_to_")
    return [(METAQA_RELATIONS[b], True) if a == "movie" else (METAQA_RELATIONS[a], False)
            for a, b in itertools.pairwise(parts)]


def load_metaqa(path: Path) -> list[Item]:
    qtypes = path.with_name(path.stem + "_qtype.txt").read_text("utf-8").splitlines()
    items = []
    for line, qtype in zip(path.read_text("utf-8").splitlines(), qtypes):
        question, answers = line.split("\t")
        topic = re.search(r"\[(.+?)\]", question)
        items.append(Item(question, answers.split("|"), metaqa_path(qtype), topic.group(1) if topic else ""))
    return items


def load_pathquestion(path: Path) -> list[Item]:
    items = []
    for line in path.read_text("utf-8").splitlines():
        question, answer, chain = line.split("\t")
        answers = [a for a in answer[answer.index("(") + 1 : answer.rindex(")")].split("/") if a]
        hops = chain.split("#<end>#")[0].split("#")
        items.append(Item(question, answers, [(r, True) for r in hops[1::2]], hops[0]))
    return items


def oracle(kb: KnowledgeBase, item: Item) -> set[str]:
    """Labels reached by the gold path from the topic entity (normalised)."""
    starts = LabelIndex.for_kb(kb).nodes_for_key(normalize_label(item.topic))
    if not starts or not item.gold_path:
        return set()
    base = kb.manifest.base_iri
    lines, current = [], "?s"
    for number, (name, forward) in enumerate(item.gold_path, start=1):
        nxt = f"?v{number}"
        pred = str(NamedNode(base + "relation/" + name))
        lines.append(f"{current} {pred} {nxt} ." if forward else f"{nxt} {pred} {current} .")
        current = nxt
    values = " ".join(str(NamedNode(s)) for s in starts)
    label = "<http://www.w3.org/2000/01/rdf-schema#label>"
    query = f"SELECT DISTINCT ?l WHERE {{ VALUES ?s {{ {values} }} {' '.join(lines)} {current} {label} ?l }}"
    return {normalize_label(row[0].value) for row in kb.query(query).rows if row[0] is not None}


def _chosen(answer: Any) -> list[dict[str, Any]] | None:
    """The offline step's chosen readings, as JSON (``meta.offline.chosen``)."""
    reasons = answer.meta.offline
    return reasons.to_dict().get("chosen") if reasons is not None else None


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")


def evaluate(kb: KnowledgeBase, items: list[Item], *, brackets: bool, check_oracle: bool,
             topic: str = "auto") -> dict[str, Any]:
    from sparqlqa.strategies.ask import ask

    rows = []
    ask(kb, items[0].question, strategy="offline", rerank="none", k=5)  # warm-up: model, indexes
    for number, item in enumerate(items, start=1):
        question = item.question if brackets else item.question.replace("[", "").replace("]", "")
        started = time.perf_counter()
        answer = ask(kb, question, strategy="offline", rerank="none", k=5, topic=topic)
        latency = (time.perf_counter() - started) * 1000
        gold = {normalize_label(a) for a in item.answers}
        top = normalize_label(answer.top.label) if answer.top else ""
        reached = oracle(kb, item) if check_oracle else gold
        rows.append({"hit": top in gold, "ms": latency, "any": bool(reached & gold),
                     "all": gold <= reached, "path": (_chosen(answer) or [{}])[0]})
        if number % 50 == 0:
            print(f"  {number}/{len(items)} hits@1 so far {sum(r['hit'] for r in rows) / len(rows):.3f}",
                  file=sys.stderr, flush=True)
    return summarize(rows)


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def hits(selected: list[dict[str, Any]]) -> float:
        return round(sum(r["hit"] for r in selected) / len(selected), 4) if selected else float("nan")

    answerable_any = [r for r in rows if r["any"]]
    answerable_all = [r for r in rows if r["all"]]
    latencies = [r["ms"] for r in rows]
    return {"n": len(rows), "hits@1": hits(rows), "n_any": len(answerable_any), "hits@1_any": hits(answerable_any),
            "n_all": len(answerable_all), "hits@1_all": hits(answerable_all),
            "p50_ms": round(statistics.median(latencies), 1), "p95_ms": round(percentile(latencies, 0.95), 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", choices=["metaqa", "pathquestion"])
    parser.add_argument("file", type=Path, help="questions file (MetaQA qa_dev.txt or PQ-2H.txt)")
    parser.add_argument("--kb", required=True, help="KB name (ingested from --ingest when missing)")
    parser.add_argument("--ingest", type=Path, help="delimited triples file for the KB")
    parser.add_argument("--limit", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-brackets", action="store_true", help="strip MetaQA's [topic] hints")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--topic", choices=["auto", "exclude", "keep"],
                        help="the question's own nodes among the answers (default: as the gold: MetaQA exclude, "
                        "PathQuestion auto)")
    args = parser.parse_args(argv)
    if not kb_exists(args.kb):
        if args.ingest is None:
            parser.error(f"KB {args.kb!r} does not exist: pass --ingest FILE")
        from sparqlqa.ingest import ingest

        ingest([args.ingest], kb=args.kb, format="triples")
    kb = open_kb(args.kb)
    items = load_metaqa(args.file) if args.dataset == "metaqa" else load_pathquestion(args.file)
    random.Random(args.seed).shuffle(items)
    items = items[: args.limit]
    topic = args.topic or ("exclude" if args.dataset == "metaqa" else "auto")
    result = evaluate(kb, items, brackets=not args.no_brackets, check_oracle=args.dataset == "metaqa", topic=topic)
    result.update({"dataset": args.dataset, "file": args.file.name, "seed": args.seed,
                   "brackets": not args.no_brackets, "topic": topic})
    print(json.dumps(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
