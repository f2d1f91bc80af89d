"""Triplet-prompt schema section on a big generated schema (PathQuestion-Large-like): size and recall.

A one-type KB with ``--relations`` relations, half of them ``X_inverse`` copies
of the other half (Freebase-style names such as ``film_film_directed_by``,
Zipf-distributed counts).  For ``--questions`` questions that each name one
relation's words ("what is the directed by of the film X ?", relations drawn
uniformly, so most are rare), it reports the schema section's estimated tokens,
how many relations it lists, whether the asked relation is among them, and
the time to build it.  Run it with this checkout first on the path, then with
an older checkout (``PYTHONPATH=/work/main``) for the baseline: the script uses
whichever API the imported ``sparqlqa`` has.

``--kb-file FILE`` instead measures the section of a real delimited KB (``head TAB rel TAB tail``,
ingested into a scratch ``$SPARQLQA_HOME``); ``--write-wc FILE`` writes a WorldCup2014-shaped one
(10 relations, each with an ``_inverse`` twin, 300 players).

Usage::

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_prompt.py --embedder fake
    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_prompt.py   # the default (real) embedder
    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_prompt.py --write-wc /tmp/wc.txt --kb-file /tmp/wc.txt
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from typing import Any

DOMAINS = ["film", "people", "location", "music", "sports", "book", "tv", "organization", "award", "education",
           "government", "business", "medicine", "architecture", "religion", "military", "aviation", "olympics",
           "soccer", "biology"]
PROPERTIES = ["directed_by", "place_of_birth", "nationality", "contains", "genre", "author", "team", "founded_by",
              "award_winner", "institution", "office_holder", "industry", "symptom", "architect", "deity",
              "commander", "airline", "country", "position", "species", "language", "spouse", "parents",
              "children", "profession", "cause_of_death", "religion_of", "ethnicity", "member_of", "location_of",
              "release_date_of", "producer", "composer", "capital", "currency", "league", "coach", "publisher",
              "headquarters", "ceo", "treatment", "designer", "participant", "prize", "school_type", "jurisdiction",
              "manufacturer", "venue", "opponent", "sponsor"]


def make_schema(count: int, seed: int) -> Any:
    from sparqlqa.kb.schema import RelationInfo, Schema, TypeInfo

    rng = random.Random(seed)
    names = rng.sample([f"{d}_{p}" for d in DOMAINS for p in PROPERTIES], count // 2)
    relations = []
    for rank, name in enumerate(names, start=1):
        n = max(1, int(50_000 / rank))
        base = f"https://sparqlqa.dev/kb/big/relation/{name}"
        relations += [RelationInfo(base, name.replace("_", " "), n),
                      RelationInfo(base + "_inverse", name.replace("_", " ") + " inverse", n)]
    relations.sort(key=lambda r: (-r.count, r.iri))
    return Schema(types=[TypeInfo("https://sparqlqa.dev/ns#Entity", "entity", 100_000)], relations=relations)


def summary(schema: Any, question: str, embedder: Any) -> str:
    from sparqlqa.stages import triplets

    if hasattr(triplets, "SCHEMA_BUDGET"):  # before issue 13: characters, frequency order
        return str(triplets.schema_summary(schema))
    return str(triplets.schema_summary(schema, question, embedder=embedder))


WC_RELATIONS = ["plays_for_country", "plays_position", "plays_in_club", "wears_number", "is_aged", "born_in_city",
                "coached_by", "captain_of", "scored_against", "club_in_country"]


def write_wc(path: str) -> None:
    rng = random.Random(1)
    lines = []
    for i in range(300):
        for rel in WC_RELATIONS:
            other = f"{rel.split('_')[-1].title()}_{rng.randint(0, 30)}"
            lines += [f"Player_{i}\t{rel}\t{other}", f"{other}\t{rel}_inverse\tPlayer_{i}"]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


def kb_file_section(path: str, embedder: Any) -> None:
    import os
    import tempfile

    os.environ["SPARQLQA_HOME"] = tempfile.mkdtemp(prefix="bench-prompt-")
    from sparqlqa.ingest import ingest

    kb = ingest([path], kb="bench", format="triples")
    text = summary(kb.schema, "which player in Club_3 is from Netherlands ?", embedder)
    print(json.dumps({"kb_file": path, "relations": len(kb.schema.relations), "types": len(kb.schema.types),
                      "schema_tokens": -(-len(text) // 4),
                      "lines": sum(line.startswith("- ") for line in text.splitlines())}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--relations", type=int, default=400)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--embedder", default=None, help="embedder spec (default: the default embedder)")
    parser.add_argument("--kb-file", help="measure this delimited KB's section instead")
    parser.add_argument("--write-wc", help="first write a WorldCup2014-shaped KB file here")
    args = parser.parse_args()
    from sparqlqa.embed.embedders import get_embedder

    embedder = get_embedder(args.embedder)
    if args.write_wc:
        write_wc(args.write_wc)
    if args.kb_file:
        kb_file_section(args.kb_file, embedder)
        return
    schema = make_schema(args.relations, args.seed)
    rng = random.Random(args.seed + 1)
    bases = [r for r in schema.relations if not r.iri.endswith("_inverse")]
    summary(schema, "warm up", embedder)
    tokens, shown, times, hits = [], [], [], 0
    for _ in range(args.questions):
        rel = rng.choice(bases)
        domain, _, prop = rel.label.partition(" ")
        question = f"what is the {prop} of the {domain} entity_{rng.randint(1, 999)} ?"
        started = time.perf_counter()
        text = summary(schema, question, embedder)
        times.append((time.perf_counter() - started) * 1000)
        lines = [line[2:] for line in text.splitlines() if line.startswith("- ") and "…" not in line]
        tokens.append(-(-len(text) // 4))
        shown.append(len(lines))
        hits += any(line.split(":")[0].split(" (")[0] == rel.label for line in lines)
    print(json.dumps({
        "relations": len(schema.relations), "questions": args.questions, "embedder": embedder.name,
        "schema_tokens_p50": statistics.median(tokens), "relations_listed_p50": statistics.median(shown),
        "asked_relation_listed": round(hits / args.questions, 3),
        "build_ms_p50": round(statistics.median(times), 2), "build_ms_max": round(max(times), 2),
    }))


if __name__ == "__main__":
    main()
