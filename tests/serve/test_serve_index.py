"""Served KBs answer before their node index is built (issue 36): the index is not built when a KB opens
(unless the served strategy answers from it alone), it is built in the background, and answers use it once
it is finished."""

from __future__ import annotations

from typing import Any

import pytest
from serve_helpers import DIRECTED, QUESTION
from starlette.testclient import TestClient

import sparqlqa.vectors.index as node_index
from sparqlqa.embed.embedders import get_embedder
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.serve.app import create_app
from sparqlqa.serve.service import ServeSettings, Service


@pytest.fixture(autouse=True)
def no_tiny_kbs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixture KB is tiny, and a tiny KB's index is built on first use: here it counts as a big one."""
    monkeypatch.setattr(node_index, "INDEX_ON_FIRST_USE", 0)


def _complete(kb: KnowledgeBase) -> bool:
    record = node_index.index_status(kb, get_embedder()).record
    return record is not None and record.complete


def _ask(client: TestClient) -> dict[str, Any]:
    response = client.post("/api/ask", json={"kb": "movies", "question": QUESTION, "strategy": "offline", "k": 5})
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    assert {item["label"] for item in data["items"] if item["tier"] == 0} == DIRECTED
    return data


def test_a_served_kb_answers_before_its_index_is_built_then_with_it(movies_kb: KnowledgeBase) -> None:
    service = Service(ServeSettings(kbs=("movies",)))
    client = TestClient(create_app(service), base_url="http://127.0.0.1")
    assert service.warm() == ["movies"] and not _complete(movies_kb)
    first = _ask(client)
    assert len(first["items"]) == len(DIRECTED)  # the matched answers, no fill-in yet
    assert any("sparqlqa index movies" in note for note in first["notes"])
    done: list[tuple[str, str]] = []
    service.build_indexes_behind(["movies"], on_done=lambda name, outcome: done.append((name, outcome))).join(60)
    assert done == [("movies", "built")] and _complete(movies_kb)
    second = _ask(client)
    assert len(second["items"]) == 5 and [i["source"] for i in second["items"]].count("vector") == 5 - len(DIRECTED)
    assert second["items"][:len(DIRECTED)] == first["items"]  # the matched answers unchanged, in the same order


def test_a_served_vss_builds_the_index_when_the_kb_opens(movies_kb: KnowledgeBase) -> None:
    Service(ServeSettings(kbs=("movies",), strategy="vss")).warm()
    assert _complete(movies_kb)


def test_a_failed_background_build_is_reported_not_raised(movies_kb: KnowledgeBase) -> None:
    done: list[tuple[str, str]] = []
    Service(ServeSettings()).build_indexes_behind(["nope"], on_done=lambda *outcome: done.append(outcome)).join(60)
    assert done[0][0] == "nope" and "no knowledge base named 'nope'" in done[0][1]


def test_serve_warms_then_builds_missing_indexes_behind(movies_kb: KnowledgeBase,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from sparqlqa.cli.serve_commands import _warm

    behind: list[list[str]] = []
    service = Service(ServeSettings(kbs=("movies",)))
    monkeypatch.setattr(service, "build_indexes_behind", lambda names, **_: behind.append(names))
    _warm(service)
    assert behind == [["movies"]] and not _complete(movies_kb)
