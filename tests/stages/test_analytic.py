"""The analytical fields of the triplet JSON (issue 34 item 3) and their query, built from terms."""

from __future__ import annotations

import pytest

from sparqlqa.errors import QueryError
from sparqlqa.kb.schema import RelationInfo, Schema, TypeInfo
from sparqlqa.stages.analytic import compile_analytic, wants_analytic
from sparqlqa.stages.forms import Aggregate, AnswerForm, form_from_data
from sparqlqa.stages.linking import LinkedConstants
from sparqlqa.stages.triplets import Triplets, triplets_from_data

D = "http://d/"
SCHEMA = Schema(types=[TypeInfo(D + "singer", "singer", 3), TypeInfo(D + "concert", "concert", 2)],
                relations=[RelationInfo(D + "singer#name", "name", 3, kind="literal"),
                           RelationInfo(D + "singer#age", "age", 3, kind="literal"),
                           RelationInfo(D + "singer#country", "country", 3, kind="literal"),
                           RelationInfo(D + "concert#singer", "singer", 2)])


def triplets(data: dict) -> Triplets:
    return triplets_from_data(data, "q", SCHEMA)


def test_the_form_reads_columns_aggregates_groups_leniently() -> None:
    form, notes = form_from_data({"form": "table", "select": ["n", "?x1", 3], "group_by": "?x2",
                                  "aggregates": [{"function": "AVG", "variable": "v"}, {"function": "median"}]})
    assert form.select == ["?n", "?x1", "?3"] and form.group_by == ["?x2"] and form.analytic
    assert form.aggregates == [Aggregate("avg", "?v")] and form.form == "list"
    assert len(notes) == 1 and "median" in notes[0]
    assert AnswerForm.from_dict(form.to_dict()) == form
    assert not form_from_data({"form": "list"})[0].analytic


def test_a_negated_triplet_round_trips_and_the_plain_compiler_skips_it() -> None:
    from sparqlqa.stages.compile import ExecuteOptions, prepare

    t = triplets({"triplets": [{"head": "?x1", "relation": "name", "tail": "?n"},
                               {"head": "?c", "relation": "singer", "tail": "?x1", "negated": True}], "target": "?n"})
    assert [tr.negated for tr in Triplets.from_dict(t.to_dict()).triplets] == [False, True]
    assert str(t.triplets[1]).startswith("not ")
    plan = prepare(t, LinkedConstants(), SCHEMA, ExecuteOptions())
    assert plan.skipped == [1] and wants_analytic(t, tables=False)


def test_names_ages_of_singers_from_a_country_with_a_quote_in_it() -> None:
    t = triplets({"triplets": [{"head": {"kind": "variable", "text": "?x1", "type": "singer"}, "relation": "name",
                                "tail": "?n"},
                               {"head": "?x1", "relation": "age", "tail": "?a"},
                               {"head": "?x1", "relation": "country", "tail": 'Fr") } DROP ALL #'}],
                  "target": "?x1", "select": ["?n", "?a"]})
    query = compile_analytic(t, LinkedConstants(), SCHEMA)
    assert query.columns == ["v_n", "v_a"] and not query.aggregates
    assert '"fr\\") } drop all #"' in query.sparql  # a literal term, escaped, never pasted
    assert f"?v_x1 <{D}singer#age> ?v_a ." in query.sparql and f"?v_x1 a <{D}singer> ." not in query.sparql


def test_per_group_counts_ordered_with_a_limit_and_a_negated_pattern() -> None:
    t = triplets({"triplets": [{"head": "?c", "relation": "singer", "tail": "?x1"},
                               {"head": "?x1", "relation": "name", "tail": "?n"},
                               {"head": "?x1", "relation": "age", "tail": "?a"},
                               {"head": "?x1", "relation": "country", "tail": "France", "negated": True}],
                  "target": "?x1", "select": ["?n", "?c"], "aggregates": [{"function": "count", "variable": "?c"},
                                                                         {"function": "max", "variable": "?a"}],
                  "group_by": ["?x1"], "order_by": [{"variable": "?c"}], "limit": 3})
    query = compile_analytic(t, LinkedConstants(), SCHEMA)
    assert query.columns == ["v_n", "count_c", "max_a"] and query.ordered
    assert query.aggregates == {"count_c": "count", "max_a": "max"}
    sparql = query.sparql
    assert "(COUNT(DISTINCT ?v_c) AS ?count_c)" in sparql and "GROUP BY ?v_x1 ?v_n" in sparql
    assert "FILTER NOT EXISTS {" in sparql and sparql.endswith("ORDER BY DESC(?count_c)\nLIMIT 3")


def test_a_constant_naming_no_node_cannot_be_compiled() -> None:
    t = triplets({"triplets": [{"head": "?c", "relation": "singer", "tail": "Nobody"}], "target": "?c",
                  "form": "count"})
    assert wants_analytic(t, tables=False) is False  # a plain count keeps the usual compiler
    with pytest.raises(QueryError):
        compile_analytic(t, LinkedConstants(), SCHEMA)


SINGER_CONCERTS = [{"head": "?c", "relation": "singer", "tail": "?x1"},
                   {"head": "?x1", "relation": "name", "tail": "?n"},
                   {"head": "?x1", "relation": "age", "tail": "?a"}]


def test_a_ranking_on_a_count_shows_the_count_as_the_last_column() -> None:
    """"The singer with the most concerts": ordered by a computed figure with a limit, the figure is shown
    (issue 34); an order on a node variable the groups leave out is the count of it."""
    implicit = compile_analytic(triplets({"triplets": SINGER_CONCERTS, "target": "?x1", "select": ["?n"],
                                          "group_by": ["?x1"], "order_by": [{"variable": "?c"}], "limit": 1}),
                                LinkedConstants(), SCHEMA)
    assert implicit.columns == ["v_n", "count"] and implicit.aggregates == {"count": "count"}
    assert "(COUNT(DISTINCT ?v_c) AS ?count)" in implicit.sparql and "GROUP BY ?v_x1 ?v_n" in implicit.sparql
    assert implicit.sparql.endswith("ORDER BY DESC(?count)\nLIMIT 1")
    listed = compile_analytic(triplets({"triplets": SINGER_CONCERTS, "target": "?x1", "select": ["?n"],
                                        "aggregates": [{"function": "count", "variable": "?c"},
                                                       {"function": "max", "variable": "?a"}],
                                        "group_by": ["?x1"], "order_by": [{"variable": "?c"}], "limit": 2}),
                              LinkedConstants(), SCHEMA)
    assert listed.columns == ["v_n", "max_a", "count_c"]  # the ranking's figure last


def test_no_limit_or_a_stored_value_order_adds_no_column() -> None:
    unlimited = compile_analytic(triplets({"triplets": SINGER_CONCERTS, "target": "?x1", "select": ["?n"],
                                           "group_by": ["?x1"], "order_by": [{"variable": "?c"}]}),
                                 LinkedConstants(), SCHEMA)
    assert unlimited.columns == ["v_n"] and "GROUP BY ?v_x1 ?v_n" in unlimited.sparql
    assert unlimited.sparql.endswith("ORDER BY DESC(COUNT(DISTINCT ?v_c))")
    listed = compile_analytic(triplets({"triplets": SINGER_CONCERTS, "target": "?x1", "select": ["?n"],
                                        "aggregates": [{"function": "count", "variable": "?c"},
                                                       {"function": "max", "variable": "?a"}],
                                        "group_by": ["?x1"], "order_by": [{"variable": "?c"}]}),
                              LinkedConstants(), SCHEMA)
    assert listed.columns == ["v_n", "count_c", "max_a"]  # as listed: no ranking, no move
    oldest = compile_analytic(triplets({"triplets": SINGER_CONCERTS[1:], "target": "?x1", "select": ["?n"],
                                        "order_by": [{"variable": "?a"}], "limit": 1}), LinkedConstants(), SCHEMA)
    assert oldest.columns == ["v_n"] and not oldest.aggregates and "GROUP BY" not in oldest.sparql
