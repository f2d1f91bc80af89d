"""Faults: SERVICE to a listener on 127.0.0.1 is refused on every read path, and the listener sees nothing.

The listener is a tiny HTTP server counting requests and answering SPARQL JSON results; with
``--allow-service`` the CLI query really reaches it and its rows come back.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_servers import FakeSparqlServer, Scripted

from faults.helpers import assert_clean_failure, cli, run_child
from sparqlqa.kb.knowledge_base import KnowledgeBase

#: what the listener answers to any request
ROWS = {"head": {"vars": ["z"]}, "results": {"bindings": [{"z": {"type": "literal", "value": "from-the-listener"}}]}}


@pytest.fixture
def listener() -> Iterator[FakeSparqlServer]:
    with FakeSparqlServer(otherwise=Scripted(body=ROWS)) as server:
        yield server


def queries(url: str) -> dict[str, str]:
    """SERVICE variants an attacker or a careless user would send."""
    base, _, _ = url.rpartition("/")
    return {
        "plain": f"SELECT ?z WHERE {{ SERVICE <{url}> {{ ?a ?b ?z }} }}",
        "silent": f"SELECT ?z WHERE {{ SERVICE SILENT <{url}> {{ ?a ?b ?z }} }}",
        "prefixed": f"PREFIX ep: <{base}/> SELECT ?z WHERE {{ SERVICE ep:sparql {{ ?a ?b ?z }} }}",
        "glued": f"PREFIX : <{base}/> SELECT ?z WHERE {{ SERVICE:sparql {{ ?a ?b ?z }} }}",
        "relative": f"BASE <{base}/x/> SELECT ?z WHERE {{ SERVICE <../sparql> {{ ?a ?b ?z }} }}",
        "nested": f"ASK {{ ?s ?p ?o OPTIONAL {{ {{ SELECT ?z {{ SERVICE <{url}> {{ ?a ?b ?z }} }} }} }} }}",
        "cr-comment": f"SELECT ?z WHERE {{ # hidden?\rSERVICE <{url}> {{ ?a ?b ?z }} }}",
        "construct": f"CONSTRUCT {{ ?a ?b ?z }} WHERE {{ SERVICE <{url}> {{ ?a ?b ?z }} }}",
        **bypasses(url),
    }


def bypasses(url: str) -> dict[str, str]:
    """Issue 33's bypass of the old regex guard (``<'a> b'`` read as an IRI hid the SERVICE in a "string"),
    and its NOT EXISTS, ASK, CONSTRUCT and SILENT variants: the line break after ``'c#')`` matters."""
    lt = "EXISTS{?s ?p ?o}<'a> b'"
    return {
        "exists-lt": f"SELECT * WHERE {{ BIND({lt} AS ?z) SERVICE <{url}> {{ ?x ?y ?w }} BIND('c#' AS ?q)\n}}",
        "not-exists-lt": f"SELECT * WHERE {{ BIND(NOT {lt} AS ?z) SERVICE <{url}> {{ ?x ?y ?w }} BIND('c#' AS ?q)\n}}",
        "ask-lt": f"ASK {{ BIND({lt} AS ?z) SERVICE <{url}> {{ ?x ?y ?w }} BIND('c#' AS ?q)\n}}",
        "construct-lt": f"CONSTRUCT {{ ?x ?y ?w }} WHERE {{ BIND({lt} AS ?z) SERVICE <{url}> {{ ?x ?y ?w }} "
                        "BIND('c#' AS ?q)\n}",
        "silent-lt": f"SELECT * WHERE {{ BIND({lt} AS ?z) SERVICE SILENT <{url}> {{ ?x ?y ?w }} BIND('c#' AS ?q)\n}}",
    }


#: variants whose endpoint needs the query's BASE: refused whatever is allowed (two IRI resolvers could differ)
UNCHECKABLE_VARIANTS = ("relative",)
UNCHECKABLE = "cannot check its host"
VARIABLE = "SELECT * WHERE { BIND(<http://127.0.0.1:9/sparql> AS ?ep) SERVICE ?ep { ?a ?b ?z } }"


def test_cli_refuses_every_variant(movies_kb: KnowledgeBase, listener: FakeSparqlServer) -> None:
    host, port = listener.host.split(":")
    for name, query in queries(listener.url).items():
        code, output = cli("sparql", "movies", query)
        reason = UNCHECKABLE if name in UNCHECKABLE_VARIANTS else f"host {listener.host} is not allowed"
        assert_clean_failure(code, output, 1, "refused to run SERVICE", reason, "--allow-service")
        code, output = cli("sparql", "movies", query, "--allow-service", f"{host}:{int(port) + 1}")
        assert_clean_failure(code, output, 1, "refused to run SERVICE")
        assert listener.seen == [], name
    code, output = cli("sparql", "movies", VARIABLE, "--json")
    assert_clean_failure(code, output, 1, "the variable ?ep", "cannot be checked")
    assert json.loads(output)["error"].startswith("refused to run SERVICE ?ep")


def test_cli_opt_in_reaches_the_listener(movies_kb: KnowledgeBase, listener: FakeSparqlServer) -> None:
    query = queries(listener.url)["plain"]
    code, output = run_child("sparql", "movies", query, "--allow-service", listener.host, "--json")
    assert code == 0, output
    bindings = json.loads(output)["results"]["bindings"]
    assert bindings == ROWS["results"]["bindings"]
    assert len(listener.seen) == 1
    code, output = cli("sparql", "movies", queries(listener.url)["prefixed"], "--allow-service", "127.0.0.1",
                       "--format", "csv")
    assert code == 0 and "from-the-listener" in output, output
    assert len(listener.seen) == 2
    code, output = cli("sparql", "movies", VARIABLE, "--allow-service", "127.0.0.1")  # a variable: never
    assert_clean_failure(code, output, 1, "the variable ?ep")
    assert len(listener.seen) == 2


def test_cli_rejects_an_allowance_that_is_not_a_host(movies_kb: KnowledgeBase, listener: FakeSparqlServer) -> None:
    code, output = cli("sparql", "movies", queries(listener.url)["plain"], "--allow-service", listener.url)
    assert_clean_failure(code, output, 2, f"--allow-service: '{listener.url}' is not a host name",
                         f"e.g. {listener.host}")
    assert listener.seen == []


def test_api_refuses_with_403(movies_kb: KnowledgeBase, listener: FakeSparqlServer) -> None:
    from starlette.testclient import TestClient

    from sparqlqa.serve.app import create_app
    from sparqlqa.serve.service import ServeSettings, Service

    client = TestClient(create_app(Service(ServeSettings(kbs=("movies",)))), base_url="http://127.0.0.1")
    for name, query in [*queries(listener.url).items(), ("variable", VARIABLE)]:
        response = client.post("/api/sparql", json={"kb": "movies", "query": query})
        assert response.status_code == 403, (name, response.text)
        body = response.json()
        assert body["error"].startswith("refused to run SERVICE") and "--allow-service" in body["hint"]
        assert "Traceback" not in response.text
    assert listener.seen == []
    allowing = Service(ServeSettings(kbs=("movies",), allow_service=(listener.host,)))
    response = TestClient(create_app(allowing), base_url="http://127.0.0.1").post(
        "/api/sparql", json={"kb": "movies", "query": queries(listener.url)["plain"]})
    assert response.status_code == 200, response.text
    assert len(listener.seen) == 1


def test_served_kbs_ignore_their_profiles_allowance(movies_kb: KnowledgeBase, listener: FakeSparqlServer) -> None:
    from sparqlqa.kb.store import Store
    from sparqlqa.serve.service import ServeSettings, Service

    manifest = Path(str(movies_kb.directory)) / "manifest.json"
    data = json.loads(manifest.read_text())
    data["profile"] = {**data.get("profile", {}), "allow_service": [listener.host]}
    manifest.write_text(json.dumps(data))
    code, output = cli("sparql", "movies", queries(listener.url)["plain"], "--json")
    assert code == 0, output  # the CLI honours the KB's profile
    assert len(listener.seen) == 1
    store: Store = Service(ServeSettings(kbs=("movies",))).kb("movies").store
    assert store.allow_service == frozenset()  # a server allows only what it was started with


def test_mcp_tool_refuses(movies_kb: KnowledgeBase, listener: FakeSparqlServer) -> None:
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client
    from serve_helpers import mcp_server_params as _params

    async def main() -> list[Any]:
        with anyio.fail_after(90):
            async with stdio_client(_params("--kb", "movies")) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                return [await session.call_tool("sparql", {"kb": "movies", "query": query})
                        for query in (queries(listener.url)["plain"], queries(listener.url)["glued"], VARIABLE,
                                      *bypasses(listener.url).values())]

    for result in anyio.run(main):
        text = result.content[0].text
        assert result.isError and "refused to run SERVICE" in text and "hint:" in text, text
        assert "Traceback" not in text
    assert listener.seen == []


def test_serve_and_mcp_take_the_option() -> None:
    for command in ("serve", "mcp"):
        code, output = cli(command, "--help")
        assert code == 0 and "--allow-service HOST" in output, output
    code, output = cli("mcp", "--allow-service", "http://h/")
    assert_clean_failure(code, output, 2, "is not a host name")


def test_a_remote_endpoint_is_never_asked_to_call_out(listener: FakeSparqlServer) -> None:
    from fake_servers import FakeSparqlServer

    from sparqlqa.errors import ServiceRefused
    from sparqlqa.remote.endpoint import EndpointStore

    with FakeSparqlServer() as endpoint:
        store = EndpointStore(endpoint.url)
        for name, query in queries(listener.url).items():
            reason = UNCHECKABLE if name in UNCHECKABLE_VARIANTS else f"host {listener.host} is not allowed"
            with pytest.raises(ServiceRefused, match=reason):
                store.query(query)
        assert endpoint.seen == [] and store.requests_sent == 0
    assert listener.seen == []
