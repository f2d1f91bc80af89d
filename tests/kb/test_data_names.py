"""Names found in the data (issue 35 item 1): a graph mapped from tables names its rows in columns."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparqlqa.ingest import ingest
from sparqlqa.kb.data_names import DataName
from sparqlqa.kb.labels import LabelIndex
from sparqlqa.kb.node_text import fetch_labels
from sparqlqa.kb.profile import DEFAULT_PROFILE

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "library_db.nt"
DB = "http://db.example/"


@pytest.fixture
def library():  # type: ignore[no-untyped-def]
    return ingest([FIXTURE], kb="library")


def test_ingest_finds_naming_and_key_columns(library) -> None:  # type: ignore[no-untyped-def]
    found = {(n.type_iri, n.predicate, n.kind) for n in map(DataName.from_dict, library.manifest.extra["data_names"])}
    assert (f"{DB}library", f"{DB}library#name", "name") in found
    assert (f"{DB}book", f"{DB}book#title", "name") in found
    assert (f"{DB}book", f"{DB}book#code", "key") in found
    assert (f"{DB}book", f"{DB}book#author", "name") not in found  # not a name word, and not unique
    assert not any(p == f"{DB}library#city" for _, p, _ in found)
    assert library.schema.label_predicates[-2:] == [f"{DB}book#title", f"{DB}library#name"]


def test_rows_are_named_and_linked_by_their_column(library) -> None:  # type: ignore[no-untyped-def]
    labels, _ = fetch_labels(library, [f"{DB}library/library_id=2", f"{DB}book/book_id=4"])
    assert labels[f"{DB}library/library_id=2"] == "Harbour Library"
    assert labels[f"{DB}book/book_id=4"] == "Paper Moons"
    assert [m.iri for m in LabelIndex.for_kb(library).exact("the quiet sea")] == [f"{DB}book/book_id=1"]


def test_name_predicate_given_replaces_the_search() -> None:
    from dataclasses import replace

    kb = ingest([FIXTURE], kb="library2", profile=replace(DEFAULT_PROFILE, name_predicates=(f"{DB}book#author",)))
    assert kb.schema.label_predicates[-1] == f"{DB}book#author"
    assert f"{DB}library#name" not in kb.schema.label_predicates


def test_ingest_reports_the_names(runner) -> None:  # type: ignore[no-untyped-def]
    from sparqlqa.cli import main

    result = runner.invoke(main, ["ingest", str(FIXTURE), "--kb", "lib"])
    assert result.exit_code == 0, result.output
    assert "library: names from library#name" in result.output
    assert "book: identified by book#code" in result.output


def test_a_labelled_kb_gets_no_names_from_its_data(movies_ttl: Path) -> None:
    kb = ingest([movies_ttl], kb="movies")
    assert kb.manifest.extra["data_names"] == []
    from sparqlqa.strategies.offline.tables.model_file import table_model

    assert table_model(kb) is None  # the offline strategy reads it as before


@pytest.mark.parametrize("name", ["books", "companies", "football", "music", "recipes", "research"])
def test_the_user_style_sets_are_read_as_before(name: str) -> None:
    """Their nodes have labels: no names from the data, so the offline strategy's answers there stay as pinned
    by bench_forms (benchmarks/RESULTS.md)."""
    data = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / f"forms_{name}.ttl"
    kb = ingest([data], kb=name)
    assert kb.manifest.extra["data_names"] == []


def test_ingest_name_predicate_option(runner) -> None:  # type: ignore[no-untyped-def]
    from sparqlqa.cli import main
    from sparqlqa.kb.knowledge_base import open_kb

    result = runner.invoke(main, ["ingest", str(FIXTURE), "--kb", "lib", "--name-predicate", f"{DB}book#author"])
    assert result.exit_code == 0, result.output
    assert open_kb("lib").schema.label_predicates[-1] == f"{DB}book#author"
    assert "book: names from" not in result.output and "book#author" in result.output  # given, not searched
