"""EndpointStore against a scripted, misbehaving SPARQL server on 127.0.0.1 (no Virtuoso needed)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from fake_servers import FakeSparqlServer, Scripted
from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from sparqlqa.errors import EndpointError, UpdateRefused
from sparqlqa.kb.store import stores
from sparqlqa.net import parse_retry_after
from sparqlqa.query.sparql_rewrite import with_limit
from sparqlqa.remote.endpoint import EndpointStore, json_term

SELECT_BODY = {
    "head": {"vars": ["s", "l", "n", "b", "d"]},
    "results": {"bindings": [
        {"s": {"type": "uri", "value": "http://www.wikidata.org/entity/Q42"},
         "l": {"type": "literal", "value": "Douglas Adams", "xml:lang": "en"},
         "n": {"type": "typed-literal", "value": "42", "datatype": "http://www.w3.org/2001/XMLSchema#integer"},
         "b": {"type": "bnode", "value": "nodeID://b1001"}},
        {"s": {"type": "uri", "value": "http://www.wikidata.org/entity/Q5"},
         "d": {"type": "literal", "value": "plain"}},
    ]},
}


@pytest.fixture
def server() -> Iterator[FakeSparqlServer]:
    with FakeSparqlServer() as fake:
        yield fake


def make_store(url: str, **options: Any) -> tuple[EndpointStore, list[float]]:
    """A store with tiny timeouts and a recorded (not real) sleep."""
    waits: list[float] = []
    store = EndpointStore(url, **{"timeout": 2.0, "max_retries": 2, "backoff": 0.01, "backoff_cap": 0.05,
                                  **options})
    store.sleep = waits.append
    return store, waits


def test_select_parses_terms_like_the_local_store(server: FakeSparqlServer) -> None:
    server.script(Scripted(body=SELECT_BODY))
    store, _ = make_store(server.url)
    result = store.query("SELECT * WHERE { ?s ?p ?o }")
    assert result.variables == ["s", "l", "n", "b", "d"]
    first, second = result.rows
    assert first[0] == NamedNode("http://www.wikidata.org/entity/Q42")
    assert first[1] == Literal("Douglas Adams", language="en")
    assert first[2] == Literal("42", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#integer"))
    assert isinstance(first[3], BlankNode) and first[4] is None
    assert second[4] == Literal("plain") and second[1] is None
    assert result.store == f"endpoint:{server.url}"


def test_request_is_polite_get_with_json_and_limit(server: FakeSparqlServer) -> None:
    server.script(Scripted(body=SELECT_BODY))
    store, _ = make_store(server.url, max_rows=77, default_graphs=["urn:g"])
    result = store.query("SELECT ?s WHERE { ?s ?p ?o }")
    seen = server.seen[0]
    assert seen.method == "GET"
    assert seen.params()["query"] == ["SELECT ?s WHERE { ?s ?p ?o }\nLIMIT 77"]
    assert seen.params()["default-graph-uri"] == ["urn:g"]
    assert "application/sparql-results+json" in seen.headers["accept"]
    assert seen.headers["user-agent"].startswith("sparqlqa/") and "Python/" in seen.headers["user-agent"]
    assert result.query.endswith("LIMIT 77")


def test_post_and_auto_post_for_long_queries(server: FakeSparqlServer) -> None:
    server.script(Scripted(body=SELECT_BODY), Scripted(body=SELECT_BODY))
    store, _ = make_store(server.url, method="POST", user_agent="my-bot/1.0 (me@example.org)")
    store.query("SELECT ?s WHERE { ?s ?p ?o } LIMIT 1")
    long_values = " ".join(f"<http://e/{i}>" for i in range(200))
    make_store(server.url)[0].query(f"SELECT ?s WHERE {{ VALUES ?s {{ {long_values} }} }}")
    assert [s.method for s in server.seen] == ["POST", "POST"]
    assert server.seen[0].headers["user-agent"] == "my-bot/1.0 (me@example.org)"
    assert server.seen[0].params()["query"] == ["SELECT ?s WHERE { ?s ?p ?o } LIMIT 1"]


def test_ask_construct_and_virtuoso_ask_rows(server: FakeSparqlServer) -> None:
    virtuoso_ask = {"head": {"vars": ["__ASK_RETVAL"]}, "results": {"bindings": [
        {"__ASK_RETVAL": {"type": "typed-literal", "value": "1"}}]}}
    server.script(Scripted(body={"head": {}, "boolean": False}), Scripted(body=virtuoso_ask),
                  Scripted(body=b"<http://a> <http://b> \"c\"@en .\n", content_type="application/n-triples"),
                  Scripted(body=b"@prefix e: <http://e/> . e:a e:b e:c .", content_type="text/turtle"))
    store, _ = make_store(server.url)
    assert store.query("ASK { ?s ?p ?o }").boolean is False
    assert store.query("ASK { ?s ?p ?o }").boolean is True
    triples = store.query("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }").triples
    assert triples[0].object == Literal("c", language="en")
    assert store.query("DESCRIBE <http://e/a>").triples[0].subject == NamedNode("http://e/a")
    assert "n-triples" in server.seen[2].headers["accept"]
    assert "LIMIT" not in server.seen[2].params()["query"][0]  # only SELECTs get a LIMIT


@pytest.mark.parametrize("update", [
    "INSERT DATA { <http://a> <http://b> <http://c> }",
    "DELETE WHERE { ?s ?p ?o }",
    "PREFIX e: <http://e/> CLEAR ALL",
    "LOAD <http://example.org/data.ttl>",
    "SELECT * WHERE { ?s ?p ?o } ; DROP ALL",
])
def test_updates_are_refused_before_any_request(server: FakeSparqlServer, update: str) -> None:
    store, _ = make_store(server.url)
    with pytest.raises(UpdateRefused):
        store.query(update)
    with pytest.raises(UpdateRefused):  # even bypassing Store.query
        store._execute(update, "SELECT")
    assert server.seen == []


def test_503_then_success_retries_with_backoff(server: FakeSparqlServer) -> None:
    server.script(Scripted(503, b"busy"), Scripted(503, b"busy"), Scripted(body=SELECT_BODY))
    store, waits = make_store(server.url)
    assert len(store.query("SELECT * WHERE { ?s ?p ?o }").rows) == 2
    assert len(server.seen) == 3
    assert waits == [0.01, 0.02]


def test_429_honours_retry_after_seconds(server: FakeSparqlServer) -> None:
    server.script(Scripted(429, b"slow down", {"Retry-After": "3"}), Scripted(body=SELECT_BODY))
    store, waits = make_store(server.url, timeout=30.0)
    store.query("SELECT * WHERE { ?s ?p ?o }")
    assert waits == [3.0]


def test_a_wait_past_the_deadline_fails_at_once(server: FakeSparqlServer) -> None:
    server.script(Scripted(429, b"slow down", {"Retry-After": "3"}), Scripted(body=SELECT_BODY))
    store, waits = make_store(server.url, timeout=2.0)
    with pytest.raises(EndpointError, match="another try in 3 s would pass the 2 s timeout") as caught:
        store.query("SELECT * WHERE { ?s ?p ?o }")
    assert waits == [] and len(server.seen) == 1 and "--timeout" in (caught.value.hint or "")


def test_retry_after_too_long_fails_at_once(server: FakeSparqlServer) -> None:
    server.script(Scripted(429, b"", {"Retry-After": "3600"}))
    store, waits = make_store(server.url, max_retry_after=10)
    with pytest.raises(EndpointError, match="wait 3600 s") as caught:
        store.query("SELECT * WHERE { ?s ?p ?o }")
    assert caught.value.endpoint == server.url and waits == [] and len(server.seen) == 1


def test_retries_are_bounded_and_the_error_names_the_endpoint(server: FakeSparqlServer) -> None:
    server.script(*[Scripted(503, b"down for maintenance")] * 5)
    store, waits = make_store(server.url, max_retries=2)
    with pytest.raises(EndpointError) as caught:
        store.query("SELECT * WHERE { ?s ?p ?o }")
    assert len(server.seen) == 3 and len(waits) == 2
    message = caught.value.full_message()
    assert server.url in message and "503" in message and "after 3 attempts" in message
    assert "hint:" in message


def test_truncated_json_is_retried_then_succeeds(server: FakeSparqlServer) -> None:
    server.script(Scripted(body=SELECT_BODY, truncate=True), Scripted(body=b'{"head": {"vars": ["s"]}, "res'),
                  Scripted(body=SELECT_BODY))
    store, waits = make_store(server.url)
    assert len(store.query("SELECT * WHERE { ?s ?p ?o }").rows) == 2
    assert len(server.seen) == 3 and len(waits) == 2


def test_truncated_json_every_time_is_a_clear_error(server: FakeSparqlServer) -> None:
    server.script(*[Scripted(body=b'{"head": {"vars": ["s"]}, "results": {"bind')] * 3)
    store, _ = make_store(server.url)
    with pytest.raises(EndpointError, match="truncated or invalid JSON") as caught:
        store.query("SELECT * WHERE { ?s ?p ?o }")
    assert server.url in str(caught.value)


def test_a_timeout_spends_the_whole_deadline_and_is_reported(server: FakeSparqlServer) -> None:
    server.script(*[Scripted(body=SELECT_BODY, delay=1.0)] * 2)
    store, waits = make_store(server.url, timeout=0.2, max_retries=1)
    with pytest.raises(EndpointError, match=r"no complete answer within the 0\.2 s timeout") as caught:
        store.query("SELECT * WHERE { ?s ?p ?o }")
    assert waits == [] and store.requests_sent == 1 and caught.value.endpoint == server.url
    assert "--timeout" in (caught.value.hint or "")


def test_connection_refused_is_retried_and_reported() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/sparql"
    store, waits = make_store(url, max_retries=2)
    with pytest.raises(EndpointError, match="connection refused") as caught:
        store.query("SELECT * WHERE { ?s ?p ?o }")
    assert len(waits) == 2 and url in str(caught.value) and store.requests_sent == 3


@pytest.mark.parametrize(("status", "fragment"), [(400, "rejected the query"), (404, "no SPARQL service"),
                                                  (500, "failed to run the query"), (403, "HTTP 403")])
def test_client_and_server_errors_are_not_retried(server: FakeSparqlServer, status: int, fragment: str) -> None:
    server.script(Scripted(status, b"Virtuoso 37000 Error SP030: syntax error"))
    store, waits = make_store(server.url)
    with pytest.raises(EndpointError, match=fragment) as caught:
        store.query("SELECT * WHERE { ?s ?p ?o }")
    assert waits == [] and len(server.seen) == 1
    assert caught.value.hint
    if status in (400, 500):
        assert "SP030" in str(caught.value)  # the server's own message is kept


def test_html_instead_of_results_is_not_retried(server: FakeSparqlServer) -> None:
    server.script(Scripted(body=b"<html>login</html>", content_type="text/html"))
    store, waits = make_store(server.url)
    with pytest.raises(EndpointError, match="not SPARQL JSON results: <html>login"):
        store.query("ASK { ?s ?p ?o }")
    assert waits == [] and len(server.seen) == 1


def test_from_config_and_registry() -> None:
    store_cls = stores.get("endpoint")
    assert store_cls is EndpointStore
    store = store_cls.from_config({"kind": "endpoint", "url": "http://127.0.0.1:1/sparql", "method": "post",
                                   "timeout": 5, "max_retries": 1, "user_agent": "x/1"}, None)
    assert isinstance(store, EndpointStore)
    assert store.config.method == "POST" and store.config.user_agent == "x/1"


@pytest.mark.parametrize("config", [{"url": "ftp://x/sparql"}, {"url": "http://x/sparql", "method": "PUT"},
                                    {"url": "http://x/sparql", "bogus": 1}, {}])
def test_bad_config_is_a_clear_error(config: dict[str, Any]) -> None:
    from sparqlqa.errors import ConfigError

    with pytest.raises(ConfigError):
        EndpointStore.from_config({"kind": "endpoint", **config}, None)


def test_ensure_limit_only_at_top_level() -> None:
    assert with_limit("SELECT * { ?s ?p ?o } LIMIT 5", 10).endswith("LIMIT 5")
    assert with_limit("SELECT * { ?s ?p 'LIMIT 3' } # LIMIT 4", 10).endswith("LIMIT 10")
    assert with_limit("SELECT * { { SELECT ?s { ?s ?p ?o } LIMIT 5 } }", 10).endswith("LIMIT 10")
    with_values = with_limit("SELECT ?s { ?s ?p ?o } VALUES ?s { <http://a> }", 10)
    assert with_values == "SELECT ?s { ?s ?p ?o } LIMIT 10\nVALUES ?s { <http://a> }"


def test_retry_after_http_date_and_json_terms() -> None:
    assert parse_retry_after({"Retry-After": "soon"}) is None and parse_retry_after({}) is None
    assert parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert json_term({"type": "literal", "value": "x", "xml:lang": "en_bad!"}) == Literal("x")
    assert json_term({"type": "uri", "value": "http://e/a b"}) == NamedNode("http://e/a%20b")
    triple = json_term({"type": "triple", "value": {"subject": {"type": "uri", "value": "http://a"},
                                                    "predicate": {"type": "uri", "value": "http://b"},
                                                    "object": {"type": "literal", "value": "c"}}})
    assert triple == Triple(NamedNode("http://a"), NamedNode("http://b"), Literal("c"))


def test_the_process_wide_override_and_cap() -> None:
    from sparqlqa.errors import ConfigError
    from sparqlqa.remote.endpoint import timeout_override

    store = EndpointStore("http://127.0.0.1:1/sparql", timeout=30)
    with timeout_override(5):
        assert store.timeout == 5
        with timeout_override(2, cap=True):
            assert store.timeout == 2
        with timeout_override(None):
            assert store.timeout == 5
    with timeout_override(10, cap=True):
        assert store.timeout == 10 and EndpointStore("http://127.0.0.1:1/sparql", timeout=4).timeout == 4
    assert store.timeout == 30
    with pytest.raises(ConfigError, match="positive"), timeout_override(0):
        pass


def test_an_endpoint_query_ends_with_the_scope_it_runs_in() -> None:
    from sparqlqa.query.limits import QueryLimits, bounded

    store = EndpointStore("http://127.0.0.1:1/sparql", timeout=30)
    with bounded(QueryLimits(timeout_s=4)):
        assert 3 < store.timeout <= 4  # the scope's deadline, not the store's 30 s
    with bounded(QueryLimits(timeout_s=300)):
        assert store.timeout == 30


def test_a_built_query_gets_its_limit_on_its_structure(server: FakeSparqlServer,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from pyoxigraph import Variable

    from sparqlqa.query.built_query import BuiltQuery
    from sparqlqa.query.sparql_model import SparqlQuery
    from sparqlqa.query.sparql_model import Triple as Pattern

    def no_text_reading(sparql: str, max_rows: int) -> str:
        raise AssertionError("a built query's text was read for its LIMIT")

    monkeypatch.setattr("sparqlqa.remote.endpoint.with_limit", no_text_reading)
    s = Variable("s")
    pattern = Pattern(s, NamedNode("http://e/p"), Literal("LIMIT 3"))
    server.script(Scripted(body=SELECT_BODY), Scripted(body=SELECT_BODY))
    store, _ = make_store(server.url, max_rows=77)
    store.query(BuiltQuery.of(SparqlQuery("SELECT", (pattern,), projection=(s,)), one_line=True))
    store.query(BuiltQuery.of(SparqlQuery("SELECT", (pattern,), projection=(s,), limit=5)))
    assert server.seen[0].params()["query"] == ['SELECT ?s WHERE { ?s <http://e/p> "LIMIT 3" . } LIMIT 77']
    assert server.seen[1].params()["query"] == ['SELECT ?s WHERE {\n  ?s <http://e/p> "LIMIT 3" .\n}\nLIMIT 5']
