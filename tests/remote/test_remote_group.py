"""A KB group with a remote member (issue 27, item 2): a local KB joined with a Virtuoso endpoint on
127.0.0.1 through a ``SERVICE`` block run by the endpoint's own store; only read queries reach it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyoxigraph import RdfFormat, parse, serialize
from virtuoso import OxigraphSparqlServer, VirtuosoServer, virtuoso  # noqa: F401

from sparqlqa.ingest import ingest
from sparqlqa.kb.group import GroupKB
from sparqlqa.kb.knowledge_base import open_kb
from sparqlqa.query.sparql_guard import query_form
from sparqlqa.remote import add_remote_kb
from sparqlqa.remote.endpoint import EndpointStore
from sparqlqa.stages.execute import find_candidates
from sparqlqa.stages.linking import link_constants
from sparqlqa.stages.triplets import parse_arrow_triplets

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PEOPLE_GRAPH = "urn:sparqlqa:test:group-people"
EX = "http://example.org/"


@pytest.fixture(scope="module")
def people_graph(virtuoso: VirtuosoServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:  # noqa: F811
    """The people half in a graph of the session's Virtuoso, cleared after this module (other modules
    query the whole endpoint)."""
    people = tmp_path_factory.mktemp("group") / "group_people.nt"
    with people.open("wb") as out:
        serialize(parse(path=str(FIXTURES / "group_people.ttl"), format=RdfFormat.TURTLE), out, RdfFormat.N_TRIPLES)
    virtuoso.load({PEOPLE_GRAPH: people})
    yield virtuoso.sparql_url
    virtuoso.isql(f"SPARQL CLEAR GRAPH <{PEOPLE_GRAPH}>;")


@pytest.fixture
def remote_group(people_graph: str) -> str:
    ingest([FIXTURES / "group_films.ttl"], kb="films")
    add_remote_kb("people", people_graph, "generic", default_graphs=[PEOPLE_GRAPH], timeout=30)
    return people_graph


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every query the endpoint stores send, in order (recorded at the transport's door)."""
    queries: list[str] = []
    real = EndpointStore._execute

    def recording(self: EndpointStore, sparql: str, form: str):  # type: ignore[no-untyped-def]
        queries.append(sparql)
        return real(self, sparql, form)

    monkeypatch.setattr(EndpointStore, "_execute", recording)
    return queries


@pytest.mark.virtuoso
def test_a_local_kb_joined_with_a_virtuoso_member_answers_and_sends_only_reads(
        remote_group: str, sent: list[str], tmp_path: Path) -> None:
    with open_kb("films+people") as group:
        assert isinstance(group, GroupKB) and group.remote == {remote_group: "people"}
        born = group.schema.relation("born in")
        assert born is not None and born.service == remote_group and born.kbs == ["people"]
        arrow = "film 'Inception' -> directed by -> person |?2|; person |?2| -> born in -> city |?1|"
        triplets = parse_arrow_triplets(arrow, "where were the directors of Inception born", group.schema)
        found = find_candidates(triplets, link_constants(triplets, group), group)
        assert found.iris(0) == [f"{EX}London"]  # Inception → Nolan here, Nolan → London on the endpoint
        query = found.queries[-1].query
    assert f"SERVICE <{remote_group}>" in query  # the saved query is the federated one
    assert sent and all(query_form(q) in ("SELECT", "ASK") for q in sent)
    assert all("SERVICE" not in q for q in sent)  # the endpoint is asked for its own part only
    service_queries = [q for q in sent if "bornIn" in q]
    assert service_queries[0].startswith(f"SELECT * WHERE {{ VALUES (?v_2) {{ (<{EX}Nolan>) }} ")  # bind join
    assert all(f"<{EX}Nolan>" in q for q in service_queries)  # only the rows that can join are asked for


@pytest.mark.virtuoso
def test_a_service_to_any_other_host_is_still_refused(remote_group: str) -> None:
    from sparqlqa.errors import ServiceRefused

    with open_kb("films+people") as group, pytest.raises(ServiceRefused):
        group.query("SELECT * WHERE { SERVICE <http://169.254.169.254/sparql> { ?s ?p ?o } }")


def test_the_remote_part_goes_through_sparqlqas_own_transport(people_server: OxigraphSparqlServer) -> None:
    """Everywhere (no Virtuoso needed): the stand-in endpoint sees sparqlqa's User-Agent on every request,
    so no query was sent by Oxigraph's own SERVICE client, and the answer needs both KBs."""
    from sparqlqa.remote.endpoint import default_user_agent

    server = people_server
    with open_kb("films+people") as group:
        arrow = "film |?1| -> directed by -> person |?2|; person |?2| -> born in -> city 'South Shields'"
        linked = parse_arrow_triplets(arrow, "q", group.schema)
        found = find_candidates(linked, link_constants(linked, group), group)
    assert sorted(found.iris(0)) == [f"{EX}Alien", f"{EX}Gladiator"]
    assert server.queries and all(query_form(q) == "SELECT" and "SERVICE" not in q for q in server.queries)
    assert set(server.user_agents) == {default_user_agent()}


@pytest.fixture(params=["oxigraph-http", "virtuoso"])
def people_endpoint(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, list[str]]]:
    """(URL, default graphs) of an endpoint holding the people half: the stand-in, then Virtuoso."""
    if request.param == "virtuoso":
        yield request.getfixturevalue("people_graph"), [PEOPLE_GRAPH]
        return
    people = tmp_path / "group_people.nt"
    with people.open("wb") as out:
        serialize(parse(path=str(FIXTURES / "group_people.ttl"), format=RdfFormat.TURTLE), out, RdfFormat.N_TRIPLES)
    with OxigraphSparqlServer([people]) as server:
        yield server.sparql_url, []


def test_ask_4step_on_a_group_with_a_remote_member(people_endpoint: tuple[str, list[str]], tmp_path: Path,
                                                   sent: list[str]) -> None:
    """The whole pipeline: the LLM's triplets name a relation and a city only the endpoint holds."""
    from sparqlqa.llm import FakeLLM
    from sparqlqa.stages.audit import save_sparql
    from sparqlqa.strategies.ask import ask

    def term(kind: str, text: str, type_: str) -> dict[str, str]:
        return {"kind": kind, "text": text, "type": type_}

    triplets = {"triplets": [
        {"head": term("variable", "?x1", "film"), "relation": "directed by", "tail": term("variable", "?x2", "person")},
        {"head": term("variable", "?x2", "person"), "relation": "born in",
         "tail": term("constant", "South Shields", "city")},
    ], "target": "?x1"}
    url, graphs = people_endpoint
    ingest([FIXTURES / "group_films.ttl"], kb="films")
    add_remote_kb("people", url, "generic", default_graphs=graphs, timeout=30)
    answer = ask("films+people", "Which films were directed by people born in South Shields?",
                 llm=FakeLLM([triplets]), rerank="none", k=5)
    saved = save_sparql(answer, tmp_path / "rq", stages=["sparql"])
    matched = [item for item in answer.items if item.matched]
    assert sorted(item.label for item in matched) == ["Alien", "Gladiator"]
    kbs = {p: k for item in matched for (_, p, _), k in zip(item.evidence_triples(), item.evidence_kbs or [])}
    assert kbs == {f"{EX}directedBy": ["films"], f"{EX}bornIn": ["people"]}
    assert any(f"SERVICE <{url}>" in path.read_text("utf-8") for path in saved)
    assert any("Ridley Scott —ex:bornIn→ South Shields (in people)" in line  # the endpoint's label
               for item in matched for line in item.evidence_text(answer.labels))
    assert sent and all(query_form(q) in ("SELECT", "ASK") and "SERVICE" not in q for q in sent)  # reads only


def test_a_query_text_calling_the_remote_member_meets_the_service_guard(people_server: OxigraphSparqlServer) -> None:
    """Only a query sparqlqa compiled (its structure at hand) has its remote blocks run by the member's store;
    a query text from outside (a user's, a saved ``.rq``) is read by the parser like any other, so its SERVICE
    to the member is refused as on any KB, and nothing reaches the endpoint."""
    from sparqlqa.errors import ServiceRefused

    with open_kb("films+people") as group, pytest.raises(ServiceRefused):
        group.query(f"SELECT * WHERE {{\n  SERVICE <{people_server.sparql_url}> {{ ?s <{EX}bornIn> ?o . }}\n}}")
    assert people_server.queries == []
