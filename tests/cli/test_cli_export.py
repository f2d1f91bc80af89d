"""CLI: ``sparqlqa export`` (round trip, atomic file, formats) and ``sparql``'s CONSTRUCT/DESCRIBE formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import rdflib
from click.testing import CliRunner
from rdflib.compare import isomorphic

from sparqlqa.cli import main
from sparqlqa.cli.export_commands import FORMATS
from sparqlqa.kb.export import EXPORT_FORMATS

SOURCE = """\
@prefix dbo: <http://dbpedia.org/ontology/> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> .
@prefix ex: <http://example.org/> .
ex:Alien a dbo:Film ; dbo:director ex:RidleyScott ; ex:title "Alien"@en ; ex:year 1979 ;
  ex:cast [ ex:actor ex:Sigourney ; ex:role "Ripley" ] .
ex:RidleyScott a dbo:Person ; foaf:name "Ridley Scott" .
"""


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def films(tmp_path: Path) -> Path:
    path = tmp_path / "films.ttl"
    path.write_text(SOURCE, encoding="utf-8")
    code, out, _ = run("ingest", str(path), "--kb", "films", "--json")
    assert code == 0, out
    return path


def test_the_cli_knows_every_export_format() -> None:
    assert set(FORMATS) == set(EXPORT_FORMATS)


def test_export_round_trip_is_isomorphic(films: Path, tmp_path: Path) -> None:
    target = tmp_path / "out" / "films.ttl"
    code, out, err = run("export", "films", "-o", str(target), "--source-only", "--json")
    assert code == 0, out + err
    report = json.loads(out)
    assert report["triples"] == 9 and report["format"] == "turtle" and report["source_only"] is True
    text = target.read_text("utf-8")
    assert "@prefix dbo: <http://dbpedia.org/ontology/> ." in text and "dbo:director" in text
    exported = rdflib.Graph().parse(data=text, format="turtle")
    assert isomorphic(exported, rdflib.Graph().parse(data=SOURCE, format="turtle"))
    assert [p.name for p in target.parent.iterdir()] == ["films.ttl"]  # no temporary file left


def test_export_to_stdout_with_the_format_from_the_option(films: Path) -> None:
    code, out, err = run("export", "films", "--format", "nt")
    assert code == 0, err
    graph = rdflib.Graph().parse(data=out, format="nt")
    assert (rdflib.URIRef("https://sparqlqa.dev/ns#text"), rdflib.RDF.type, rdflib.OWL.DatatypeProperty) in graph
    assert "exported" in err


def test_a_failed_export_leaves_the_old_file(films: Path, tmp_path: Path) -> None:
    target = tmp_path / "keep.nq"
    target.write_text("old\n", encoding="utf-8")
    code, _out, err = run("export", "films", "-o", str(target), "--graph", "http://example.org/nope")
    assert code == 2 and "no graph named" in err and "Traceback" not in err
    assert target.read_text("utf-8") == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".keep")) == []


def test_json_without_a_file_is_refused(films: Path) -> None:
    code, out, _err = run("export", "films", "--json")
    assert code == 2 and "needs -o" in json.loads(out)["error"]


def test_export_of_an_unknown_kb(tmp_path: Path) -> None:
    code, _, err = run("export", "nope", "-o", str(tmp_path / "x.ttl"))
    assert code != 0 and "no knowledge base named 'nope'" in err and not (tmp_path / "x.ttl").exists()


def test_sparql_construct_formats(films: Path) -> None:
    query = "CONSTRUCT { ?f dbo:director ?d } WHERE { ?f <http://dbpedia.org/ontology/director> ?d }"
    query = "PREFIX dbo: <http://dbpedia.org/ontology/>\n" + query
    code, out, err = run("sparql", "films", query, "--format", "turtle")
    assert code == 0, err
    graph = rdflib.Graph().parse(data=out, format="turtle")
    assert list(graph) == [(rdflib.URIRef("http://example.org/Alien"), rdflib.URIRef("http://dbpedia.org/ontology/director"),
                            rdflib.URIRef("http://example.org/RidleyScott"))]
    code, out, _ = run("sparql", "films", query, "--format", "jsonld")
    assert code == 0 and len(rdflib.Graph().parse(data=out, format="json-ld")) == 1
    code, out, _ = run("sparql", "films", "DESCRIBE <http://example.org/RidleyScott>", "--format", "nt")
    assert code == 0 and len(rdflib.Graph().parse(data=out, format="nt")) == 2
    code, _, err = run("sparql", "films", "SELECT * WHERE { ?s ?p ?o }", "--format", "turtle")
    assert code == 2 and "CONSTRUCT or DESCRIBE" in err


def test_sparql_syntax_error_shows_line_column_and_caret(films: Path) -> None:
    query = "SELECT ?d WHERE {\n  ?f rdfs:label ?l .\n  ?f <http://dbpedia.org/ontology/director> ?d\n"
    code, _, err = run("sparql", "films", query)
    assert code == 1 and "Traceback" not in err
    assert "error: invalid SPARQL at line 1, column 17: this '{' is never closed" in err
    assert "  1 | SELECT ?d WHERE {\n    |                 ^" in err
    code, out, _ = run("sparql", "films", "SELECT * WHERE { ?s nosuch:p ?o }", "--json")
    body = json.loads(out)
    assert code == 1 and "unknown prefix 'nosuch:'" in body["error"] and "nosuch" in body["hint"]


def test_the_files_own_prefixes_need_no_declaration_in_queries(films: Path) -> None:
    """``ex:`` is declared only in the user's Turtle file; ``foaf:`` only in the well-known table."""
    code, out, err = run("sparql", "films", "SELECT ?n WHERE { ex:RidleyScott foaf:name ?n }", "--json")
    assert code == 0, out + err
    assert [b["n"]["value"] for b in json.loads(out)["results"]["bindings"]] == ["Ridley Scott"]
    code, out, err = run("sparql", "films", "SELECT ?n WHERE { nosuch:x foaf:name ?n }")
    assert code != 0 and "unknown prefix 'nosuch:'" in out + err
