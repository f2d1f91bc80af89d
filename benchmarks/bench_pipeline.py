"""Pipeline benchmark: the non-LLM part of 4step (linking + SPARQL + vector ranking) per question, on MetaQA.

Stage 1 (the LLM) is replaced by hand-made triplets built from MetaQA's question
types (``actor_to_movie`` → ``?x1 -starred_actors-> 'Entity'``), so what is
timed is exactly what runs after the LLM in ``sparqlqa ask``: linking the
constants, the compiled SPARQL on Oxigraph (all tiers and evidence queries),
and the vector ranking with the real default embedder (question embedding
included, reported separately too).  The same compiled queries are then run,
in the same process, on rdflib's in-memory SPARQL engine over the same triples,
and the ratio is reported.

The KB and its node index are built once in ``--home`` (a scratch
``SPARQLQA_HOME``); building them is not timed.

Usage::

    .venv/bin/python benchmarks/bench_pipeline.py --home /tmp/sqa-bench/home
    .venv/bin/python benchmarks/bench_pipeline.py --home /tmp/h --questions 50 --hops 1 --rdflib 20
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "metaqa"
#: the relation linking a movie to each MetaQA answer kind (movie is always the head)
RELATION = {"actor": "starred_actors", "director": "directed_by", "writer": "written_by", "genre": "has_genre",
            "language": "in_language", "year": "release_year", "tags": "has_tags", "tag": "has_tags",
            "imdbrating": "has_imdb_rating", "imdbvotes": "has_imdb_votes"}


@dataclass
class Question:
    text: str
    entity: str
    answers: set[str]
    qtype: str


@dataclass
class Record:
    """Timings (ms) and outcome of one question."""

    linking: float = 0.0
    sparql: float = 0.0
    embed: float = 0.0
    vector: float = 0.0
    queries: list[str] = field(default_factory=list)
    ox_queries: float = 0.0
    rdflib_queries: float | None = None
    rdflib_timeouts: int = 0
    candidates: int = 0
    hit1: bool = False

    @property
    def total(self) -> float:
        return self.linking + self.sparql + self.embed + self.vector


def hop_triplets(qtype: str, entity: str) -> dict[str, Any]:
    """Triplets (the LLM's JSON shape) for a MetaQA question type such as ``actor_to_movie_to_year``."""
    kinds = qtype.split("_to_")
    names = [None] + [f"?x{i}" for i in range(1, len(kinds))]

    def term(i: int) -> dict[str, Any]:
        if i == 0:
            return {"kind": "constant", "text": entity, "type": None}
        return {"kind": "variable", "text": names[i], "type": None}

    triplets = []
    for i in range(len(kinds) - 1):
        movie, other = (i, i + 1) if kinds[i] == "movie" else (i + 1, i)
        relation = RELATION[kinds[other]]
        triplets.append({"head": term(movie), "relation": relation, "tail": term(other)})
    return {"triplets": triplets, "target": names[-1], "requirements": []}


def load_questions(hops: int, count: int, seed: int) -> list[Question]:
    folder = DATA / f"{hops}-hop"
    lines = (folder / "qa_dev.txt").read_text("utf-8").splitlines()
    qtypes = (folder / "qa_dev_qtype.txt").read_text("utf-8").splitlines()
    picked = random.Random(seed).sample(range(len(lines)), min(count, len(lines)))
    found = []
    for index in picked:
        text, _, answers = lines[index].partition("\t")
        entity = re.search(r"\[(.+?)\]", text)
        if entity is None:
            continue
        found.append(Question(text.replace("[", "").replace("]", ""), entity.group(1),
                              set(answers.split("|")), qtypes[index].strip()))
    return found


def ensure_kb(embedder: Any) -> Any:
    """The ``metaqa`` KB and its label and node indexes (built on first use, not timed)."""
    from sparqlqa.ingest import ingest
    from sparqlqa.kb.knowledge_base import kb_exists, open_kb
    from sparqlqa.kb.labels import LabelIndex
    from sparqlqa.vectors.index import load_index

    if not kb_exists("metaqa"):
        print("ingesting MetaQA ...", file=sys.stderr)
        ingest([DATA / "kb_reconstructed.txt"], kb="metaqa", format="triples", options={"sep": "|"})
    kb = open_kb("metaqa")
    started = time.perf_counter()
    index = load_index(kb, embedder, progress=lambda d, n: print(f"\rindex {d}/{n}", end="", file=sys.stderr))
    LabelIndex.for_kb(kb)
    print(f"\nindexes ready ({len(index)} nodes, {time.perf_counter() - started:.1f} s)", file=sys.stderr)
    return kb


def run_question(kb: Any, question: Question, embedder: Any) -> Record:
    """Link, SPARQL and rank one question, timing each stage the way ``ask`` runs them."""
    from sparqlqa.kb.node_text import fetch_labels
    from sparqlqa.stages.execute import ExecuteOptions, drop_constant_nodes, find_candidates
    from sparqlqa.stages.linking import link_constants
    from sparqlqa.stages.ranking import query_text, rank_candidates
    from sparqlqa.stages.triplets import triplets_from_data
    from sparqlqa.vectors.index import embed_query

    record = Record()
    triplets = triplets_from_data(hop_triplets(question.qtype, question.entity), question.text, kb.schema,
                                  source="parsed")
    t0 = time.perf_counter()
    linked = link_constants(triplets, kb, embedder=embedder)
    t1 = time.perf_counter()
    candidates = find_candidates(triplets, linked, kb, ExecuteOptions())
    drop_constant_nodes(candidates, linked)
    t2 = time.perf_counter()
    embed_query(embedder, query_text(question.text, triplets.requirements))
    t3 = time.perf_counter()
    ranking = rank_candidates(kb, question.text, candidates, k=20, embedder=embedder,
                              requirements=triplets.requirements)
    t4 = time.perf_counter()
    record.linking, record.sparql = (t1 - t0) * 1000, (t2 - t1) * 1000
    record.embed, record.vector = (t3 - t2) * 1000, (t4 - t3) * 1000
    record.queries = [q.query for q in candidates.queries]
    record.candidates = len(candidates.items)
    if ranking.items:
        names, _ = fetch_labels(kb, [ranking.items[0].iri])
        record.hit1 = names.get(ranking.items[0].iri) in question.answers
    return record


class QueryTimeout(Exception):
    pass


def _rdflib_rows(graph: Any, query: str, timeout_s: float) -> int | None:
    """Rows of ``query`` on rdflib, or ``None`` when it runs past ``timeout_s`` (SIGALRM)."""

    def expire(signum: int, frame: Any) -> None:
        raise QueryTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        return len(list(graph.query(query)))
    except QueryTimeout:
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def time_queries(records: list[Record], kb: Any, graph: Any, limit: int, timeout_s: float) -> None:
    """Run each question's compiled queries on Oxigraph and on rdflib (interleaved), fill the timings.

    An rdflib query stopped at ``timeout_s`` counts as ``timeout_s`` (so the ratio is a lower bound).
    """
    for number, record in enumerate(records[:limit], start=1):
        record.rdflib_queries = 0.0
        for query in record.queries:
            t0 = time.perf_counter()
            ox_rows = len(kb.query(query).rows)
            t1 = time.perf_counter()
            rdf_rows = _rdflib_rows(graph, query, timeout_s)
            t2 = time.perf_counter()
            if rdf_rows is None:
                record.rdflib_timeouts += 1
            elif ox_rows != rdf_rows:
                print(f"row count differs ({ox_rows} vs {rdf_rows}) for:\n{query}", file=sys.stderr)
            record.ox_queries += (t1 - t0) * 1000
            record.rdflib_queries += (t2 - t1) * 1000
        if number % 10 == 0:
            print(f"  rdflib: {number}/{min(limit, len(records))} questions", file=sys.stderr)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summarize(label: str, records: list[Record]) -> dict[str, Any]:
    """p50/p95 per stage, hit@1, and the Oxigraph-vs-rdflib ratio for the same queries."""
    stats: dict[str, Any] = {"set": label, "questions": len(records),
                             "hit1": round(sum(r.hit1 for r in records) / max(1, len(records)), 3)}
    for name in ("linking", "sparql", "embed", "vector", "total"):
        values = [getattr(r, name) for r in records]
        stats[name] = {"p50": round(pct(values, 0.5), 2), "p95": round(pct(values, 0.95), 2)}
    no_embed = [r.total - r.embed for r in records]
    stats["total_without_embed"] = {"p50": round(pct(no_embed, 0.5), 2), "p95": round(pct(no_embed, 0.95), 2)}
    paired = [r for r in records if r.rdflib_queries is not None and r.ox_queries > 0]
    if paired:
        ox = sum(r.ox_queries for r in paired)
        rdf = sum(r.rdflib_queries or 0.0 for r in paired)
        stats["rdflib"] = {"questions": len(paired), "timeouts": sum(r.rdflib_timeouts for r in paired),
                           "queries": sum(len(r.queries) for r in paired), "oxigraph_ms_total": round(ox, 1),
                           "rdflib_ms_total": round(rdf, 1), "ratio_total": round(rdf / ox, 1),
                           "ratio_median": round(statistics.median((r.rdflib_queries or 0) / r.ox_queries
                                                                   for r in paired), 1),
                           "rdflib_p50_ms": round(pct([r.rdflib_queries or 0 for r in paired], 0.5), 2),
                           "oxigraph_p50_ms": round(pct([r.ox_queries for r in paired], 0.5), 2)}
    return stats


def markdown(all_stats: list[dict[str, Any]]) -> str:
    rows = ["| set | n | linking p50/p95 | SPARQL p50/p95 | question embedding p50/p95 | vector rank p50/p95 "
            "| **total p50/p95** | total w/o embedding p50/p95 | hit@1 |", "|---" * 9 + "|"]
    for s in all_stats:
        cells = [f"{s[k]['p50']} / {s[k]['p95']}" for k in ("linking", "sparql", "embed", "vector")]
        rows.append(f"| {s['set']} | {s['questions']} | " + " | ".join(cells)
                    + f" | **{s['total']['p50']} / {s['total']['p95']}** | {s['total_without_embed']['p50']} / "
                    f"{s['total_without_embed']['p95']} | {s['hit1']} |")
    rows += ["", "| set | questions (queries) | Oxigraph p50 (ms) | rdflib p50 (ms) | rdflib/Oxigraph (total) "
             "| rdflib/Oxigraph (median per question) | rdflib timeouts |", "|---" * 7 + "|"]
    for s in all_stats:
        r = s.get("rdflib")
        if r:
            rows.append(f"| {s['set']} | {r['questions']} ({r['queries']}) | {r['oxigraph_p50_ms']} | "
                        f"{r['rdflib_p50_ms']} | **{r['ratio_total']}×** | {r['ratio_median']}× | {r['timeouts']} |")
    return "\n".join(rows)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", required=True, help="scratch SPARQLQA_HOME (KB + indexes are kept there)")
    parser.add_argument("--questions", type=int, default=300, help="questions per hop set")
    parser.add_argument("--hops", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rdflib", type=int, default=100, help="questions per set also run on rdflib")
    parser.add_argument("--rdflib-timeout", type=float, default=30.0, help="seconds per rdflib query")
    parser.add_argument("--embedder", default="sentence-transformers:all-MiniLM-L6-v2")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, help="write the figures here too")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    os.environ["SPARQLQA_HOME"] = args.home
    from sparqlqa.embed.embedders import get_embedder
    from sparqlqa.ingest.rdflib_interop import kb_to_graph

    embedder = get_embedder(args.embedder)
    kb = ensure_kb(embedder)
    started = time.perf_counter()
    graph = kb_to_graph(kb)
    print(f"rdflib graph: {len(graph)} triples loaded in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    for warm in load_questions(1, 5, seed=args.seed + 1):
        run_question(kb, warm, embedder)
    all_stats = []
    for hops in args.hops:
        records = []
        for number, question in enumerate(load_questions(hops, args.questions, args.seed), start=1):
            records.append(run_question(kb, question, embedder))
            if number % 50 == 0:
                print(f"{hops}-hop: {number} questions", file=sys.stderr)
        time_queries(records, kb, graph, args.rdflib, args.rdflib_timeout)
        all_stats.append(summarize(f"{hops}-hop", records))
    print(markdown(all_stats))
    if args.json:
        args.json.write_text(json.dumps(all_stats, indent=2) + "\n", "utf-8")


if __name__ == "__main__":
    main()
