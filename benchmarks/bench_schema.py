"""Schema computation at ingest on relational-style graphs (issue 34 item 4): ``compute_schema`` time.

A graph like those mapped from databases (Spider4SPARQL, R2RML, Ontop): ``tables`` classes, ``rows`` rows
each, ``columns`` value columns per row (each table has a ``name`` column) and one foreign key.  Run it with
this checkout and with another one on ``PYTHONPATH`` to compare (the median of ``--repeat`` runs)::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_schema.py [--rows 400] [--nt FILE]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path


def relational_graph(tables: int, rows: int, columns: int) -> str:
    """N-Triples of ``tables`` × ``rows`` rows with ``columns`` value columns and a foreign key each."""
    base = "http://bench.example/"
    lines = []
    for t in range(tables):
        for r in range(rows):
            node = f"<{base}t{t}/id={r}>"
            lines.append(f"{node} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{base}t{t}> .")
            lines.append(f'{node} <{base}t{t}#name> "row {r} of {t}" .')
            lines += [f'{node} <{base}t{t}#c{c}> "{r * c}"^^<http://www.w3.org/2001/XMLSchema#integer> .'
                      for c in range(columns - 2)]
            lines.append(f"{node} <{base}t{t}#ref> <{base}t{(t + 1) % tables}/id={r}> .")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--columns", type=int, default=10)
    parser.add_argument("--nt", type=Path, help="time this N-Triples file instead")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from pyoxigraph import RdfFormat

    from sparqlqa.kb.profile import DEFAULT_PROFILE
    from sparqlqa.kb.schema import compute_schema
    from sparqlqa.kb.store import OxigraphStore

    data = args.nt.read_bytes() if args.nt else relational_graph(args.tables, args.rows, args.columns).encode()
    store = OxigraphStore.in_memory()
    store.oxstore.load(data, format=RdfFormat.N_TRIPLES)
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        schema = compute_schema(store, DEFAULT_PROFILE)
        times.append(time.perf_counter() - start)
    print(f"{len(store.oxstore):,} triples, {len(schema.relations)} relations: compute_schema median "
          f"{statistics.median(times) * 1000:.1f} ms (min {min(times) * 1000:.1f}, {args.repeat} runs)")


if __name__ == "__main__":
    main()
