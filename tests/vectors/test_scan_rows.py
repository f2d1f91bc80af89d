"""A KB's own whole-KB scans (the node index's labels, types and documents) stream their rows
(``Store.scan_rows``): the same rows as ``query``, read one at a time outside a bounded scope."""

from __future__ import annotations

from typing import Any

import pytest

from sparqlqa.kb.store import OxigraphStore
from sparqlqa.query.built_query import BuiltQuery
from sparqlqa.query.limits import QueryLimits, bounded

SCAN = BuiltQuery.select("SELECT ?s ?l WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?l }")


@pytest.fixture
def store() -> OxigraphStore:
    store = OxigraphStore.in_memory()
    rows = " ".join(f'<urn:n{i}> <http://www.w3.org/2000/01/rdf-schema#label> "node {i}" .' for i in range(50))
    store.oxstore.update(f"INSERT DATA {{ {rows} }}")
    return store


def test_scanned_rows_are_the_query_rows(store: OxigraphStore) -> None:
    assert sorted(store.scan_rows(SCAN), key=str) == sorted(store.query(SCAN).rows, key=str)
    with bounded(QueryLimits(timeout_s=30)):  # a bounded scope: the query's own rows (its limits kept)
        assert sorted(store.scan_rows(SCAN), key=str) == sorted(store.query(SCAN).rows, key=str)


def test_rows_are_read_one_at_a_time(store: OxigraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_list(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the rows were gathered into a result")

    monkeypatch.setattr(store, "_execute_here", no_list)
    rows = store.scan_rows(SCAN)
    first = next(rows)
    assert first[0].value.startswith("urn:n") and len(list(rows)) == 49

