"""What the parser-checked rewrites cost against the lexers they replaced (issue 38), in the same run.

An endpoint's SELECT without a LIMIT gets one (``with_limit``), and a saved ``.rq`` writes IRIs as prefixed names
(``compact_iris``).  Before, a regex lexer found the place (``ensure_limit`` in ``remote/endpoint.py`` and
``compact_iris`` in ``query/sparql_text.py`` at commit c942dba, loaded from git into this process); now each
rewrite is proposed without a lexer and kept only where the one reading (rdflib's parser) agrees.  Medians per
query, the reading LRU cleared before each call (every text parsed) and kept (the original read before: what an
endpoint query pays, since the guard has read it already).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_rewrite.py
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from sparqlqa.query.limits import QueryLimits, bounded
from sparqlqa.query.sparql_reading import read_query
from sparqlqa.query.sparql_rewrite import compact_iris, with_limit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import median_seconds

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "c942dba"
KB = "https://sparqlqa.dev/kb/movies/"
PREFIXES = {"kb": KB, "rel": KB + "relation/", "ent": KB + "entity/",
            "rdfs": "http://www.w3.org/2000/01/rdf-schema#"}
QUERIES = {
    "compiled tier": (f"SELECT DISTINCT ?x1 WHERE {{\n  VALUES ?c0 {{ <{KB}entity/Ridley_Scott> }}\n"
                      f"  ?x1 <{KB}relation/directed_by> ?c0 .\n  FILTER(isIRI(?x1))\n}}"),
    "evidence": (f"SELECT ?x1 ?r ?o WHERE {{ VALUES ?x1 {{ <{KB}entity/Alien> <{KB}entity/Heat> }} "
                 f"?x1 ?r ?o . FILTER(?r IN (<{KB}relation/directed_by>, <{KB}relation/release_year>)) }}"),
    "aggregate table": (f"SELECT ?d (COUNT(DISTINCT ?f) AS ?n) WHERE {{ ?f <{KB}relation/directed_by> ?d . "
                        f"?d <http://www.w3.org/2000/01/rdf-schema#label> ?l }} GROUP BY ?d ORDER BY DESC(?n)"),
    "closing VALUES": (f"SELECT ?f ?y WHERE {{ ?f <{KB}relation/release_year> ?y }} "
                       f"VALUES ?f {{ <{KB}entity/Alien> <{KB}entity/Heat> }}"),
}
RUNS = 30
_RUN = itertools.count()


def before_functions(folder: Path) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``ensure_limit`` and ``compact_iris`` as they were at :data:`BEFORE` (git show, loaded here)."""
    text = _show("sparqlqa/query/sparql_text.py")
    path = folder / "before_sparql_text.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("before_sparql_text", path)
    assert spec is not None and spec.loader is not None
    module: ModuleType = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    endpoint = _show("sparqlqa/remote/endpoint.py")
    node = next(n for n in ast.parse(endpoint).body if isinstance(n, ast.FunctionDef) and n.name == "ensure_limit")
    namespace: dict[str, Any] = {"sparql_tokens": module.sparql_tokens}
    exec(ast.get_source_segment(endpoint, node) or "", namespace)
    return namespace["ensure_limit"], module.compact_iris


def _show(path: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), "show", f"{BEFORE}:{path}"], capture_output=True, text=True,
                          check=True).stdout


def cold(call: Callable[[str], Any], query: str) -> float:
    """The median of ``call`` on ``query`` with every text parsed anew: each run's text ends with a comment of its
    own, so no reading is remembered (not the caller's LRU, not a query worker's)."""
    return median_seconds(lambda: call(f"{query}\n# run {next(_RUN)}\n"), RUNS)


def _bounded_reading(text: str) -> Any:
    """The original's reading as :func:`compact_iris` gets it: in a query worker."""
    with bounded(QueryLimits(timeout_s=30)):
        return read_query(text)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        ensure_limit, old_compact = before_functions(Path(folder))
    read_query("ASK {}")  # the parser thread started
    print("| query | step | before (lexer) | now (every reading) | the original's reading | now beyond it "
          "| same text |")
    print("|---|---|---:|---:|---:|---:|---|")
    for name, query in QUERIES.items():
        steps: dict[str, tuple[Callable[[str], Any], Callable[[str], Any]]] = {
            "LIMIT for an endpoint": (lambda q: ensure_limit(q, 1000), lambda q: with_limit(q, 1000)),
            "saved .rq": (lambda q: old_compact(q, PREFIXES), lambda q: compact_iris(q, PREFIXES))}
        for step, (old, new) in steps.items():
            same = old(query) == new(query)
            before = median_seconds(lambda o=old, q=query: o(q), RUNS)
            now = cold(new, query)
            reading = cold(lambda q: read_query(q), query) if step.startswith("LIMIT") else \
                cold(lambda q: _bounded_reading(q), query)
            print(f"| {name} | {step} | {before * 1e6:.0f} µs | {now * 1e3:.1f} ms | {reading * 1e3:.1f} ms | "
                  f"{(now - reading) * 1e3:.1f} ms | {'yes' if same else 'no'} |")


if __name__ == "__main__":
    main()
