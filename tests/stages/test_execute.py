"""Compiling triplets to SPARQL and narrowing candidates on the movie KB (Oxigraph and rdflib)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode, Quad

from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.labels import NodeMatch
from sparqlqa.kb.schema import Schema
from sparqlqa.kb.store import OxigraphStore
from sparqlqa.kb.vocab import RDFS
from sparqlqa.stages.compile import ExecuteOptions, compile_query, label_lookup_query, prepare, variable_name
from sparqlqa.stages.execute import Candidates, find_candidates
from sparqlqa.stages.linking import LinkedConstants, link_constants
from sparqlqa.stages.triplets import Term, Triplet, Triplets, parse_arrow_triplets, triplets_from_data

EX = "https://example.org/movies/"
REL = EX + "rel/"
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "movies.ttl"


@pytest.fixture(scope="module")
def rdflib_graph():  # type: ignore[no-untyped-def]
    import rdflib

    graph = rdflib.Graph()
    graph.parse(FIXTURE, format="turtle")
    return graph


def run(kb: KnowledgeBase, arrows: str, **options: object) -> Candidates:
    triplets = parse_arrow_triplets(arrows, "q", kb.schema)
    linked = link_constants(triplets, kb)
    return find_candidates(triplets, linked, kb, ExecuteOptions(**options))  # type: ignore[arg-type]


def names(found: Candidates, tier: int | None = None) -> list[str]:
    return sorted(iri.removeprefix(EX) for iri in found.iris(tier))


def test_one_triplet_tier_zero_with_evidence(kb: KnowledgeBase) -> None:
    found = run(kb, "movie |?1| -> directed by -> person 'Ridley Scott'")
    assert names(found) == ["alien", "blade_runner", "gladiator"]
    assert {c.tier for c in found.items} == {0} and {c.satisfied for c in found.items} == {1}
    alien = next(c for c in found.items if c.iri == EX + "alien")
    assert alien.evidence.triples == [(EX + "alien", REL + "directed_by", EX + "ridley_scott")]
    assert [q.tier for q in found.compiled] == [0] and found.dropped == [] and found.target == "?1"
    assert found.compiled[0].sparql == found.queries[0].query
    assert len(found.queries) == 2 and all("LIMIT 1000" in q.query for q in found.queries)


def test_ambiguous_constant_becomes_values(kb: KnowledgeBase) -> None:
    found = run(kb, "|?1| -> directed by -> 'Scott'")  # Ridley Scott and Tony Scott
    assert names(found) == ["alien", "blade_runner", "gladiator", "top_gun"]
    values = [line for line in found.compiled[0].sparql.splitlines() if "VALUES ?c0" in line]
    assert values and EX + "ridley_scott" in values[0] and EX + "tony_scott" in values[0]


def test_max_values_caps_the_values(kb: KnowledgeBase) -> None:
    found = run(kb, "|?1| -> directed by -> 'Scott'", max_values=1)
    assert len(names(found)) in (1, 3)  # one director's movies only


def test_direction_and_undirected(kb: KnowledgeBase) -> None:
    backwards = "person 'Ridley Scott' -> directed by -> movie |?1|"
    assert run(kb, backwards).items == []
    assert names(run(kb, backwards, undirected=True)) == ["alien", "blade_runner", "gladiator"]
    undirected = run(kb, backwards, undirected=True)
    evidence = undirected.items[0].evidence.triples[0]
    assert evidence[1] == REL + "directed_by" and evidence[2] == EX + "ridley_scott"  # stored direction


def test_ignore_relations(kb: KnowledgeBase) -> None:
    wrong = "|?1| -> starred actors -> 'Ridley Scott'"
    assert run(kb, wrong).items == []
    found = run(kb, wrong, ignore_relations=True)
    assert names(found) == ["alien", "blade_runner", "gladiator"]
    assert found.items[0].evidence.triples[0][1] == REL + "directed_by"


def test_types_are_honoured_or_dropped(kb: KnowledgeBase) -> None:
    arrows = "genre |?1| -> any -> movie 'Alien'"
    typed = run(kb, arrows, undirected=True)
    assert names(typed) == ["horror", "scifi"]
    untyped = run(kb, arrows, undirected=True, use_types=False)
    assert names(untyped) == ["horror", "ridley_scott", "scifi", "sigourney_weaver"]
    assert "rdf-syntax-ns#type> <" not in untyped.compiled[0].sparql
    assert "rdf-syntax-ns#type> <" in typed.compiled[0].sparql


def test_relaxation_tiers(kb: KnowledgeBase) -> None:
    arrows = ("|?1| -> directed by -> 'Ridley Scott'\n|?1| -> starring -> 'Harrison Ford'\n"
              "|?1| -> has genre -> 'Horror'")
    found = run(kb, arrows)
    assert names(found) == ["blade_runner"] and found.items[0].tier == 1 and found.items[0].satisfied == 2
    assert [q.tier for q in found.compiled] == [0, 1] and found.dropped == [2]
    assert found.compiled[0].triplet_indexes == [0, 1, 2] and found.compiled[1].triplet_indexes == [0, 1]
    assert len(found.items[0].evidence.triples) == 2
    assert any("dropped triplet 2" in n for n in found.notes)


def test_relaxation_drops_unknown_relation_first(kb: KnowledgeBase) -> None:
    arrows = "|?1| -> filmed with -> 'Tom Cruise'\n|?1| -> directed by -> 'Ridley Scott'"
    found = run(kb, arrows)
    assert found.dropped == [0] and names(found, 1) == ["alien", "blade_runner", "gladiator"]


def test_relaxation_drops_weak_links_before_exact_ones(kb: KnowledgeBase) -> None:
    arrows = "|?1| -> directed by -> 'Ridley Scott'\n|?1| -> starring -> 'Scott'"  # 'Scott': 2 weak matches
    found = run(kb, arrows)
    assert found.dropped == [1] and names(found) == ["alien", "blade_runner", "gladiator"]


def test_min_candidates_collects_several_tiers_best_first(kb: KnowledgeBase) -> None:
    arrows = "|?1| -> starring -> 'Sigourney Weaver'\n|?1| -> directed by -> 'James Cameron'"
    found = run(kb, arrows, min_candidates=4)
    assert names(found, 0) == ["aliens", "avatar"]
    assert [c.tier for c in found.items] == [0, 0, 1]
    assert names(found, 1) == ["alien"] and found.items[-1].satisfied == 1


def test_variable_chains(kb: KnowledgeBase) -> None:
    arrows = "|?1| -> directed by -> |?2|\nmovie 'Gladiator' -> directed by -> |?2|"
    found = run(kb, arrows)
    assert names(found) == ["alien", "blade_runner", "gladiator"]
    alien = next(c for c in found.items if c.iri == EX + "alien")
    assert (EX + "gladiator", REL + "directed_by", EX + "ridley_scott") in alien.evidence.triples


def test_what_cannot_be_used_is_noted(kb: KnowledgeBase) -> None:
    found = run(kb, "|?1| -> directed by -> 'Nobody Anybody Zq'\n'Alien' -> directed by -> 'Ridley Scott'")
    assert found.items == [] and found.queries == [] and found.dropped == [0, 1]
    assert any("matches no KB node" in n for n in found.notes)
    assert any("two constants" in n for n in found.notes)


@pytest.mark.parametrize("arrows", ["|?1| -> directed by -> |?2|", "garbage"])
def test_unconstrained_target_gives_no_candidates(kb: KnowledgeBase, arrows: str) -> None:
    found = run(kb, arrows)
    assert found.items == [] and found.queries == [] and found.notes


def test_target_outside_the_triplets_gives_no_candidates(kb: KnowledgeBase) -> None:
    triplets = parse_arrow_triplets("|?2| -> directed by -> 'Ridley Scott'", "q", kb.schema)
    triplets.target = "?1"
    found = find_candidates(triplets, link_constants(triplets, kb), kb, ExecuteOptions())
    assert found.items == [] and found.queries == [] and found.dropped == [0]
    assert any("not connected to the target" in n for n in found.notes)


def test_garbage_llm_output_degrades_to_notes(kb: KnowledgeBase) -> None:
    for data in (None, [], {"triplets": [{"head": 1}], "target": {}}, {"triplets": "x"}):
        triplets = triplets_from_data(data, "q", kb.schema)
        found = find_candidates(triplets, link_constants(triplets, kb), kb, ExecuteOptions())
        assert found.items == [] and found.notes


def test_invalid_relation_iri_means_any_predicate(kb: KnowledgeBase) -> None:
    triplets = parse_arrow_triplets("|?1| -> directed by -> 'Ridley Scott'", "q", kb.schema)
    triplets.triplets[0].relation_iri = "http://x/> } UNION { ?s ?p ?o"
    found = find_candidates(triplets, link_constants(triplets, kb), kb, ExecuteOptions())
    assert names(found) == ["alien", "blade_runner", "gladiator"]
    assert "UNION" not in found.compiled[0].sparql and any("not a valid IRI" in n for n in found.notes)


OPTION_SETS = [ExecuteOptions(), ExecuteOptions(undirected=True), ExecuteOptions(ignore_relations=True),
               ExecuteOptions(ignore_relations=True, undirected=True, use_types=False)]


@pytest.mark.parametrize("options", OPTION_SETS)
def test_queries_run_unchanged_on_rdflib(kb: KnowledgeBase, rdflib_graph, options: ExecuteOptions) -> None:  # type: ignore[no-untyped-def]
    arrows = ("movie |?1| -> directed by -> |?2|\nmovie 'Gladiator' -> directed by -> |?2|\n"
              "|?1| -> starring -> 'Sigourney Weaver'\n|?1| -> has genre -> genre 'sci-fi'")
    triplets = parse_arrow_triplets(arrows, "q", kb.schema)
    found = find_candidates(triplets, link_constants(triplets, kb), kb, options)
    assert found.queries
    for record in found.queries:
        ours = kb.query(record.query)
        theirs = rdflib_graph.query(record.query)
        ox_rows = {tuple(t.value if t is not None else None for t in row) for row in ours.rows}
        rdf_rows = {tuple(str(t) if t is not None else None for t in row) for row in theirs}
        assert ox_rows == rdf_rows and [str(v) for v in theirs.vars] == ours.variables


# -- hostile text can never change a query ---------------------------------------------------------

HOSTILE = st.one_of(
    st.text(max_size=40),
    st.sampled_from(['"', "'", "}", "{", "} UNION { ?s ?p ?o }", '"} ; DROP ALL #', "\\", "\n", "\r\n",
                     "?x1", "<http://evil/>", ">", "\u202e", "\x00", "'''", '"""', "#", "\\u0022", "é\u0301"]),
)


def _triplets(constant: str, other: str, variable: str, relation: str, type_: str) -> Triplets:
    return Triplets("q", [
        Triplet(Term("variable", variable, type_), relation, Term("constant", constant, type_)),
        Triplet(Term("variable", variable), "directed by", Term("constant", other)),
    ], variable, [], "llm", [], [])


def _shape(sparql: str) -> tuple[int, int, int]:
    return sparql.count(" ."), sparql.count("VALUES"), sparql.count("{")


@settings(max_examples=50, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(constant=HOSTILE, other=HOSTILE, relation=HOSTILE, type_=HOSTILE)
def test_hostile_constants_never_change_the_query(kb: KnowledgeBase, constant: str, other: str, relation: str,
                                                  type_: str) -> None:
    from rdflib.plugins.sparql import prepareQuery

    linked_ridley = [NodeMatch(EX + "ridley_scott", "Ridley Scott", 1.0, "exact")]
    baseline = prepare(_triplets("a", "b", "?x1", "directed by", ""),
                       LinkedConstants({"a": linked_ridley, "b": []}), Schema(), ExecuteOptions())
    expected = compile_query(baseline, baseline.usable, ExecuteOptions(), tier=0).sparql
    # the first constant is linked, the second (hostile, unlinked) is dropped
    links = {constant: linked_ridley} if constant != other else {}
    plan = prepare(_triplets(constant, other, "?x1", relation, type_), LinkedConstants(links), Schema(),
                   ExecuteOptions())
    if constant == other:
        assert plan.usable == []
        return
    sparql = compile_query(plan, plan.usable, ExecuteOptions(), tier=0).sparql
    assert _shape(sparql) == _shape(expected) and sparql == expected
    prepareQuery(sparql)
    assert {t.value for t in kb.query(sparql).column("v_x1")} == {EX + "alien", EX + "blade_runner",
                                                                 EX + "gladiator"}


@settings(max_examples=30, deadline=None, database=None)
@given(variable=HOSTILE)
def test_hostile_variable_names_are_sanitised(variable: str) -> None:
    from rdflib.plugins.sparql import prepareQuery

    linked = LinkedConstants({"a": [NodeMatch(EX + "alien", "Alien", 1.0, "exact")]})
    triplets = Triplets("q", [Triplet(Term("variable", variable), "r", Term("constant", "a"))], variable, [],
                        "llm", [], [])
    options = ExecuteOptions(undirected=True)
    plan = prepare(triplets, linked, Schema(), options)
    query = compile_query(plan, plan.usable, options, tier=0, evidence=True).sparql
    prepareQuery(query)
    baseline_triplets = Triplets("q", [Triplet(Term("variable", "?x1"), "r", Term("constant", "a"))], "?x1",
                                 [], "llm", [], [])
    baseline_plan = prepare(baseline_triplets, linked, Schema(), options)
    baseline = compile_query(baseline_plan, baseline_plan.usable, options, tier=0, evidence=True).sparql
    assert re.fullmatch(r"v_[A-Za-z0-9_]+", variable_name(variable))
    assert query.replace(f"?{variable_name(variable)} ", "?v_x1 ").replace(f"?{variable_name(variable)})", "?v_x1)") \
        .replace(f"?{variable_name(variable)}\n", "?v_x1\n") == baseline


@settings(max_examples=50, deadline=None, database=None)
@given(text=HOSTILE)
def test_label_lookup_matches_only_the_literal_text(text: str) -> None:
    from rdflib.plugins.sparql import prepareQuery

    store = OxigraphStore.in_memory()
    target, other = NamedNode("http://x/target"), NamedNode("http://x/other")
    store.oxstore.add(Quad(target, RDFS.label, Literal(text)))
    store.oxstore.add(Quad(other, RDFS.label, Literal("zz other label")))
    query = label_lookup_query(text, [RDFS.label.value], limit=5)
    baseline = label_lookup_query("plain", [RDFS.label.value], limit=5)
    without_text = query.replace(str(Literal(text)), str(Literal("plain")))  # the text may hold " ." or VALUES
    assert query.count("\n") == baseline.count("\n") and without_text == baseline
    assert query.splitlines()[:4] == baseline.splitlines()[:4]
    prepareQuery(query)
    found = {row[0].value for row in store.query(query).rows if row[0] is not None}
    expected = {"http://x/target"} | ({"http://x/other"} if text.lower() == "zz other label" else set())
    assert found == expected


def test_distinct_terms_become_filters(kb: KnowledgeBase) -> None:
    """"actors of the films that share a director with Alien": the middle film is not Alien itself."""
    triplets = parse_arrow_triplets("'Alien' -> directed by -> ?d ; ?m -> directed by -> ?d ; "
                                    "?m -> starred actors -> |?1|", "q", kb.schema)
    linked = link_constants(triplets, kb)
    every = names(find_candidates(triplets, linked, kb, ExecuteOptions()))
    assert "sigourney_weaver" in every
    triplets.distinct = [("Alien", "?m")]
    found = find_candidates(triplets, linked, kb, ExecuteOptions())
    assert "sigourney_weaver" not in names(found) and "harrison_ford" in names(found)
    assert any("FILTER(?c0 != ?v_m)" in q.query for q in found.queries)
    assert Triplets.from_dict(triplets.to_dict()).distinct == [("Alien", "?m")]


def _found(*items: tuple[str, int]) -> Candidates:
    from sparqlqa.stages.execute import Candidate, Evidence

    return Candidates(None, [Candidate(iri, tier, 1, Evidence([])) for iri, tier in items])


@pytest.mark.parametrize(("items", "kept"), [
    ([("x", 0), ("a", 0), ("b", 1)], ["a", "b"]),  # another candidate satisfies x's tier: x goes
    ([("x", 0), ("a", 1), ("b", 2)], ["x", "a", "b"]),  # x alone satisfies every triplet: asked back
    ([("a", 0), ("x", 1)], ["a"]),  # a better candidate: x goes
    ([("x", 0)], ["x"]),  # nothing else
])
def test_named_nodes_are_dropped_only_when_another_candidate_satisfies_their_tier(
        items: list[tuple[str, int]], kept: list[str]) -> None:
    """'permission of permission of Martial_Arts's permission' on a KB where the chain returns
    Martial_Arts: the question's own node is its answer."""
    from sparqlqa.stages.execute import drop_constant_nodes

    found = _found(*items)
    drop_constant_nodes(found, LinkedConstants({"X": [NodeMatch("x", "X", 1.0, "exact")]}))
    assert [c.iri for c in found.items] == kept
    assert bool(found.notes) == (len(kept) < len(items))


def test_a_remote_member_s_service_is_declared_from_the_plan_not_read_from_the_text() -> None:
    from sparqlqa.query.sparql_reading import read_query

    endpoint = "http://localhost:8890/sparql"
    plan = prepare(_triplets("a", "b", "?x1", "directed by", ""),
                   LinkedConstants({"a": [NodeMatch(EX + "ridley_scott", "Ridley Scott", 1.0, "exact")], "b": []}),
                   Schema(), ExecuteOptions())
    assert compile_query(plan, plan.usable, ExecuteOptions(), tier=0).built().services == ()
    plan.patterns[plan.usable[0]].predicate = NamedNode(EX + "directed_by")
    plan.services = {EX + "directed_by": endpoint}
    for evidence in (False, True):
        compiled = compile_query(plan, plan.usable, ExecuteOptions(), tier=0, evidence=evidence)
        assert compiled.built().services == (endpoint,) and compiled.built().form == "SELECT"
        assert [call.iri for call in read_query(compiled.sparql).services] == [endpoint]
        holder = Candidates(target="x1", compiled=[compiled])
        assert set(holder.to_dict()["compiled"][0]) == {"sparql", "triplet_indexes", "tier", "note"}  # JSON as before
