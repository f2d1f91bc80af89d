"""The structured query (issue 38 item 2): the compiler hands over a :class:`SparqlQuery`, one renderer writes
its text, and a KB group's remote member's ``SERVICE`` blocks are split off that structure, not its text."""

from __future__ import annotations

from typing import Any

import pytest
from pyoxigraph import BlankNode, Literal, NamedNode, Variable

from sparqlqa.kb.group_service import local_bindings, run_services, service_blocks, values_table
from sparqlqa.kb.labels import NodeMatch
from sparqlqa.kb.schema import RelationInfo, Schema
from sparqlqa.kb.store import QueryResult
from sparqlqa.query.built_query import BuiltQuery
from sparqlqa.query.sparql_model import (
    Bind,
    EitherWay,
    Filter,
    Optional,
    PathThen,
    Projection,
    Service,
    SparqlQuery,
    Triple,
    Union,
    Values,
    ValuesTable,
    merge_services,
    render,
    variables,
)
from sparqlqa.query.sparql_reading import read_query
from sparqlqa.stages.compile import ExecuteOptions, compile_form, compile_query, prepare
from sparqlqa.stages.forms import AnswerForm
from sparqlqa.stages.linking import LinkedConstants
from sparqlqa.stages.triplets import Term, Triplet, Triplets

EX = "http://example.org/"
URL = "http://endpoint.test/sparql"
P, Q = NamedNode(EX + "p"), NamedNode(EX + "q")
A, B, C = Variable("a"), Variable("b"), Variable("c")


def test_each_element_renders_as_the_compiler_wrote_it() -> None:
    same = NamedNode("http://www.w3.org/2002/07/owl#sameAs")
    guard = Filter.of(f"{Variable('p0')} != {P}", "p0")
    where = (Values(C, (NamedNode(EX + "x"), Literal("y"))),
             Triple(A, Variable("p0"), C, guard),
             Union(((Triple(A, P, B), Bind("1", Variable("d0"))), (Triple(B, P, A), Bind("0", Variable("d0"))))),
             Triple(A, EitherWay(same), B),
             Triple(A, PathThen(EitherWay(same), Q), NamedNode(EX + "T")),
             Filter.of(f"isIRI({A}) || isBlank({A})", "a"),
             Optional((Triple(A, Q, Variable("a_name"), Filter.of(f"isBlank({A})", "a"), dot=False),)),
             ValuesTable((A, B), ((NamedNode(EX + "x"), None),)))
    text = render(SparqlQuery("SELECT", where, (A, B), distinct=True, order_by=("DESC(?b)", "?a"), limit=5))
    assert text.split("\n") == [
        "SELECT DISTINCT ?a ?b WHERE {",
        f'  VALUES ?c {{ <{EX}x> "y" }}',
        f"  ?a ?p0 ?c . FILTER(?p0 != <{EX}p>)",
        f"  {{ ?a <{EX}p> ?b . BIND(1 AS ?d0) }}",
        f"  UNION {{ ?b <{EX}p> ?a . BIND(0 AS ?d0) }}",
        f"  ?a (<{same.value}>|^<{same.value}>)? ?b .",
        f"  ?a (<{same.value}>|^<{same.value}>)?/<{EX}q> <{EX}T> .",
        "  FILTER(isIRI(?a) || isBlank(?a))",
        f"  OPTIONAL {{ ?a <{EX}q> ?a_name FILTER(isBlank(?a)) }}",
        f"  VALUES (?a ?b) {{ (<{EX}x> UNDEF) }}",
        "}", "ORDER BY DESC(?b) ?a", "LIMIT 5"]
    assert read_query(text).form == "SELECT"  # and it is SPARQL a real parser reads
    count = SparqlQuery("SELECT", (Triple(A, P, B),), (Projection(f"COUNT(DISTINCT {A})", Variable("count")),))
    assert render(count).startswith("SELECT (COUNT(DISTINCT ?a) AS ?count) WHERE {\n")
    assert render(SparqlQuery("ASK", (Triple(A, P, B),))) == f"ASK {{\n  ?a <{EX}p> ?b .\n}}"
    prefixed = SparqlQuery("ASK", (Triple(A, P, B),), prefixes=(("ex", NamedNode(EX)),))
    assert render(prefixed, one_line=True) == f"PREFIX ex: <{EX}> ASK {{ ?a <{EX}p> ?b . }}"


def test_variables_come_from_the_terms_and_the_declared_ones() -> None:
    guard = Filter.of(f"{Variable('p0')} != {P}", "p0")
    assert variables(Triple(A, Variable("p0"), C, guard)) == {"a", "p0", "c"}
    assert variables(Service(NamedNode(URL), (Values(C, ()), Triple(A, P, B)))) == {"a", "b", "c"}
    assert variables(Union(((Triple(A, P, B), Bind("1", Variable("d0"))),))) == {"a", "b", "d0"}
    assert variables(Filter("FILTER(false)")) == set()


def test_service_blocks_of_one_endpoint_are_merged_where_the_first_stood() -> None:
    first, second = Service(NamedNode(URL), (Triple(A, P, B),)), Service(NamedNode(URL), (Triple(B, Q, C),))
    other = Service(NamedNode("http://other.test/sparql"), (Triple(C, P, A),))
    merged = merge_services([Triple(A, Q, C), first, other, second])
    assert merged == (Triple(A, Q, C), Service(NamedNode(URL), (Triple(A, P, B), Triple(B, Q, C))), other)
    assert SparqlQuery("SELECT", merged).services() == (URL, "http://other.test/sparql")


def _remote_plan() -> tuple[Triplets, LinkedConstants]:
    """``?x1 directed by ?x2 . ?x2 born in London``: ``born in`` only the endpoint holds."""
    triplets = Triplets("q", [
        Triplet(Term("variable", "?x1"), "directed by", Term("variable", "?x2"), relation_iri=EX + "directedBy"),
        Triplet(Term("variable", "?x2"), "born in", Term("constant", "London"), relation_iri=EX + "bornIn")],
        "?x1", [], "parsed", [], [])
    return triplets, LinkedConstants({"London": [NodeMatch(EX + "London", "London", 1.0, "exact")]})


@pytest.fixture
def compiled_remote() -> SparqlQuery:
    triplets, linked = _remote_plan()
    schema = Schema(relations=[RelationInfo(EX + "directedBy", "directed by", 3),
                               RelationInfo(EX + "bornIn", "born in", 3, service=URL)])
    plan = prepare(triplets, linked, schema, ExecuteOptions())
    compiled = compile_query(plan, plan.usable, ExecuteOptions(), tier=0)
    assert compiled.query is not None and compiled.sparql == render(compiled.query)
    built = compiled.built()
    assert built.structure is compiled.query and built.services == (URL,)
    assert {call.iri for call in read_query(built.text).services} == {URL}  # declared as the parser reads it
    return compiled.query


def _result(names: list[str], rows: list[list[Any]]) -> QueryResult:
    return QueryResult("", "SELECT", list(names), [tuple(row) for row in rows])


def test_a_remote_block_is_run_with_its_values_and_the_local_bindings(compiled_remote: SparqlQuery) -> None:
    sent: list[str] = []
    probes: list[str] = []
    nolan, london = NamedNode(EX + "Nolan"), NamedNode(EX + "London")

    def remote(endpoint: str, query: SparqlQuery) -> QueryResult:
        assert endpoint == URL
        sent.append(render(query, one_line=True))
        return _result(["v_x2", "c0"], [[nolan, london]])

    def local(query: SparqlQuery) -> QueryResult:
        probes.append(render(query))
        return _result(["v_x2"], [[nolan], [NamedNode(EX + "Scott")]])

    [(at, _)] = service_blocks(compiled_remote, {URL})
    assert isinstance(compiled_remote.where[at], Service)
    kept, history = run_services(compiled_remote, {URL}, remote, local)
    assert len(history) == 1 and kept.services() == ()
    assert kept.where[at] == ValuesTable((Variable("v_x2"), Variable("c0")), ((nolan, london),))
    # the local patterns and the FILTERs on their variables only, projected on what the block shares
    assert probes == [f"SELECT DISTINCT ?c0 ?v_x2 WHERE {{\n  VALUES ?c0 {{ <{EX}London> }}\n"
                      f"  ?v_x1 <{EX}directedBy> ?v_x2 .\n  FILTER(isIRI(?v_x1))\n  FILTER(!isLiteral(?v_x2))\n"
                      "}\nLIMIT 501"]
    assert sent == [f"SELECT * WHERE {{ VALUES (?v_x2) {{ (<{EX}Nolan>) (<{EX}Scott>) }} "
                    f"VALUES ?c0 {{ <{EX}London> }} ?v_x2 <{EX}bornIn> ?c0 . }}"]
    assert "SERVICE" not in BuiltQuery.of(kept).text


def test_an_endpoint_no_member_holds_stays_in_the_query(compiled_remote: SparqlQuery) -> None:
    def never(*_: object) -> QueryResult:
        raise AssertionError("nothing is sent")

    kept, history = run_services(compiled_remote, {"http://another.test/sparql"}, never, never)
    assert kept is compiled_remote and history == []


def test_too_many_local_bindings_are_not_sent(compiled_remote: SparqlQuery) -> None:
    many = _result(["v_x2"], [[NamedNode(f"{EX}n{i}")] for i in range(501)])
    assert local_bindings(compiled_remote, service_blocks(compiled_remote, {URL}), lambda _: many) == {}


def test_rows_with_a_blank_node_are_left_out_of_a_values_table() -> None:
    table = values_table(_result(["a"], [[BlankNode("b1")], [NamedNode(EX + "x")]]))
    assert table == ValuesTable((A,), ((NamedNode(EX + "x"),),))
    assert values_table(_result([], [])) == Filter("FILTER(false)")
    assert values_table(_result([], [[]])) is None


def test_count_and_ask_forms_declare_their_form_from_the_structure() -> None:
    triplets, linked = _remote_plan()
    triplets.form = AnswerForm("count")
    plan = prepare(triplets, linked, Schema(), ExecuteOptions())
    count = compile_form(plan, plan.usable, ExecuteOptions(), tier=0)
    assert count is not None and count.form == "SELECT" and count.built().form == "SELECT"
    assert count.sparql.startswith("SELECT (COUNT(DISTINCT ?v_x1) AS ?count) WHERE {\n")
    plan.form = AnswerForm("boolean")
    yes_no = compile_form(plan, plan.usable, ExecuteOptions(), tier=0)
    assert yes_no is not None and yes_no.form == "ASK" and yes_no.sparql.startswith("ASK {\n")
    assert read_query(yes_no.sparql).form == "ASK"
