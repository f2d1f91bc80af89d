"""``serve`` survives a malicious LLM (issue 33 item 3): text2sparql's check of the LLM's query runs in a query
worker, so a query nested 6,000 deep is a clean answer with the error in its notes (it killed the server with
signal 11 when the check ran in the server's process), and a runaway query ends at the 504 instead of holding
a thread after it.  A real uvicorn on loopback (tests/serve_helpers.py)."""

from __future__ import annotations

import time

import httpx
from serve_helpers import running

from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.llm.fake import FakeLLM
from sparqlqa.serve.service import ServeSettings, Service

DEEP = "SELECT ?f WHERE " + "{" * 6000 + " ?f ?p ?o " + "}" * 6000
RUNAWAY = "ASK { " + " ".join(f"VALUES ?{v} {{ {' '.join(map(str, range(110)))} }}" for v in "abcd") + \
    " FILTER(?a + ?b + ?c + ?d < 0) }"


def served(timeout_s: float = 120.0) -> tuple[Service, FakeLLM]:
    service = Service(ServeSettings(kbs=("movies",), llms=("fake",), timeout_s=timeout_s))
    fake = service.llm("fake")
    assert isinstance(fake, FakeLLM)
    return service, fake


def ask(base: str, question: str) -> httpx.Response:
    return httpx.post(f"{base}/api/ask", json={"kb": "movies", "question": question, "llm": "fake",
                                               "strategy": "text2sparql", "rerank": "none"}, timeout=60)


def test_an_llm_query_nested_6000_deep_is_a_clean_answer_and_the_server_lives(movies_kb: KnowledgeBase) -> None:
    service, fake = served()
    fake.push({"sparql": DEEP, "answer_variable": "?f", "form": "list"})
    fake.push({"sparql": DEEP, "answer_variable": "?f", "form": "list"})  # the guard refuses it: one repair asked
    with running(service) as base:
        response = ask(base, "Which films are there?")
        assert response.status_code == 200, response.text
        body = response.json()
        assert any("nested" in note for note in body["notes"]), body["notes"]
        assert body["meta"]["answer_source"] == "vector-fill-in"
        assert httpx.get(f"{base}/healthz", timeout=10).status_code == 200
        again = httpx.post(f"{base}/api/sparql", json={"kb": "movies", "query": "ASK { ?s ?p ?o }"}, timeout=30)
        assert again.status_code == 200 and again.json()["results"]["boolean"] is True


def test_an_llm_runaway_query_ends_with_the_504(movies_kb: KnowledgeBase) -> None:
    service, fake = served(timeout_s=4)
    fake.push({"sparql": RUNAWAY, "answer_variable": None, "form": "boolean"})
    with running(service) as base:
        response = ask(base, "Is there a film?")
        assert response.status_code == 504, response.text
        deadline = time.monotonic() + 3
        while service.busy and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not service.busy  # the work stopped with the request's time, no thread is left computing
        assert httpx.get(f"{base}/healthz", timeout=10).status_code == 200
