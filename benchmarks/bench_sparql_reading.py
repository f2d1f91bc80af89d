"""Parse-once cost per query: the guard's one reading (rdflib's SPARQL 1.1 parser) against today's regex lexers.

Today's guard (``query_form`` + ``check_service`` from the branch point, commit 3b2398f, loaded from git
into this process) and the new one (:func:`sparqlqa.query.sparql_reading.read_query` + ``check_service``)
read the same queries in the same run: four as the compiler writes them (a relaxation tier, a count, a
yes/no ASK with VALUES, the evidence query), three a user would type (prefixes, OPTIONAL/FILTER,
a subquery with an aggregate), and one real SERVICE to an allowed host.  The new reading is timed
uncached (every parse) and cached (the LRU the store uses for a text it has read before); the scale
is the compiled query run on an in-memory Oxigraph store holding the movie fixture.

Then the share of a whole ``ask`` spent parsing (offline strategy, the movie fixture, fake embedder, the
reading LRU cleared per ask), in the same run: every query parsed as before (built queries read as text,
as on main before :class:`~sparqlqa.query.built_query.BuiltQuery`), and built queries declaring their reading.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_sparql_reading.py
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from pyoxigraph import RdfFormat
from pyoxigraph import Store as OxStore

from sparqlqa.errors import QueryError
from sparqlqa.query.limits import QueryLimits, bounded, unbounded
from sparqlqa.query.service_guard import check_service
from sparqlqa.query.sparql_reading import _read, clear_cache, read_query

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import median_seconds

ROOT = Path(__file__).resolve().parents[1]
TODAY = "3b2398f1d84596cc67ef3cebf35a406924361602"
FIXTURE = ROOT / "tests" / "fixtures" / "movies.ttl"
KB = "https://sparqlqa.dev/kb/movies/"
COMPILED = (f"PREFIX kb: <{KB}> SELECT DISTINCT ?x1 WHERE {{ ?x1 <{KB}relation/directed_by> ?c0 . "
            f"VALUES ?c0 {{ <{KB}entity/Ridley%20Scott> }} }} LIMIT 1000")
QUERIES = {
    "compiled tier": COMPILED,
    "compiled count": COMPILED.replace("SELECT DISTINCT ?x1", "SELECT (COUNT(DISTINCT ?x1) AS ?count)"),
    "compiled ASK + VALUES": (f"ASK {{ ?x1 <{KB}relation/directed_by> ?c0 . VALUES (?x1 ?c0) {{ "
                              f"(<{KB}entity/Alien> <{KB}entity/Ridley%20Scott>) }} }}"),
    "compiled evidence": (f"SELECT ?x1 ?r ?o WHERE {{ VALUES ?x1 {{ <{KB}entity/Alien> <{KB}entity/Heat> }} "
                          f"?x1 ?r ?o . FILTER(?r IN (<{KB}relation/directed_by>, <{KB}relation/release_year>)) }}"),
    "user: prefixes": ("PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\nPREFIX rel: <" + KB + "relation/>\n"
                       "SELECT ?film ?name WHERE { ?film rel:directed_by ?d . ?d rdfs:label ?name }"),
    "user: OPTIONAL/FILTER": ("PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\nSELECT ?s ?l WHERE {\n"
                              "  ?s ?p ?o # any edge\n  OPTIONAL { ?s rdfs:label ?l FILTER(lang(?l) = 'en') }\n"
                              "  FILTER(?o != 'x#y' && ?o < 2000)\n} ORDER BY ?l LIMIT 20"),
    "user: subquery": ("SELECT ?d (COUNT(?f) AS ?n) WHERE { { SELECT ?f ?d WHERE { ?f <" + KB
                       + "relation/directed_by> ?d } } } GROUP BY ?d HAVING (COUNT(?f) > 1)"),
    "real SERVICE": "SELECT * { SERVICE <https://query.wikidata.org/sparql> { ?s ?p ?o } } LIMIT 10",
}
ALLOWED = frozenset({"query.wikidata.org"})
QUESTIONS = ("Which films did Ridley Scott direct?", "How many films did Ridley Scott direct?")
ASK_RUNS = 5


def todays_guard(folder: Path) -> tuple[Any, Any]:
    """``query_form`` and ``check_service`` as they were at :data:`TODAY` (git show, imported here)."""
    modules: dict[str, ModuleType] = {}
    for name in ("sparql_guard", "service_guard"):
        source = subprocess.run(["git", "-C", str(ROOT), "show", f"{TODAY}:sparqlqa/kb/{name}.py"],
                                capture_output=True, text=True, check=True).stdout
        source = source.replace("from sparqlqa.query.sparql_guard import", "from today_sparql_guard import")
        path = folder / f"today_{name}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(f"today_{name}", path)
        assert spec is not None and spec.loader is not None
        modules[name] = importlib.util.module_from_spec(spec)
        sys.modules[f"today_{name}"] = modules[name]
        spec.loader.exec_module(modules[name])
    return modules["sparql_guard"].query_form, modules["service_guard"].check_service


def main() -> None:
    store = OxStore()
    store.load(path=str(FIXTURE), format=RdfFormat.TURTLE)
    baseline = median_seconds(lambda: list(store.query(COMPILED, use_default_graph_as_union=True)), 2000) * 1e6
    print(f"Oxigraph runs the compiled tier (baseline): {baseline:8.1f} us")
    with tempfile.TemporaryDirectory() as folder:
        query_form, old_check = todays_guard(Path(folder))
        print(f"{'query':24} {'today us':>9} {'reading us':>11} {'cached us':>10} {'reading/today':>14}")
        for name, query in QUERIES.items():
            today = median_seconds(lambda q=query: (query_form(q), old_check(q, ALLOWED)), 1000) * 1e6
            parsed = median_seconds(lambda q=query: check_service(_read(q), ALLOWED), 60) * 1e6
            cached = median_seconds(lambda q=query: check_service(read_query(q), ALLOWED), 1000) * 1e6
            print(f"{name:24} {today:9.1f} {parsed:11.1f} {cached:10.1f} {parsed / today:13.0f}x"
                  f"   (uncached = {parsed / baseline:.0f}x the baseline)")
    from sparqlqa.query.built_query import BuiltQuery

    built = BuiltQuery.select(COMPILED)
    declared = median_seconds(lambda: check_service(built.reading(), ALLOWED), 2000) * 1e6
    print(f"a built query (the compiled tier, declared, no parse): {declared:.1f} us")


def ask_share() -> None:
    """Per question, p50 over :data:`ASK_RUNS` asks: the ask's wall time, the time spent parsing, and the
    queries read by the parser / run in all; first with every query parsed (as before), then with built
    queries declaring their reading (no parse)."""
    import sparqlqa.kb.store as store_module
    import sparqlqa.query.sparql_reading as reading
    from sparqlqa.ingest import ingest
    from sparqlqa.query.built_query import reading_of
    from sparqlqa.strategies.ask import ask

    kb = ingest([FIXTURE], kb="movies")
    parse, spent, counts = reading._parse, [0.0], [0, 0]

    def timed_parse(text: str) -> Any:
        start = time.perf_counter()
        try:
            return parse(text)
        finally:
            spent[0] += time.perf_counter() - start
            counts[0] += 1

    def everything_parsed(query: Any) -> Any:
        counts[1] += 1
        with unbounded():  # in this process, as before (inside ask's scope a text is read by a worker)
            return read_query(str(query))

    def as_declared(query: Any) -> Any:
        counts[1] += 1
        return reading_of(query)

    reading._parse = timed_parse  # type: ignore[assignment]
    ask(kb, QUESTIONS[0], strategy="offline")  # indexes and caches built once, outside the timings
    print(f"\n{'offline ask':44} {'ask ms':>8} {'parse ms':>9} {'share':>6} {'parsed/run':>11}")
    for mode, reader in (("every query parsed (before)", everything_parsed), ("built queries declared", as_declared)):
        store_module.reading_of = reader  # type: ignore[assignment]
        for question in QUESTIONS:
            walls, parses = [], []
            for _ in range(ASK_RUNS):
                clear_cache()
                spent[0], counts[:] = 0.0, [0, 0]
                start = time.perf_counter()
                ask(kb, question, strategy="offline")
                walls.append(time.perf_counter() - start)
                parses.append(spent[0])
            wall, parsed = statistics.median(walls) * 1000, statistics.median(parses) * 1000
            print(f"{mode[:27]:27} {question[:16]:16} {wall:8.1f} {parsed:9.1f} {parsed / wall:6.0%} "
                  f"{counts[0]:>5}/{counts[1]:<5}")
    store_module.reading_of = reading_of  # type: ignore[assignment]
    reading._parse = parse  # type: ignore[assignment]


DEEP = "SELECT * WHERE " + "{" * 6000 + " ?s ?p ?o " + "}" * 6000


def untrusted_cost(runs: int = 30) -> None:
    """Per untrusted query, uncached, p50: read in this process (outside a scope) and in a warm reading worker
    (inside a ``bounded`` scope, as a served or LLM query is): the wall time and this process's own CPU.  Each
    run ends the text with a new comment, so neither this process nor the worker has read it before."""
    def costs(text: str) -> tuple[float, float]:
        walls, cpus = [], []
        for run in range(runs):
            fresh = f"{text}\n# {time.time_ns()} {run}"
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                read_query(fresh)
            except QueryError:  # a refusal is a reading's outcome too
                pass
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
        return statistics.median(walls) * 1000, statistics.median(cpus) * 1000

    cases = {**{name: QUERIES[name] for name in ("user: prefixes", "user: OPTIONAL/FILTER", "user: subquery",
                                                   "real SERVICE")}, "refused: 6,000 deep": DEEP}
    print(f"\n{'untrusted query':24} {'here ms':>8} {'here cpu':>9} {'worker ms':>10} {'worker cpu':>11}")
    with bounded(QueryLimits(timeout_s=600)):
        read_query("ASK { }")  # the reading pool is up and warm
        for name, text in cases.items():
            with unbounded():
                here = costs(text)
            there = costs(text)
            print(f"{name:24} {here[0]:8.2f} {here[1]:9.2f} {there[0]:10.2f} {there[1]:11.2f}")


if __name__ == "__main__":
    main()
    untrusted_cost()
    with tempfile.TemporaryDirectory() as home:
        os.environ["SPARQLQA_HOME"], os.environ["SPARQLQA_EMBEDDER"] = home, "fake"
        ask_share()
