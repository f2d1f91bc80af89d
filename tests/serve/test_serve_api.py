"""``sparqlqa serve``'s JSON API: answers, read-only SPARQL, limits, errors, auth, concurrency."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from serve_helpers import DIRECTED, QUESTION, running
from starlette.testclient import TestClient

from sparqlqa.errors import ConfigError, QueryError
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.serve.app import create_app
from sparqlqa.serve.service import ServeSettings, Service
from sparqlqa.stages.answer import Answer

COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"


@pytest.fixture
def service(movies_kb: KnowledgeBase) -> Service:
    return Service(ServeSettings(kbs=("movies",)))


@pytest.fixture
def client(service: Service) -> TestClient:
    return TestClient(create_app(service), base_url="http://127.0.0.1")


def _count(client: TestClient) -> int:
    response = client.post("/api/sparql", json={"kb": "movies", "query": COUNT})
    assert response.status_code == 200, response.text
    return int(response.json()["results"]["results"]["bindings"][0]["n"]["value"])


def test_ask_returns_the_answer_record(client: TestClient) -> None:
    response = client.post("/api/ask", json={"kb": "movies", "question": QUESTION, "strategy": "offline", "k": 5})
    assert response.status_code == 200, response.text
    data = response.json()
    assert set(data) == set(Answer(question="", kb="", strategy="").to_dict())
    tier0 = {item["label"] for item in data["items"] if item["tier"] == 0}
    assert tier0 == DIRECTED
    assert any("Ridley Scott" in line for line in data["items"][0]["evidence_text"])
    assert data["candidates"]["compiled"][0]["sparql"].startswith("SELECT")
    assert len(data["items"]) == 5
    assert (data["form"], data["value"]) == ("list", None) and data["headline"].startswith(f"{len(DIRECTED)} ")
    counted = client.post("/api/ask", json={"kb": "movies", "question": "How many movies did Ridley Scott direct?",
                                            "strategy": "offline", "k": 5}).json()
    assert (counted["form"], counted["value"]) == ("count", len(DIRECTED))


def test_sparql_runs_reads_and_refuses_updates(client: TestClient) -> None:
    before = _count(client)
    for update in ("INSERT DATA { <http://e/a> <http://e/b> <http://e/c> }", "\\u0049NSERT DATA { <a:a> <a:b> <a:c> }",
                   "SELECT * WHERE { ?s ?p ?o } ; DROP ALL", "CLEAR DEFAULT"):
        response = client.post("/api/sparql", json={"kb": "movies", "query": update})
        assert response.status_code == 400, update
        body = response.json()
        assert set(body) == {"error", "hint"} and "refused" in body["error"] and body["hint"]
    assert _count(client) == before > 0
    bad = client.post("/api/sparql", json={"kb": "movies", "query": "SELECT WHERE {"})
    assert bad.status_code == 400 and "Traceback" not in bad.text


def test_schema_kbs_and_health(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    kbs = client.get("/api/kbs").json()["kbs"]
    assert [kb["name"] for kb in kbs] == ["movies"] and kbs[0]["counts"]["triples"] > 0
    schema = client.get("/api/schema/movies").json()
    assert schema["kb"] == "movies" and any(r["label"] == "directed by" for r in schema["relations"])
    missing = client.get("/api/schema/films")
    assert missing.status_code == 404 and "not served" in missing.json()["error"]
    assert client.get("/no/such/page").status_code == 404
    assert client.get("/api/ask").status_code == 405


@pytest.mark.parametrize(("body", "status", "words"), [
    ({"kb": "movies", "question": "x" * 70_000}, 413, "bytes"),
    ({"kb": "movies", "question": "  "}, 400, "question"),
    ({"kb": "movies", "question": QUESTION, "k": 0}, 400, "'k'"),
    ({"kb": "movies", "question": QUESTION, "k": "5"}, 400, "'k'"),
    ({"kb": "movies", "question": QUESTION, "colour": "red"}, 400, "unknown field"),
    ({"kb": "movies", "question": QUESTION, "strategy": "magic"}, 400, "strategy"),
    ({"kb": "movies", "question": QUESTION, "llm": "openai:http://169.254.169.254/v1#m"}, 400, "not enabled"),
    ({"kb": "nope", "question": QUESTION}, 404, "not served"),
    (["not", "an", "object"], 400, "JSON object"),
])
def test_bad_requests_get_our_error_json(client: TestClient, body: Any, status: int, words: str) -> None:
    response = client.post("/api/ask", json=body)
    assert response.status_code == status, response.text
    data = response.json()
    assert set(data) == {"error", "hint"} and words in data["error"]


def test_body_must_be_json(client: TestClient) -> None:
    form = client.post("/api/ask", content=b"kb=movies", headers={"content-type": "text/plain"})
    assert form.status_code == 415
    broken = client.post("/api/ask", content=b"{not json", headers={"content-type": "application/json"})
    assert broken.status_code == 400 and "not valid JSON" in broken.json()["error"]


class SlowService(Service):
    """Answers only once released (and then touches no KB: its thread outlives the request)."""

    def __init__(self, settings: ServeSettings) -> None:
        super().__init__(settings)
        self.release = threading.Event()

    def ask(self, payload: Any) -> Answer:
        self.release.wait(10)
        raise ConfigError("answered too late")


class BrokenService(Service):
    def ask(self, payload: Any) -> Answer:
        raise RuntimeError("boom /secret/path")


def test_time_limit_gives_504(movies_kb: KnowledgeBase) -> None:
    slow = SlowService(ServeSettings(kbs=("movies",), timeout_s=0.2))
    client = TestClient(create_app(slow), base_url="http://127.0.0.1")
    try:
        response = client.post("/api/ask", json={"kb": "movies", "question": QUESTION})
    finally:
        slow.release.set()
    assert response.status_code == 504 and "longer than 0.2 s" in response.json()["error"]


def test_internal_errors_show_no_traceback(movies_kb: KnowledgeBase) -> None:
    client = TestClient(create_app(BrokenService(ServeSettings())), base_url="http://127.0.0.1")
    response = client.post("/api/ask", json={"kb": "movies", "question": QUESTION})
    assert response.status_code == 500
    assert response.json() == {"error": "internal error (RuntimeError)", "hint": "see the server log"}


def test_token_guards_the_api_not_the_page(service: Service) -> None:
    client = TestClient(create_app(service, token="s3cret", loopback=False), base_url="http://203.0.113.5")
    assert client.get("/api/kbs").status_code == 401
    assert client.get("/api/kbs", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.post("/api/sparql", json={"kb": "movies", "query": COUNT}).status_code == 401
    ok = client.get("/api/kbs", headers={"Authorization": "Bearer s3cret"})
    assert ok.status_code == 200 and ok.json()["auth"] is True
    assert client.get("/").status_code == 200 and client.get("/healthz").status_code == 200


@pytest.mark.parametrize(("header", "status"), [
    ("bearer s3cret", 200), ("BEARER s3cret", 200), ("BeArEr  s3cret", 200), ("Bearer s3cret ", 200),
    ("Basic s3cret", 401), ("Bearers3cret", 401), ("bearer", 401), ("s3cret", 401), ("bearer S3CRET", 401)])
def test_the_authorization_scheme_is_case_insensitive_the_token_is_not(service: Service, header: str,
                                                                       status: int) -> None:
    client = TestClient(create_app(service, token="s3cret", loopback=False), base_url="http://203.0.113.5")
    assert client.get("/api/kbs", headers={"Authorization": header}).status_code == status


def test_loopback_server_refuses_foreign_host_names(service: Service) -> None:
    rebinding = TestClient(create_app(service), base_url="http://attacker.example:8080")
    assert rebinding.get("/api/kbs").status_code == 421
    assert TestClient(create_app(service), base_url="http://localhost:8080").get("/api/kbs").status_code == 200


def test_the_page_is_self_contained_and_locked_down(client: TestClient) -> None:
    response = client.get("/")
    assert response.status_code == 200 and "<title>sparqlqa</title>" in response.text
    csp = response.headers["content-security-policy"]
    assert "script-src 'sha256-" in csp and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    assert "http://" not in response.text.replace("http://www.w3.org/2000/svg", "")  # no CDN, nothing remote
    assert not any(sink in response.text for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "eval("))


def test_twenty_concurrent_asks_are_all_answered(service: Service) -> None:
    with running(service) as url, httpx.Client(base_url=url, timeout=60) as http:
        def one(i: int) -> dict[str, Any]:
            response = http.post("/api/ask", json={"kb": "movies", "question": QUESTION, "k": 3 + i % 3})
            assert response.status_code == 200, response.text
            return response.json()  # type: ignore[no-any-return]

        with ThreadPoolExecutor(max_workers=20) as pool:
            answers = list(pool.map(one, range(20)))
    assert len(answers) == 20
    for i, answer in enumerate(answers):
        assert len(answer["items"]) == 3 + i % 3 and answer["items"][0]["label"] in DIRECTED


class MeetingService(Service):
    """The first two asks wait for each other: served one at a time, they would time out."""

    def __init__(self, settings: ServeSettings) -> None:
        super().__init__(settings)
        self.meeting = threading.Barrier(2, timeout=10)

    def ask(self, payload: Any) -> Answer:
        self.meeting.wait()
        return super().ask(payload)


def test_asks_run_concurrently_not_one_at_a_time(movies_kb: KnowledgeBase) -> None:
    service = MeetingService(ServeSettings(kbs=("movies",), workers=2))
    with running(service) as url, httpx.Client(base_url=url, timeout=30) as http, \
            ThreadPoolExecutor(max_workers=2) as pool:
        codes = list(pool.map(lambda _: http.post("/api/ask", json={"kb": "movies", "question": QUESTION})
                              .status_code, range(2)))
    assert codes == [200, 200]


def test_a_reingested_kb_is_reopened_and_the_old_one_let_go(service: Service, movies_ttl: Any,
                                                            tmp_path: Any) -> None:
    from sparqlqa.ingest import ingest

    bigger = tmp_path / "more.ttl"
    bigger.write_text(movies_ttl.read_text("utf-8") + "\n<http://e/x> <http://e/y> <http://e/z> .\n", "utf-8")
    first = service.kb("movies")
    assert service.kb("movies") is first  # warm: opened once
    with service.using("movies") as busy:  # a request still running on the old generation
        ingest([bigger], kb="movies", replace=True)
        second = service.kb("movies")
        assert second is not first and second.directory != first.directory
        assert busy is first and int(busy.query(COUNT).rows[0][0].value) > 0  # still answers
    ingest([movies_ttl], kb="movies", replace=True, force=True)  # retires every unleased old generation
    assert first.directory is not None and not first.directory.exists()
    assert service.kb("movies") is not second


def test_sparql_results_are_capped(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    from sparqlqa.serve import service as service_module

    monkeypatch.setattr(service_module, "MAX_ROWS", 5)
    data = client.post("/api/sparql", json={"kb": "movies", "query": "SELECT * WHERE { ?s ?p ?o }"}).json()
    assert len(data["results"]["results"]["bindings"]) == 5 and data["rows"] == 5 and data["truncated"] is True
    small = client.post("/api/sparql", json={"kb": "movies", "query": "ASK { ?s ?p ?o }"}).json()
    assert small["results"]["boolean"] is True and small["truncated"] is False


def test_non_finite_numbers_become_null() -> None:
    from sparqlqa.serve.app import AnswerJSON

    assert AnswerJSON({"score": float("nan"), "k": [float("-inf"), 1.5]}).body == b'{"score":null,"k":[null,1.5]}'


def test_requests_use_the_servers_own_llm_objects(movies_kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    from sparqlqa.errors import LLMConnectionError
    from sparqlqa.llm.fake import FakeLLM

    service = Service(ServeSettings(kbs=("movies",), llms=("fake",)))
    fake = service.llm("fake")
    assert isinstance(fake, FakeLLM) and service.llm(None) is fake  # the first --llm is the default
    fake.push(LLMConnectionError("the model is down", hint="start it"))
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    failed = client.post("/api/ask", json={"kb": "movies", "question": QUESTION, "llm": "fake", "rerank": "none"})
    assert failed.status_code == 502 and failed.json() == {"error": "the model is down", "hint": "start it"}
    assert len(fake.requests) == 1 and failed.json()["error"]
    monkeypatch.setenv("SPARQLQA_LLM", "fake")  # "offline" must not fall back to the environment's LLM
    offline = client.post("/api/ask", json={"kb": "movies", "question": QUESTION, "llm": "offline"})
    assert offline.status_code == 200 and offline.json()["strategy"] == "offline" and len(fake.requests) == 1


def test_a_6000_deep_query_is_refused_in_a_worker_not_by_the_server(client: TestClient) -> None:
    from sparqlqa.query.sparql_reading import read_query

    deep = "SELECT * WHERE " + "{" * 6000 + " ?s ?p ?o " + "}" * 6000
    start = time.process_time()
    with pytest.raises(QueryError) as here:
        read_query(deep)  # outside a scope: read in this process, as before
    in_process = time.process_time() - start
    assert _count(client) > 0  # the reading workers are up
    start = time.process_time()
    response = client.post("/api/sparql", json={"kb": "movies", "query": deep})
    served = time.process_time() - start
    assert response.status_code == 400 and response.json()["error"] == here.value.message
    assert served < in_process / 3, (served, in_process)
    assert client.get("/healthz").status_code == 200
