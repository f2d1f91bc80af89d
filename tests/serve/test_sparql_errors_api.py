"""``/api/sparql``: a syntax error is a 400 with line, column and the caret in the JSON body."""

from __future__ import annotations

from starlette.testclient import TestClient

from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.serve.app import create_app
from sparqlqa.serve.service import ServeSettings, Service


def test_syntax_error_body_has_line_and_column(movies_kb: KnowledgeBase) -> None:
    client = TestClient(create_app(Service(ServeSettings(kbs=("movies",)))), base_url="http://127.0.0.1")
    query = "SELECT ?m WHERE {\n  ?m rdfs:label ?l\n  ?m foaff:name ?d }"  # a misspelt foaf:
    response = client.post("/api/sparql", json={"kb": "movies", "query": query})
    assert response.status_code == 400
    body = response.json()
    assert (body["line"], body["column"], body["problem"]) == (3, 6, "unknown prefix 'foaff:'")
    assert body["error"].splitlines()[1:] == ["  3 |   ?m foaff:name ?d }", "    |      ^"]
    assert body["hint"].startswith("did you mean foaf: (<http://xmlns.com/foaf/0.1/>)?")
    other = client.post("/api/sparql", json={"kb": "films", "query": "ASK {}"}).json()
    assert set(other) == {"error", "hint"} and "GET /api/kbs lists them" in other["hint"]
