"""Issue 33, item 4: a served KB is known by its canonical name, and the open KBs are a bounded LRU set.

Ten spellings of one KB group against a real ``serve`` (uvicorn on loopback) open one KB and start at most
one query worker; past ``--max-open-kbs`` the least recently used KB is closed (its lease released, its
query workers gone), but never under a request that still uses it.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
from serve_helpers import running

from sparqlqa.ingest import ingest
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.serve.open_kbs import OpenKBs
from sparqlqa.serve.service import NotServed, ServeSettings, Service

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
#: one group, spelled ten ways (whitespace, order, a member twice)
SPELLINGS = ["movies+tiny", "movies +tiny", " movies+tiny", "tiny+movies", "movies+movies+tiny",
             "tiny + movies", "movies+ tiny ", "tiny+movies+tiny", " tiny+ movies", "movies+tiny+movies"]


@pytest.fixture
def two_kbs(movies_kb: KnowledgeBase) -> None:
    ingest([FIXTURES / "group_people.ttl"], kb="tiny")


def _workers(before: set[int]) -> list[psutil.Process]:
    """The query workers of a store this process started since ``before`` (its children then) that still run; not
    the empty-store workers all KBs share (``query_pool``'s checking and reading pools: store path ``""``)."""
    return [child for child in psutil.Process().children(recursive=True)
            if child.pid not in before and child.is_running() and child.status() != psutil.STATUS_ZOMBIE
            and child.cmdline()[4:5] != [""]]


def _children() -> set[int]:
    return {child.pid for child in psutil.Process().children(recursive=True)}


def test_ten_spellings_of_a_group_open_one_kb_and_at_most_one_worker(two_kbs: None) -> None:
    """The issue's case: each spelling opened a KB and a query worker per member, never released."""
    service = Service(ServeSettings())
    before = _children()
    with running(service) as url, httpx.Client(base_url=url, timeout=60) as http:
        asked = [http.post("/api/ask", json={"kb": name, "question": "Which films did Ridley Scott direct?",
                                             "strategy": "offline"}) for name in SPELLINGS]
        assert [a.status_code for a in asked] == [200] * len(SPELLINGS), asked[-1].text
        assert {a.json()["kb"] for a in asked} == {"movies+tiny"}
        assert any(item["evidence_kbs"] for item in asked[0].json()["items"])  # provenance asked the members
        queried = [http.post("/api/sparql", json={"kb": name, "query": COUNT}) for name in SPELLINGS[:3]]
        assert {(q.status_code, q.json()["kb"]) for q in queried} == {(200, "movies+tiny")}
        schema = http.get("/api/schema/tiny+movies")
        assert schema.status_code == 200 and schema.json()["kb"] == "movies+tiny"
        assert service._open.names() == ["movies+tiny"]
        assert len(_workers(before)) == 1  # the group's own query worker; none per spelling or member
    service.close()
    assert _workers(before) == []


def test_a_malformed_name_is_a_clear_400(two_kbs: None) -> None:
    service = Service(ServeSettings())
    with running(service) as url, httpx.Client(base_url=url, timeout=60) as http:
        for name, words in [("movies+", "empty member"), ("movies+movies", "two or more"),
                            ("mov ies", "invalid knowledge base name"), ("movies+nope", "'nope'")]:
            answer = http.post("/api/sparql", json={"kb": name, "query": COUNT})
            assert answer.status_code in (400, 404) and words in answer.json()["error"], (name, answer.text)
            assert answer.json()["hint"]
    assert service._open.names() == []


def test_served_names_are_canonical_too(two_kbs: None) -> None:
    service = Service(ServeSettings(kbs=("tiny + movies",)))
    assert service.settings.kbs == ("movies+tiny",)
    assert service.check_kb("movies+movies+tiny") == "movies+tiny"
    with pytest.raises(NotServed):
        service.check_kb("movies")


def test_past_max_open_kbs_the_least_recently_used_is_closed_with_its_workers(two_kbs: None) -> None:
    service = Service(ServeSettings(max_open_kbs=2))
    before = _children()
    movies = service.kb("movies")
    assert service.kb("tiny") is not movies and service.kb("movies") is movies  # tiny is now the older one
    tiny = service.kb("tiny")
    assert len(_workers(before)) == 2
    service.kb("movies+tiny")  # a third: movies, used longest ago, is closed
    assert service._open.names() == ["tiny", "movies+tiny"]
    assert movies._store is None and movies._lease is None  # closed: lease released, store gone
    assert tiny._store is not None
    assert len(_workers(before)) == 2  # movies' worker stopped, the group's started
    service.close()
    assert tiny._store is None and _workers(before) == []


def test_a_kb_in_use_is_closed_by_its_last_request_not_by_the_eviction(two_kbs: None) -> None:
    service = Service(ServeSettings(max_open_kbs=1))
    with service.using("movies") as busy:
        other = service.kb("tiny")  # evicts movies from the set while this request still runs
        assert service._open.names() == ["tiny"]
        assert busy._store is not None and int(busy.query(COUNT).rows[0][0].value) > 0  # still answers
    assert busy._store is None and busy._lease is None  # closed when the request ended
    assert other._store is not None
    service.close()


class FakeKB:
    """Stands in for a KnowledgeBase: counts its closes."""

    def __init__(self, name: str) -> None:
        self.name, self.closed = name, 0

    def close(self) -> None:
        self.closed += 1


def _use(opened: OpenKBs, name: str, stamp: str = "g1") -> Any:
    with opened.using(name, lambda: stamp, lambda: FakeKB(name)) as kb:  # type: ignore[arg-type,return-value]
        return kb


def test_open_kbs_prefers_evicting_idle_entries_and_closes_each_kb_once() -> None:
    opened = OpenKBs(capacity=2)
    a = _use(opened, "a")
    with opened.using("b", lambda: "g1", lambda: FakeKB("b")) as held:  # type: ignore[arg-type,return-value]
        b: Any = held
        _use(opened, "a")  # a is the most recently used; b, in use, the least
        c = _use(opened, "c")  # evicts a (idle), not b (busy)
        assert opened.names() == ["b", "c"] and a.closed == 1 and b.closed == 0
        d = _use(opened, "d")
        assert opened.names() == ["b", "d"] and c.closed == 1 and b.closed == 0  # c idle, b busy
    assert b.closed == 0 and opened.names() == ["b", "d"]
    assert _use(opened, "d", stamp="g2") is not d and d.closed == 1  # a new generation replaces it
    opened.close()
    assert b.closed == 1 and opened.names() == [] and opened._names == {}
    assert all(kb.closed == 1 for kb in (a, c, d))


def test_open_kbs_opens_a_name_once_for_concurrent_first_requests() -> None:
    opened = OpenKBs(capacity=4)
    made: list[FakeKB] = []
    gate = threading.Barrier(8)

    def make() -> FakeKB:
        kb = FakeKB("x")
        made.append(kb)
        return kb

    def request() -> None:
        gate.wait(timeout=10)
        with opened.using("x", lambda: "g1", make):  # type: ignore[arg-type]
            pass

    threads = [threading.Thread(target=request) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert len(made) == 1 and made[0].closed == 0 and opened._names == {}


def test_mcp_tools_read_every_spelling_as_the_canonical_name(two_kbs: None) -> None:
    import anyio

    from sparqlqa.serve.mcp_server import build_server

    service = Service(ServeSettings(kbs_listing="the kbs tool"))
    server = build_server(service)

    async def calls() -> list[Any]:
        return [await server.call_tool("sparql", {"kb": name, "query": COUNT}) for name in SPELLINGS[:5]]

    results = anyio.run(calls)
    assert all('"kb": "movies+tiny"' in str(result) for result in results), results[0]
    assert service._open.names() == ["movies+tiny"]
    service.close()
