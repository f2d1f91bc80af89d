"""What the SERVICE check adds to a query: ``check_service`` alone vs the same query run on Oxigraph.

Three queries on the movie fixture (tests/fixtures/movies.ttl, in memory): a query as the compiler writes
it (no "service" anywhere: only the gate runs), the same with an IRI holding "service" (the whole reader
runs), and one with a real SERVICE to an allowed host (reader + host check; not run on Oxigraph).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_service_guard.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from pyoxigraph import RdfFormat
from pyoxigraph import Store as OxStore

from sparqlqa.query.service_guard import check_service
from sparqlqa.query.sparql_reading import read_query

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import p50_us

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "movies.ttl"
COMPILED = ("PREFIX kb: <https://sparqlqa.dev/kb/movies/> SELECT DISTINCT ?x1 WHERE { "
            "?x1 <https://sparqlqa.dev/kb/movies/relation/directed_by> ?c0 . "
            "VALUES ?c0 { <https://sparqlqa.dev/kb/movies/entity/Ridley%20Scott> } } LIMIT 1000")
NAMED = COMPILED.replace("directed_by", "service_of")
FEDERATED = "SELECT * { SERVICE <https://query.wikidata.org/sparql> { ?s ?p ?o } } LIMIT 10"


def main() -> None:
    store = OxStore()
    store.load(path=str(FIXTURE), format=RdfFormat.TURTLE)
    allowed = frozenset({"query.wikidata.org"})
    oxigraph = p50_us(lambda: list(store.query(COMPILED, use_default_graph_as_union=True)))  # type: ignore[arg-type]
    print(f"oxigraph, compiled query (baseline): {oxigraph:8.1f} us")
    for name, query in (("compiled query", COMPILED), ("IRI holding 'service'", NAMED),
                        ("real SERVICE", FEDERATED)):
        spent = p50_us(lambda q=query: check_service(read_query(q), allowed))  # type: ignore[misc]
        print(f"check_service, {name:22}: {spent:8.1f} us  ({spent / oxigraph:.3f}x the baseline)")


if __name__ == "__main__":
    main()
