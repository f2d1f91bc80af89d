"""Fault suite, updates: every SPARQL update form is refused before anything is sent or run.

Checked three ways: the lexical guard, a remote endpoint (a recording fake server must see no
request) and a local KB through ``sparqlqa sparql`` (exit code, message, count before == after).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_servers import FakeSparqlServer

from faults.helpers import assert_clean_failure, build_template, cli, count
from sparqlqa.errors import UpdateRefused
from sparqlqa.query.sparql_guard import query_form
from sparqlqa.remote.endpoint import EndpointStore

G = "<http://example.org/g>"
T = "<http://example.org/s> <http://example.org/p> <http://example.org/o>"
UPDATES = [
    f"INSERT DATA {{ {T} }}",
    f"DELETE DATA {{ {T} }}",
    "DELETE WHERE { ?s ?p ?o }",
    "DELETE { ?s ?p ?o } INSERT { ?s ?p 1 } WHERE { ?s ?p ?o }",
    "INSERT { ?s ?p 1 } WHERE { ?s ?p ?o }",
    f"WITH {G} DELETE {{ ?s ?p ?o }} WHERE {{ ?s ?p ?o }}",
    "LOAD <http://example.org/data.ttl>",
    f"LOAD SILENT <http://example.org/data.ttl> INTO GRAPH {G}",
    "CLEAR ALL", "CLEAR DEFAULT", f"CLEAR SILENT GRAPH {G}",
    "DROP ALL", f"DROP GRAPH {G}", "DROP NAMED",
    f"CREATE GRAPH {G}",
    f"ADD DEFAULT TO {G}", f"MOVE {G} TO DEFAULT", f"COPY DEFAULT TO {G}",
    # disguised
    f"iNsErT dAtA {{ {T} }}",
    f"# a comment\n  # another\nINSERT DATA {{ {T} }}",
    "PREFIX ex: <http://example.org/>\nBASE <http://example.org/>\nINSERT DATA { ex:s ex:p ex:o }",
    f"PREFIX select: <http://example.org/> DROP GRAPH {G}",
    f"\\u0049NSERT DATA {{ {T} }}",
    "\\U00000044ROP ALL",
    "\\u0064\\u0065\\u006c\\u0065\\u0074\\u0065 WHERE { ?s ?p ?o }",
    "SELECT * WHERE { ?s ?p ?o } ; DROP ALL",
    "ASK { ?s ?p ?o }\n;\nCLEAR DEFAULT",
    "SELECT * WHERE { ?s ?p ?o } ; \\u0044ROP ALL",
    f"SELECT * WHERE {{ ?s ?p ?o }} # comment\n;INSERT DATA {{ {T} }}",
]


@pytest.mark.parametrize("update", UPDATES)
def test_the_guard_refuses(update: str) -> None:
    with pytest.raises(UpdateRefused):
        query_form(update)


@pytest.fixture(scope="module")
def endpoint() -> Iterator[FakeSparqlServer]:
    with FakeSparqlServer() as fake:
        yield fake


@pytest.mark.parametrize("update", UPDATES)
def test_no_request_reaches_an_endpoint(endpoint: FakeSparqlServer, update: str) -> None:
    store = EndpointStore(endpoint.url, max_retries=0, timeout=1.0)
    for run in (store.query, store.select, lambda text: store._execute(text, "SELECT")):
        with pytest.raises(UpdateRefused):
            run(update)
    assert endpoint.seen == [] and store.requests_sent == 0


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    home = tmp_path_factory.mktemp("home")
    source = home / "kb.nt"
    source.write_text(f"{T} .\n<http://example.org/a> <http://example.org/p> \"x\" .\n")
    return home, build_template(home, "k", [source])


@pytest.mark.parametrize("update", UPDATES)
def test_the_cli_refuses_and_the_store_is_unchanged(kb: int, update: str) -> None:
    code, output = cli("sparql", "k", update)
    assert_clean_failure(code, output, UpdateRefused.exit_code, "refused to send a SPARQL update")
    assert count("k") == kb
