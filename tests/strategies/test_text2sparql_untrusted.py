"""The LLM's SPARQL is untrusted (issue 33 item 3): text2sparql reads and runs it only in a query worker, under the
request's deadline and memory limit, without network.  Each case here killed or tied up the calling process when
the syntax check ran Oxigraph in it (a segfault, a query still running after the deadline, a SERVICE fetched)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_servers import FakeSparqlServer
from proc_tree import cpu, tree

from sparqlqa.errors import QueryTimeout
from sparqlqa.ingest import ingest
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.llm import FakeLLM
from sparqlqa.query.limits import QueryLimits
from sparqlqa.stages.answer import Answer
from sparqlqa.strategies.ask import ask
from sparqlqa.strategies.text2sparql.strategy import Attempt, Text2SparqlRun

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DEEP = "SELECT ?f WHERE " + "{" * 6000 + " ?f dbo:director ?d " + "}" * 6000
RUNAWAY = "ASK { " + " ".join(f"VALUES ?{v} {{ {' '.join(map(str, range(110)))} }}" for v in "abcd") + \
    " FILTER(?a + ?b + ?c + ?d < 0) }"


@pytest.fixture
def films() -> KnowledgeBase:
    return ingest([FIXTURES / "dbpedia_films.ttl"], kb="films")


@pytest.fixture
def canary() -> Iterator[FakeSparqlServer]:
    with FakeSparqlServer() as server:
        yield server


def attempts(answer: Answer) -> list[Attempt]:
    run = answer.meta.records["text2sparql"]
    assert isinstance(run, Text2SparqlRun)
    return run.attempts


def reply(sparql: str, variable: str | None = "?f", form: str = "list") -> dict[str, object]:
    return {"sparql": sparql, "answer_variable": variable, "form": form}


def busy_children(seconds: float = 1.0) -> float:
    """CPU seconds this process's children use over ``seconds`` (a runaway worker uses about all of it)."""
    before = cpu(tree(os.getpid())[1:])
    time.sleep(seconds)
    after = cpu(tree(os.getpid())[1:])
    return sum(after[pid] - before[pid] for pid in after if pid in before)


def test_a_query_nested_6000_deep_is_a_clean_error_and_this_process_lives(films: KnowledgeBase) -> None:
    llm = FakeLLM([reply(DEEP), reply(DEEP)])  # refused before anything reads it; the repair is asked once
    answer = ask(films, "Which films did Nolan direct?", strategy="text2sparql", llm=llm)
    first, repaired = attempts(answer)
    assert "nested" in (first.problem or "") and "nested" in (repaired.problem or "")
    assert answer.meta.answer_source == "vector-fill-in"
    assert llm.remaining == 0
    again = ask(films, "Which films did Nolan direct?", strategy="text2sparql", llm=FakeLLM([reply(
        'SELECT ?f WHERE { ?f dbo:director ?d . ?d rdfs:label "Christopher Nolan"@en }')]))
    assert len(again.items) == 4 and again.meta.answer_source == "query"


def test_a_runaway_query_stops_at_the_deadline_and_nothing_keeps_running(films: KnowledgeBase) -> None:
    start = time.monotonic()
    with pytest.raises(QueryTimeout, match="time limit of 3 s"):  # the request's time is spent: 504 when served
        ask(films, "Is there a film?", strategy="text2sparql", llm=FakeLLM([reply(RUNAWAY, None, "boolean")]),
            limits=QueryLimits(timeout_s=3, truncate=True))
    assert time.monotonic() - start < 10
    assert busy_children() < 0.2  # the worker that ran it was killed, not left computing


def test_service_while_checking_never_reaches_the_network(films: KnowledgeBase, canary: FakeSparqlServer) -> None:
    # the SERVICE guard's lexer reads this SERVICE as inside a string (issue 33); the worker's filter holds anyway
    bypass = ("SELECT * WHERE { BIND(EXISTS{?s ?p ?o}<'a> b' AS ?z) SERVICE <" + canary.url
              + "> { ?x ?y ?w } BIND('c#' AS ?q)\n}")
    for query in (bypass, f"SELECT ?f WHERE {{ SERVICE SILENT <{canary.url}> {{ ?f ?p ?o }} }}"):
        answer = ask(films, "Which films?", strategy="text2sparql", llm=FakeLLM([reply(query)]))
        assert attempts(answer)[0].problem, query
    assert canary.seen == []
