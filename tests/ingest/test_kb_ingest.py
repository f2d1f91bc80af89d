"""Ingestion: formats, atomicity, malformed input, schema, manifest."""

from __future__ import annotations

import bz2
import gzip
from pathlib import Path

import pytest

from sparqlqa.errors import IngestError, InvalidKBName, KBExists, KBNotFound
from sparqlqa.ingest import ingest
from sparqlqa.kb.knowledge_base import kb_exists, list_kbs, open_kb, remove_kb

TURTLE = """@prefix ex: <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:alien a ex:Movie ; rdfs:label "Alien" ; ex:directedBy ex:scott .
ex:scott a ex:Person ; rdfs:label "Ridley Scott" .
"""


def count(kb_name: str) -> int:
    rows = open_kb(kb_name).query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }").rows
    return int(rows[0][0].value)  # type: ignore[union-attr]


def test_turtle_ingest_builds_manifest_and_schema(tmp_path: Path) -> None:
    src = tmp_path / "films.ttl"
    src.write_text(TURTLE)
    kb = ingest([src], kb="films")
    manifest = kb.manifest
    assert manifest.name == "films" and manifest.sparqlqa_version and manifest.created_at
    assert manifest.sources[0]["path"] == str(src.resolve())
    assert {t.label for t in kb.schema.types} == {"movie", "person"}
    rel = kb.schema.relation("directedBy")
    assert rel is not None and rel.label == "directed by" and rel.count == 1
    assert rel.pairs == [("http://example.org/Movie", "http://example.org/Person", 1)]
    assert "http://www.w3.org/2000/01/rdf-schema#label" in kb.schema.label_predicates
    assert [m.name for m in list_kbs()] == ["films"]


@pytest.mark.parametrize("opener,suffix", [(gzip.open, ".nt.gz"), (bz2.open, ".nt.bz2"), (open, ".nt")])
def test_compressed_ntriples(tmp_path: Path, opener, suffix: str) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / f"data{suffix}"
    with opener(src, "wt") as handle:
        for i in range(100):
            handle.write(f"<http://e/n{i}> <http://e/p> <http://e/n{i + 1}> .\n")
    ingest([src], kb="chain")
    assert open_kb("chain").query("ASK { <http://e/n0> <http://e/p> <http://e/n1> }").boolean
    assert open_kb("chain").schema.relation("http://e/p").count == 100  # type: ignore[union-attr]


def test_delimited_triples_metaqa_style(tmp_path: Path) -> None:
    src = tmp_path / "kb.txt"
    src.write_text("Kismet|directed_by|William Dieterle\nKismet|starred_actors|Marlene Dietrich\n"
                   "William Dieterle|directed_by_inverse|Kismet\n")
    kb = ingest([src], kb="mq", format="triples", options={"sep": "|"})
    labels = sorted(r.label for r in kb.schema.relations)
    assert labels == ["directed by", "directed by inverse", "starred actors"]
    result = kb.query('SELECT ?d WHERE { ?m rdfs:label "Kismet" ; ?p ?d . ?p rdfs:label "directed by" }'
                      .replace("rdfs:", "<http://www.w3.org/2000/01/rdf-schema#").replace('label "', 'label> "'))
    assert [t.value for t in result.column("d")] == ["https://sparqlqa.dev/kb/mq/entity/William%20Dieterle"]


def test_tab_separator_is_guessed(tmp_path: Path) -> None:
    src = tmp_path / "2H-kb.txt"
    src.write_text("the_godfather\tdirected_by\tfrancis_ford_coppola\n")
    kb = ingest([src], kb="pq", format="triples")
    assert kb.manifest.sources[0]["separator"] == "\t"


def test_delimited_error_names_file_and_line(tmp_path: Path) -> None:
    src = tmp_path / "bad.txt"
    src.write_text("a|r|b\n\nc|r\n")
    with pytest.raises(IngestError) as err:
        ingest([src], kb="bad", format="triples", options={"sep": "|"})
    assert f"{src}:3:" in str(err.value)
    assert not kb_exists("bad")


def test_malformed_turtle_keeps_existing_kb(tmp_path: Path) -> None:
    good = tmp_path / "good.ttl"
    good.write_text(TURTLE)
    ingest([good], kb="films")
    before = count("films")
    bad = tmp_path / "bad.ttl"
    bad.write_text(TURTLE + 'ex:x rdfs:label "unterminated .\nex:y ex:z ex:w .\n')
    with pytest.raises(IngestError) as err:
        ingest([bad], kb="films", replace=True)
    assert f"{bad}:5:" in str(err.value)
    assert count("films") == before
    assert open_kb("films").manifest.sources[0]["path"] == str(good.resolve())


def test_existing_kb_needs_replace(tmp_path: Path) -> None:
    src = tmp_path / "films.ttl"
    src.write_text(TURTLE)
    first = ingest([src], kb="films")
    with pytest.raises(KBExists):
        ingest([src], kb="films")
    second = ingest([src], kb="films", replace=True)
    assert second.manifest.generation != first.manifest.generation
    generations = [p for p in second.directory.parent.iterdir() if p.is_dir()]  # type: ignore[union-attr]
    assert generations == [second.directory]


def test_unknown_format_and_missing_file(tmp_path: Path) -> None:
    odd = tmp_path / "data.weird"
    odd.write_text("x")
    with pytest.raises(IngestError, match="cannot tell the format") as err:
        ingest([odd], kb="x")
    assert "--format" in (err.value.hint or "")
    with pytest.raises(IngestError, match="no such file"):
        ingest([tmp_path / "missing.ttl"], kb="x")


def test_names_and_removal(tmp_path: Path) -> None:
    with pytest.raises(InvalidKBName):
        ingest([tmp_path], kb="../evil")
    src = tmp_path / "films.ttl"
    src.write_text(TURTLE)
    ingest([src], kb="films")
    remove_kb("films")
    with pytest.raises(KBNotFound):
        open_kb("films")


def test_extra_ontology_labels_relations(tmp_path: Path) -> None:
    src = tmp_path / "films.ttl"
    src.write_text(TURTLE)
    onto = tmp_path / "onto.ttl"
    onto.write_text('<http://example.org/directedBy> <http://www.w3.org/2000/01/rdf-schema#label> "director of" .\n')
    kb = ingest([src], kb="films", ontologies=[onto])
    assert kb.schema.relation("directedBy").label == "director of"  # type: ignore[union-attr]
