"""Typed records at the JSON edge: a query record's JSON form, and the deprecated dict-style reads."""

from __future__ import annotations

import json

import pytest

from sparqlqa.kb.records import QueryRecord
from sparqlqa.kb.store import OxigraphStore


def test_a_query_result_records_itself_with_the_keys_it_always_had() -> None:
    store = OxigraphStore.in_memory()
    record = store.query("SELECT ?s WHERE { ?s ?p ?o }").history()
    assert isinstance(record, QueryRecord) and record.rows == 0 and record.stage is None
    assert list(record.to_dict()) == ["query", "form", "rows", "elapsed_ms", "store"]
    ran = record.at("labels")
    assert ran.stage == "labels" and record.stage is None  # a copy: the stage's record, not the result's
    assert list(ran.to_dict()) == ["query", "form", "rows", "elapsed_ms", "store", "stage"]


def test_fiskes_direction_comes_before_the_stage() -> None:
    record = QueryRecord("ASK {}", form="ASK", direction="out").at("fiske")
    assert json.dumps(record.to_dict()) == ('{"query": "ASK {}", "form": "ASK", "rows": 0, "elapsed_ms": 0.0, '
                                           '"store": "", "direction": "out", "stage": "fiske"}')


def test_dict_style_reads_still_work_and_say_they_are_deprecated() -> None:
    record = QueryRecord("ASK {}", form="ASK", rows=1).at("sparql")
    with pytest.warns(DeprecationWarning, match=r"QueryRecord\['query'\].*use the attribute"):
        assert record["query"] == "ASK {}"
    with pytest.warns(DeprecationWarning):
        assert record.get("stage") == "sparql" and record.get("direction", "none") == "none"
    assert "rows" in record and "direction" not in record and next(iter(record.keys())) == "query"
    with pytest.raises(KeyError), pytest.warns(DeprecationWarning):
        record["nope"]
