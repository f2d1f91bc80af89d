"""Faults, SERVICE (differential): whatever the guard lets through, Oxigraph runs without a request.

Generated queries mix SERVICE calls (in every position: subqueries, OPTIONAL, UNION, GRAPH, MINUS,
EXISTS and NOT EXISTS in FILTER and BIND) with what made the old regex guard misread a query:
strings holding quotes, ``#`` and SERVICE, ``<`` comparisons before a quote, comments ending at CR
or LF, IRIs holding ``#``, ``\\u`` escapes.  The ground truth is a canary HTTP listener on
127.0.0.1: every query the guard (:func:`sparqlqa.query.sparql_reading.read_query` and
:func:`sparqlqa.query.service_guard.check_service`, as :meth:`Store.query` calls them) lets through is
run on a real Oxigraph store, in process and in a KB's query worker, and the listener must have
seen no request.  The run is bounded (``derandomize``, a fixed number of examples); the issue 33
bypasses are fixed examples.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fake_servers import FakeSparqlServer, Scripted
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode, Quad

from sparqlqa.errors import QueryError, ServiceRefused, SparqlSyntaxError, UpdateRefused
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.store import OxigraphStore
from sparqlqa.query.limits import QueryLimits
from sparqlqa.query.service_guard import allowance
from sparqlqa.query.sparql_reading import UnreadableQuery

#: the canary's port is not known when the strategies are built: queries name it by this mark
CANARY_BASE = "http://canary.invalid:1/"
CANARY = CANARY_BASE + "sparql"
ROWS = b'{"head": {"vars": ["w"]}, "results": {"bindings": [{"w": {"type": "literal", "value": "x"}}]}}'
SETTINGS = settings(max_examples=120, derandomize=True, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


class Canary(FakeSparqlServer):
    """A real socket server in a thread that records every request it gets and answers each with rows."""

    def __init__(self) -> None:
        super().__init__(otherwise=Scripted(body=ROWS))

    @property
    def requests(self) -> int:
        return len(self.seen)

    def aim(self, query: str) -> str:
        return query.replace(CANARY_BASE, f"http://{self.host}/")


@pytest.fixture(scope="module")
def canary() -> Iterator[Canary]:
    with Canary() as listener:
        yield listener


# -- the generator ---------------------------------------------------------------------------------

SERVICE = st.sampled_from([f"SERVICE <{CANARY}> {{ ?x ?y ?w }}", f"SERVICE SILENT <{CANARY}> {{ ?x ?y ?w }}",
                           f"service<{CANARY}>{{?x ?y ?w}}", "SERVICE canary:sparql { ?x ?y ?w }"])
#: fragments that hide or fake a SERVICE, or that the old lexer misread
TRICKS = st.sampled_from([
    "?s ?p ?o", "?s <http://e/p#SERVICE> ?o", "?s ?p 'it''s'", "?s ?p \"a # b\"", "?s ?p 'c#'",
    f"?s ?p '{CANARY} SERVICE'", f"?s ?p \"\"\"multi\nSERVICE <{CANARY}> {{}}\n\"\"\"",
    "BIND(EXISTS{?s ?p ?o}<'a> b' AS ?z)", "BIND(NOT EXISTS{?s ?p ?o}<'a> b' AS ?z)", "FILTER(?o<'x>#')",
    "FILTER(?o < \"<\")", "FILTER(1<2)", f"# SERVICE <{CANARY}> {{ }}\n", "#\r", "# '\n", "#\"\n",
    "?s ?p 'caf\\u00e9'", "?s ?p '\\u0027'", "?s ?p <http://e/\\u0041>", "# \\u000A\n", "?s ?p '\\\\u0027'",
])
#: stray characters: they open or close strings, IRIs and comments around what follows
RAW = st.sampled_from(["'", "\"", "<", "#", "<'a> b'", "{", "}", "'''", "\\"])
SEPARATORS = st.sampled_from([" . ", " .\n", " .\r", " .\r\n", "\t.\t", " . #c\n", " . #c\r", " ", "\n"])


def groups(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """``inner`` wrapped the ways a graph pattern can hold another one."""
    wraps = ["{{ {} }}", "OPTIONAL {{ {} }}", "{{ {} }} UNION {{ ?s ?p ?o }}", "GRAPH ?g {{ {} }}",
             "MINUS {{ {} }}", "FILTER EXISTS {{ {} }}", "FILTER NOT EXISTS {{ {} }}",
             "{{ SELECT * WHERE {{ {} }} }}", "BIND(EXISTS {{ {} }} AS ?e)", "FILTER(?o < 'x' || EXISTS {{ {} }})"]
    return st.tuples(st.sampled_from(wraps), inner).map(lambda pair: pair[0].format(pair[1]))


ELEMENTS = st.recursive(st.one_of(TRICKS, TRICKS, TRICKS, SERVICE, RAW), groups, max_leaves=5)
BODIES = st.lists(st.tuples(ELEMENTS, SEPARATORS), min_size=1, max_size=6).map(
    lambda parts: "".join(element + separator for element, separator in parts))
FORMS = st.sampled_from(["SELECT * WHERE", "ASK", "CONSTRUCT { ?x ?y ?w } WHERE", "SELECT ?w WHERE",
                         "DESCRIBE ?s WHERE"])
QUERIES = st.tuples(FORMS, BODIES).map(
    lambda pair: f"PREFIX canary: <{CANARY_BASE}>\n{pair[0]} {{ {pair[1]} }}")

#: issue 33's bypasses of the old guard, and their variants
BYPASS = "SELECT * WHERE {{ BIND({lt} AS ?z) {service} <{url}> {{ ?x ?y ?w }} BIND('c#' AS ?q)\n}}"
LT = "EXISTS{?s ?p ?o}<'a> b'"
FIXED = [
    BYPASS.format(lt=LT, service="SERVICE", url=CANARY),
    BYPASS.format(lt="NOT " + LT, service="SERVICE", url=CANARY),
    BYPASS.format(lt=LT, service="SERVICE SILENT", url=CANARY),
    BYPASS.format(lt=LT, service="SERVICE", url=CANARY).replace("SELECT * WHERE", "ASK"),
    BYPASS.format(lt=LT, service="SERVICE", url=CANARY).replace("SELECT * WHERE", "CONSTRUCT { ?x ?y ?w } WHERE"),
]


def store_with_data() -> OxigraphStore:
    store = OxigraphStore.in_memory()
    store.oxstore.add(Quad(NamedNode("http://e/s"), NamedNode("http://e/p"), Literal("o")))
    return store


def run_guarded(run: Any, query: str) -> bool:
    """Run ``query`` the way users do; whether the guard let it through to Oxigraph."""
    try:
        run(query)
    except (ServiceRefused, UnreadableQuery, UpdateRefused):
        return False
    except SparqlSyntaxError:  # the guard's reading failed (Oxigraph's parser words it): nothing ran
        return False
    except Exception:
        return True
    return True


# -- the tests -------------------------------------------------------------------------------------


def test_the_canary_hears_an_allowed_service(canary: Canary) -> None:
    """The listener counts requests (else every test below would pass for nothing)."""
    store = store_with_data()
    store.allow_service = allowance([canary.host])
    before = canary.requests
    store.query(canary.aim(FIXED[0]))
    assert canary.requests > before


def test_nothing_the_guard_lets_through_calls_out(canary: Canary) -> None:
    let_through: list[str] = []

    @SETTINGS
    @given(query=QUERIES)
    @example(query=FIXED[0])
    @example(query=FIXED[1])
    @example(query=FIXED[2])
    @example(query=FIXED[3])
    @example(query=FIXED[4])
    def check(query: str) -> None:
        aimed = canary.aim(query)
        before = canary.requests
        if run_guarded(store_with_data().query, aimed):
            let_through.append(aimed)
        assert canary.requests == before, f"the guard let through a query that called out: {aimed!r}"

    check()
    print(f"{len(let_through)} of the generated queries reached Oxigraph")
    assert len(let_through) >= 20, "the generator hardly reaches Oxigraph: widen it"


@pytest.mark.parametrize("query", FIXED)
def test_the_bypasses_are_refused_in_a_query_worker(movies_kb: KnowledgeBase, canary: Canary, query: str) -> None:
    before = canary.requests
    with pytest.raises(QueryError, match="refused to run SERVICE"):
        movies_kb.query(canary.aim(query), limits=QueryLimits(timeout_s=10))
    assert canary.requests == before


@settings(max_examples=25, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(query=QUERIES)
def test_nothing_let_through_calls_out_from_a_query_worker(movies_kb: KnowledgeBase, canary: Canary,
                                                           query: str) -> None:
    aimed = canary.aim(query)
    before = canary.requests
    run_guarded(lambda text: movies_kb.query(text, limits=QueryLimits(timeout_s=10)), aimed)
    assert canary.requests == before, f"the guard let through a query that called out: {aimed!r}"
