"""A table's columns: what each holds is a :class:`ColumnKind`, written in JSON as its plain word."""

from __future__ import annotations

import json

import pytest

from sparqlqa.stages.modes import ColumnKind
from sparqlqa.stages.table import Column, Table


def test_a_column_kind_given_as_its_word_is_the_mode() -> None:
    column = Column("person", "node")  # JSON and older callers give the word
    assert column.kind is ColumnKind.NODE
    assert Column("age").kind is ColumnKind.VALUE


def test_an_unknown_column_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="'nodes' is not a valid ColumnKind"):
        Column("person", "nodes")


def test_the_json_names_each_kind_by_its_word() -> None:
    table = Table.of_keys("film", ["http://x/alien"])
    assert Table.of_count(3).columns[0].kind is ColumnKind.AGGREGATE
    assert json.dumps(table.to_dict()["columns"]) == '[{"name": "film", "kind": "node"}]'
