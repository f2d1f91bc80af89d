"""KB groups (issue 27, item 5): a KB split in two by relation, asked as the group ``a+b``, against the
merged KB, on MetaQA 2-hop/3-hop dev questions whose gold path needs both halves.

The MetaQA KB file is split by relation: film→person relations (directed_by, written_by, starred_actors)
in one KB, every other relation (tags, genre, year, language, rating, votes) in the other; both halves
are ingested with the merged KB's base IRI, so a film or person is one IRI in all three.  Each question
is asked offline (``strategy="offline"``, ``rerank="none"``, topic entities excluded as MetaQA's gold
does) of the merged KB and of the group, alternating which goes first; reported: the share of
questions whose top answer is the same node, Hits@1 of each (top label among the gold), and latency
p50/p95 of each, measured in the same run.  The group's one-time build (the merged group store and its
node index) is timed apart.

Usage::

    SPARQLQA_HOME=/tmp/bench .venv/bin/python benchmarks/bench_groups.py \\
        --kb metaqa --ingest ../shared/data/metaqa/kb_reconstructed.txt \\
        --questions ../shared/data/metaqa/2-hop/qa_dev.txt ../shared/data/metaqa/3-hop/qa_dev.txt \\
        --limit 100 --seed 0
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_offline import Item, load_metaqa, percentile

from sparqlqa.kb.knowledge_base import KnowledgeBase, kb_exists, open_kb
from sparqlqa.kb.labels import normalize_label
from sparqlqa.paths import sparqlqa_home

#: the film→person half; every other relation goes to the other half
PEOPLE_RELATIONS = frozenset({"directed_by", "written_by", "starred_actors"})
PEOPLE, FACTS = "mq-people", "mq-facts"


def split_kb(source: Path, base_iri: str) -> None:
    """Ingest the two halves of ``source`` (``head|relation|tail`` lines) with ``base_iri``, once."""
    from sparqlqa.ingest import ingest

    if kb_exists(PEOPLE) and kb_exists(FACTS):
        return
    folder = sparqlqa_home() / "split"
    folder.mkdir(exist_ok=True)
    halves: dict[str, list[str]] = {PEOPLE: [], FACTS: []}
    for line in source.read_text("utf-8").splitlines():
        parts = line.split("|")
        if len(parts) == 3:
            halves[PEOPLE if parts[1] in PEOPLE_RELATIONS else FACTS].append(line)
    for name, lines in halves.items():
        path = folder / f"{name}.txt"
        path.write_text("\n".join(lines) + "\n", "utf-8")
        ingest([path], kb=name, format="triples", base_iri=base_iri, replace=True)


def export_questions(path: Path, folder: Path, limit: int, seed: int) -> int:
    """Write the sampled both-halves questions of ``path`` as a MetaQA file pair (``qa_dev.txt`` and its
    ``qa_dev_qtype.txt``) under ``folder/<hop>/``, for ``sparqlqa eval metaqa`` (4step, recorded LLM
    answers); how many."""
    lines = path.read_text("utf-8").splitlines()
    qtypes = path.with_name(path.stem + "_qtype.txt").read_text("utf-8").splitlines()
    items = load_metaqa(path)
    chosen = [n for n, item in enumerate(items) if needs_both(item)]
    random.Random(seed).shuffle(chosen)
    chosen = chosen[:limit]
    target = folder / path.parent.name
    target.mkdir(parents=True, exist_ok=True)
    (target / "qa_dev.txt").write_text("".join(lines[n] + "\n" for n in chosen), "utf-8")
    (target / "qa_dev_qtype.txt").write_text("".join(qtypes[n] + "\n" for n in chosen), "utf-8")
    return len(chosen)


def needs_both(item: Item) -> bool:
    names = {name for name, _ in item.gold_path}
    return bool(names & PEOPLE_RELATIONS) and bool(names - PEOPLE_RELATIONS)


def _ask(kb: KnowledgeBase, question: str) -> tuple[str, str, float]:
    from sparqlqa.strategies.ask import ask

    started = time.perf_counter()
    answer = ask(kb, question, strategy="offline", rerank="none", k=5, topic="exclude")
    ms = (time.perf_counter() - started) * 1000
    top = answer.top
    return (top.iri if top else "", normalize_label(top.label) if top else "", ms)


def run(merged: KnowledgeBase, group: KnowledgeBase, items: list[Item]) -> dict[str, Any]:
    rows = []
    for number, item in enumerate(items):
        gold = {normalize_label(a) for a in item.answers}
        order = [("merged", merged), ("group", group)]
        got = dict((name, _ask(kb, item.question)) for name, kb in (order if number % 2 == 0 else order[::-1]))
        rows.append({"same": got["merged"][0] == got["group"][0],
                     **{f"hit_{n}": got[n][1] in gold for n in got}, **{f"ms_{n}": got[n][2] for n in got}})
        if (number + 1) % 25 == 0:
            print(f"  {number + 1}/{len(items)}", file=sys.stderr, flush=True)
    n = len(rows)

    def share(key: str) -> float:
        return round(sum(r[key] for r in rows) / n, 4) if n else float("nan")

    result: dict[str, Any] = {"n": n, "same_top": share("same")}
    for name in ("merged", "group"):
        latencies = [r[f"ms_{name}"] for r in rows]
        result[name] = {"hits@1": share(f"hit_{name}"), "p50_ms": round(statistics.median(latencies), 1),
                        "p95_ms": round(percentile(latencies, 0.95), 1)}
    result["p50_ratio"] = round(result["group"]["p50_ms"] / result["merged"]["p50_ms"], 3)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kb", default="metaqa", help="the merged KB (ingested from --ingest when missing)")
    parser.add_argument("--ingest", type=Path, required=True, help="MetaQA's delimited KB file")
    parser.add_argument("--questions", type=Path, nargs="+", required=True, help="qa_dev.txt files (with qtype)")
    parser.add_argument("--limit", type=int, default=100, help="questions per file")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--export", type=Path, help="only write the sampled questions (MetaQA format) here")
    args = parser.parse_args(argv)
    if args.export is not None:
        for path in args.questions:
            print(path, export_questions(path, args.export, args.limit, args.seed))
        return 0
    if not kb_exists(args.kb):
        from sparqlqa.ingest import ingest

        ingest([args.ingest], kb=args.kb, format="triples")
    merged = open_kb(args.kb)
    split_kb(args.ingest, merged.manifest.base_iri)
    started = time.perf_counter()
    group = open_kb(f"{PEOPLE}+{FACTS}")
    built_s = time.perf_counter() - started
    from sparqlqa.embed.embedders import get_embedder
    from sparqlqa.vectors.index import ensure_index

    index = ensure_index(group, get_embedder())  # before the questions: a first ask's deadline is 600 s
    results: dict[str, Any] = {"group_open_s": round(built_s, 1), "group_index_s": index.seconds,
                               "group_index_already_built": index.already_built}
    for path in args.questions:
        items = [item for item in load_metaqa(path) if needs_both(item)]
        random.Random(args.seed).shuffle(items)
        items = items[: args.limit]
        if "warm_s" not in results:  # first questions: the node indexes (the group's built on demand)
            started = time.perf_counter()
            _ask(merged, items[0].question)
            _ask(group, items[0].question)
            results["warm_s"] = round(time.perf_counter() - started, 1)
        results[f"{path.parent.name}/{path.name}"] = run(merged, group, items)
        print(json.dumps(results), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
