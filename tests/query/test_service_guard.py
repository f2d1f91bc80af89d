"""``sparqlqa.query.service_guard``: SERVICE found in the one reading by a SPARQL parser, never by a substring."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_servers import FakeSparqlServer, Scripted, Seen
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode, Quad
from pyoxigraph import Store as OxStore

from sparqlqa.errors import ConfigError, QueryError, ServiceRefused
from sparqlqa.kb.profile import Profile
from sparqlqa.kb.store import OxigraphStore
from sparqlqa.query.service_guard import allowance, check_service, is_allowed
from sparqlqa.query.sparql_reading import ServiceCall, UnreadableQuery, read_query
from sparqlqa.remote.profiles import parse_profile

EP = "http://ep.example.org/sparql"


def service_calls(query: str) -> list[ServiceCall]:
    return list(read_query(query).services)


def endpoints(query: str) -> list[str | None]:
    return [call.iri for call in service_calls(query)]


def refused(query: str, allowed: set[str] | frozenset[str] = frozenset()) -> bool:
    """Whether the guard refuses ``query``: a SERVICE not allowed, or a text it cannot read with certainty."""
    try:
        check_service(read_query(query), allowed)
    except (ServiceRefused, QueryError):
        return True
    return False


@pytest.mark.parametrize("query", [
    "SELECT ?service WHERE { ?service ?p ?o }",
    "SELECT $Service { $Service ?p ?o }",
    "PREFIX service: <http://e/> SELECT * { ?s service:x ?o . service:y ?p ?o }",
    "PREFIX ex: <http://e/> SELECT * { ?s ex:service ?o ; ex:SERVICE_of ?x }",
    "SELECT * { ?s <http://e/service> ?o } # SERVICE <http://evil/> { }",
    "SELECT * { ?s ?p 'SERVICE <http://evil/> { ?a ?b ?c }' }",
    'SELECT * { ?s ?p """multi\nSERVICE <http://evil/> {}\n""" }',
    "SELECT * { ?s ?p \"it's \\\" SERVICE <http://evil/> {}\" }",
    "SELECT * { ?s ?p ?o FILTER(?o = 'x'@service) }",
    "SELECT * { _:service ?p ?o }",
    "PREFIX service: <http://e/> SELECT * { GRAPH service:g { ?s ?p ?o } }",
    "SELECT * { ?s <http://www.w3.org/ns/sparql-service-description#endpoint> ?o }",
    "PREFIX ex: <http://e/> SELECT * { ?s ex:a\\'service ?o }",
    "SELECT * { ?s ?p ?o }",
])
def test_the_word_service_elsewhere_is_no_service(query: str) -> None:
    assert service_calls(query) == []
    OxStore().query(query)  # each is a query Oxigraph accepts


@pytest.mark.parametrize(("query", "iri"), [
    (f"SELECT * {{ SERVICE <{EP}> {{ ?s ?p ?o }} }}", EP),
    (f"select * {{ sErViCe SiLeNt <{EP}> {{ ?s ?p ?o }} }}", EP),
    ("PREFIX e: <http://ep.example.org/> SELECT * { SERVICE e:sparql { ?s ?p ?o } }", EP),
    (f"SELECT * {{ ?s ?p ?o OPTIONAL {{ SERVICE <{EP}> {{ ?s ?p ?o }} }} }}", EP),
    (f"SELECT * {{ {{ ?s ?p ?o }} UNION {{ SERVICE <{EP}> {{ ?s ?p ?o }} }} }}", EP),
    (f"SELECT * {{ ?s ?p ?o FILTER NOT EXISTS {{ SERVICE <{EP}> {{ ?s ?p ?o }} }} }}", EP),
    (f"SELECT * {{ {{ SELECT ?s {{ SERVICE <{EP}> {{ ?s ?p ?o }} }} }} }}", EP),
    (f"ASK {{ SERVICE <{EP}> {{ SERVICE <http://other.org/q> {{ ?s ?p ?o }} }} }}", EP),
    (f"SELECT * {{ \\u0053ERVICE <{EP}> {{ ?s ?p ?o }} }}", EP),  # SPARQL's escapes (Oxigraph 0.5 rejects it)
    (f"SELECT * {{ ?s ?p ?o # note\rSERVICE <{EP}> {{ ?s ?p ?o }} }}", EP),  # a comment ends at CR (for Oxigraph)
    ("SELECT * { SERVICE <http://ep.example.org/\\u0073parql> { ?s ?p ?o } }", EP),
    (f"PREFIX : <{EP}#> SELECT * {{ SERVICE:x {{ ?s ?p ?o }} }}", EP + "#x"),  # glued: Oxigraph runs these
    (f"PREFIX : <{EP}#> SELECT * {{ SERVICE SILENT:x {{ ?s ?p ?o }} }}", EP + "#x"),
    (f"SELECT * {{ ?s ?p ?o FILTER(?a<?b)SERVICE<{EP}>#>\n{{ ?s ?p ?o }} }}", EP),  # '<' as less-than
    (f"SELECT * {{ BIND(EXISTS{{?s ?p ?o}}<'a> b' AS ?z) SERVICE <{EP}> {{ ?x ?y ?w }} BIND('c#' AS ?q)\n}}", EP),
    (f"PREFIX ex: <http://e/> SELECT * {{ VALUES ?x {{ ex:a''' \"\n'''}} SERVICE <{EP}> {{ ?s ?p ?o }} # \"'\n}}",
     EP),  # a prefixed name ends before a quote
])
def test_service_is_found_wherever_oxigraph_reads_it(query: str, iri: str) -> None:
    assert iri in endpoints(query)
    with pytest.raises(ServiceRefused, match="SERVICE"):
        check_service(read_query(query), ())


@pytest.mark.parametrize("query", [
    f"PREFIX ex: <{EP}#> SELECT * {{ SERVICEex:x {{ ?s ?p ?o }} }}",  # Oxigraph glues keywords; rdflib does not
    f"SELECT * {{ SERVICESILENT<{EP}>{{ ?s ?p ?o }} }}",
    f"SELECT * {{ ?s ?p 'a\\u0027 . SERVICE <{EP}> {{ ?s ?p ?o }} ?s ?p ' }}",  # an escaped quote
    f"SELECT * {{ ?s ?p ?o # \\u000A SERVICE <{EP}> {{ ?s ?p ?o }}\n}}",  # an escaped line end in a comment
    f"SELECT * {{ ?s ?p <http://e/\\u003E> SERVICE <{EP}> {{ ?s ?p ?o }} }}",  # an escaped '>' in an IRI
])
def test_what_the_parsers_could_read_two_ways_is_refused(query: str) -> None:
    with pytest.raises(QueryError, match="line 1"):  # unreadable, whatever the allowance
        read_query(query)


@pytest.mark.parametrize("query", [
    "BASE <http://ep.example.org/x/> SELECT * { SERVICE <../sparql> { ?s ?p ?o } }",
    "BASE <http://ep.example.org/> PREFIX e: <x/> SELECT * { SERVICE e:sparql { ?s ?p ?o } }",
    "SELECT * { SERVICE e:sparql { ?s ?p ?o } }",  # an undeclared prefix
])
def test_an_endpoint_that_needs_base_or_an_undeclared_prefix_is_refused(query: str) -> None:
    with pytest.raises(ServiceRefused, match="cannot check its host"):
        check_service(read_query(query), {"ep.example.org"})


def test_an_escape_of_a_plain_character_is_read_as_sparql_says() -> None:
    query = "SELECT * { ?s ?p 'caf\\u00e9' SERVICE <http://ep.example.org/\\u0073parql> { ?s ?p ?o } }"
    assert endpoints(query) == [EP]
    with pytest.raises(UnreadableQuery, match=r"escape '\\\\u0022' at line 1, column 19"):
        read_query("SELECT * { ?s ?p '\\u0022' }")


def test_service_with_a_variable_is_always_refused() -> None:
    query = "SELECT * { BIND(<http://ep.example.org/> AS ?e) SERVICE ?e { ?s ?p ?o } }"
    with pytest.raises(ServiceRefused, match=r"variable \?e.*cannot be checked"):
        check_service(read_query(query), {"ep.example.org"})


def test_less_than_before_a_quote_is_read_as_the_grammar_says() -> None:
    query = f"SELECT * {{ ?s ?p ?o FILTER(?a<'x>)')SERVICE<{EP}>{{ ?s ?p ?o }}#'\n}}"
    assert endpoints(query) == [EP]
    assert refused(query) and not refused(query, {"ep.example.org"})


def test_a_stray_quote_near_service_is_an_error() -> None:
    with pytest.raises(QueryError, match="line 1"):
        read_query("SELECT * { ?s ?p 'x } SERVICE <http://e/> {}")


@pytest.mark.parametrize(("allowed", "iri", "ok"), [
    ({"ep.example.org"}, "http://ep.example.org/sparql", True),
    ({"ep.example.org"}, "https://EP.Example.ORG:8443/sparql", True),
    ({"ep.example.org:443"}, "https://ep.example.org/sparql", True),
    ({"ep.example.org:80"}, "https://ep.example.org/sparql", False),
    ({"ep.example.org"}, "http://ep.example.org.evil.net/", False),
    ({"ep.example.org"}, "http://evil.net/?ep.example.org", False),
    ({"ep.example.org"}, "http://ep.example.org@evil.net/", False),
    ({"ep.example.org"}, "http://x@ep.example.org/", False),  # user info: refused, never parsed around
    ({"ep.example.org"}, "ftp://ep.example.org/", False),
    ({"ep.example.org"}, "file:///etc/passwd", False),
    ({"127.0.0.1"}, "http://127.1/", False),
    ({"[::1]:3030"}, "http://[::1]:3030/ds", True),
    (set(), "http://ep.example.org/", False),
])
def test_hosts_match_exactly(allowed: set[str], iri: str, ok: bool) -> None:
    assert is_allowed(iri, allowance(allowed)) is ok


@pytest.mark.parametrize("entry", ["http://ep.example.org/sparql", "ep.example.org/", "user@host", "", "a b"])
def test_an_allowance_is_a_host_name(entry: str) -> None:
    with pytest.raises(ConfigError, match="not a host name"):
        allowance([entry])


def test_the_store_refuses_before_oxigraph_runs_anything() -> None:
    store = OxigraphStore.in_memory()
    with pytest.raises(ServiceRefused, match=r"SERVICE <http://127\.0\.0\.1:9/x>: host 127\.0\.0\.1:9 is not"):
        store.query("SELECT * { SERVICE <http://127.0.0.1:9/x> { ?s ?p ?o } }")
    store.allow_service = allowance(["127.0.0.1:9"])
    assert store.query("SELECT * { SERVICE SILENT <http://127.0.0.1:9/x> { ?s ?p ?o } }").rows == [(None, None, None)]


def test_profiles_carry_an_allowance() -> None:
    base = {"predicates": {"label": ["rdfs:label"], "type": "rdf:type"}}
    profile = parse_profile({**base, "allow_service": ["Query.Wikidata.org", "h:8890"]}, source="p.toml")
    assert profile.allow_service == ("h:8890", "query.wikidata.org")
    assert Profile.from_dict(profile.to_dict()) == profile
    with pytest.raises(ConfigError, match=r"p\.toml: allow_service: 'https://h/' is not a host name"):
        parse_profile({**base, "allow_service": ["https://h/"]}, source="p.toml")


# -- differential: whatever Oxigraph would fetch, the guard refuses ------------------------------------


@pytest.fixture(scope="module")
def listener() -> Iterator[tuple[str, list[Seen]]]:
    empty = {"head": {"vars": ["z"]}, "results": {"bindings": []}}
    with FakeSparqlServer(otherwise=Scripted(body=empty)) as server:
        yield server.url, server.seen


GAPS = st.sampled_from(["", " ", "\t", "\r", "\n", "#c\r", "#c\n", " #SERVICE\n", "\r\n"])
KEYWORD = st.sampled_from(["SERVICE", "service", "Service", "sErViCe"])
SILENT = st.sampled_from(["", "SILENT", "silent"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=GAPS, after=GAPS, between=GAPS, keyword=KEYWORD, silent=SILENT,
       form=st.sampled_from(["iri", "pname", "emptyprefix"]))
def test_oxigraph_never_calls_what_the_guard_lets_through(listener: tuple[str, list[Seen]], before: str, after: str,
                                                          between: str, keyword: str, silent: str, form: str) -> None:
    url, hits = listener
    endpoint = {"iri": f"<{url}>", "pname": "ep:sparql", "emptyprefix": ":sparql"}[form]
    query = (f"PREFIX ep: <{url[:-len('sparql')]}> PREFIX : <{url[:-len('sparql')]}> SELECT * {{{before}"
             f"{keyword}{between}{silent}{after}{endpoint}{{ ?a ?b ?z }} ?s ?p ?o }}")
    store = OxStore()
    store.add(Quad(NamedNode("http://e/s"), NamedNode("http://e/p"), Literal("o")))
    if refused(query):
        return  # refused: nothing more to show
    before_hits = len(hits)
    try:
        list(store.query(query))  # type: ignore[arg-type]
    except (SyntaxError, OSError, RuntimeError):
        pass
    assert len(hits) == before_hits, f"Oxigraph called out for a query the guard let through: {query!r}"
