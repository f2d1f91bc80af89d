"""Export and ``KnowledgeBase.to_rdflib``: a KB back out as RDF, round trip isomorphic to the source."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import rdflib
from rdflib.compare import isomorphic

from sparqlqa.errors import ConfigError, KBError, UnknownNameError
from sparqlqa.ingest import ingest
from sparqlqa.kb.export import ADDED_FILE, export_prefixes, ingest_additions, write_rdf

SOURCE = """\
@prefix dbo: <http://dbpedia.org/ontology/> .
@prefix ex: <http://example.org/> .
@prefix : <http://example.org/default#> .
ex:Alien a dbo:Film ; dbo:director ex:RidleyScott ; ex:title "Alien"@en , "Alien" ; ex:year 1979 ;
  ex:cast [ ex:actor ex:Sigourney ; ex:role "Ripley" ] .
ex:RidleyScott a dbo:Person ; :name "Ridley Scott" ; ex:born "1937-11-30"^^<http://www.w3.org/2001/XMLSchema#date> .
"""

TRIG = """\
@prefix ex: <http://example.org/> .
ex:g1 { ex:a ex:p ex:b . }
ex:g2 { ex:c ex:p "two" . }
ex:d ex:p ex:e .
"""


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "films.ttl"
    path.write_text(SOURCE, encoding="utf-8")
    return path


def parsed(text: str | bytes, fmt: str = "turtle") -> rdflib.Graph:
    return rdflib.Graph().parse(data=text, format=fmt)


def test_ingest_remembers_the_source_prefixes(source: Path) -> None:
    kb = ingest([source], kb="films")
    assert kb.manifest.prefixes == {"dbo": "http://dbpedia.org/ontology/", "ex": "http://example.org/",
                                    "": "http://example.org/default#"}


def test_to_rdflib_source_only_is_isomorphic_to_the_source(source: Path) -> None:
    kb = ingest([source], kb="films")
    graph = kb.to_rdflib(source_only=True)
    assert isomorphic(graph, parsed(SOURCE))
    assert dict(graph.namespaces())["dbo"] == rdflib.URIRef("http://dbpedia.org/ontology/")


def test_without_source_only_the_core_vocabulary_comes_too(source: Path) -> None:
    kb = ingest([source], kb="films")
    graph = kb.to_rdflib()
    assert not isomorphic(graph, parsed(SOURCE))
    assert (rdflib.URIRef("https://sparqlqa.dev/ns#text"), rdflib.RDF.type, rdflib.OWL.DatatypeProperty) in graph
    assert len(graph) == len(parsed(SOURCE)) + len(ingest_additions(kb))


def test_turtle_export_uses_the_files_own_prefixes_and_round_trips(source: Path) -> None:
    kb = ingest([source], kb="films")
    out = io.BytesIO()
    report = write_rdf(kb.store.oxstore, out, "turtle", prefixes=export_prefixes(kb.manifest.prefixes),
                       skip=ingest_additions(kb))
    text = out.getvalue().decode()
    assert "@prefix dbo: <http://dbpedia.org/ontology/> ." in text
    assert "dbo:director" in text and ":name" in text
    assert report.triples == len(parsed(SOURCE))
    assert isomorphic(parsed(text), parsed(SOURCE))


def test_a_source_triple_that_the_core_vocabulary_also_holds_is_kept(tmp_path: Path) -> None:
    own = ('<https://sparqlqa.dev/ns#text> <http://www.w3.org/2000/01/rdf-schema#label> "text" .\n'
           '<http://e/a> <http://e/p> "x" .\n')
    path = tmp_path / "own.nt"
    path.write_text(own, encoding="utf-8")
    kb = ingest([path], kb="own")
    assert isomorphic(kb.to_rdflib(source_only=True), parsed(own, "nt"))


@pytest.mark.parametrize("fmt", ["nq", "trig", "jsonld"])
def test_dataset_formats_keep_named_graphs(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / "data.trig"
    path.write_text(TRIG, encoding="utf-8")
    kb = ingest([path], kb="graphs")
    out = io.BytesIO()
    write_rdf(kb.store.oxstore, out, fmt, skip=ingest_additions(kb))
    dataset = rdflib.Dataset()
    dataset.parse(data=out.getvalue(), format={"nq": "nquads", "trig": "trig", "jsonld": "json-ld"}[fmt])
    expected = rdflib.Dataset()
    expected.parse(data=TRIG, format="trig")
    assert sorted(map(str, dataset.quads())) == sorted(map(str, expected.quads()))


def test_one_graph_only(tmp_path: Path) -> None:
    path = tmp_path / "data.trig"
    path.write_text(TRIG, encoding="utf-8")
    kb = ingest([path], kb="graphs")
    out = io.BytesIO()
    assert write_rdf(kb.store.oxstore, out, "nt", graph="http://example.org/g2").triples == 1
    assert out.getvalue() == b'<http://example.org/c> <http://example.org/p> "two" .\n'
    with pytest.raises(ConfigError, match="no graph named") as caught:
        write_rdf(kb.store.oxstore, io.BytesIO(), "nt", graph="http://example.org/nope")
    assert "http://example.org/g1" in (caught.value.hint or "")
    default = io.BytesIO()
    write_rdf(kb.store.oxstore, default, "nt", graph="default", skip=ingest_additions(kb))
    assert default.getvalue() == b"<http://example.org/d> <http://example.org/p> <http://example.org/e> .\n"


def test_unknown_format_lists_the_choices(source: Path) -> None:
    kb = ingest([source], kb="films")
    with pytest.raises(UnknownNameError, match="export format"):
        write_rdf(kb.store.oxstore, io.BytesIO(), "rdfxml")


def test_source_only_on_a_kb_built_before_additions_were_recorded(source: Path) -> None:
    kb = ingest([source], kb="films")
    assert kb.directory is not None
    (kb.directory / ADDED_FILE).unlink()
    with pytest.raises(KBError, match="built before") as caught:
        kb.to_rdflib(source_only=True)
    assert "--replace" in (caught.value.hint or "")


def test_kb_to_graph_still_works(kb) -> None:  # type: ignore[no-untyped-def]
    from sparqlqa.ingest.rdflib_interop import kb_to_graph

    graph = kb_to_graph(kb)
    assert len(graph) == len(kb.store)


def test_a_remote_kb_is_not_exported_from_here() -> None:
    from types import SimpleNamespace

    from sparqlqa.kb.export import oxigraph_of
    from sparqlqa.kb.store import Store

    class Remote(Store):
        kind = "endpoint"

        def _execute(self, sparql: str, form: str):  # type: ignore[no-untyped-def]
            raise AssertionError("nothing is sent")

        def describe(self) -> str:
            return "endpoint:http://127.0.0.1:1/sparql"

    with pytest.raises(KBError, match="is a remote endpoint") as caught:
        oxigraph_of(SimpleNamespace(name="wd", directory=None, store=Remote()))  # type: ignore[arg-type]
    assert "CONSTRUCT" in (caught.value.hint or "")


def test_source_only_leaves_out_an_ontology_given_at_ingest(source: Path, tmp_path: Path) -> None:
    ontology = tmp_path / "labels.ttl"
    ontology.write_text('<http://dbpedia.org/ontology/director> <http://www.w3.org/2000/01/rdf-schema#label> '
                        '"directed by" .\n', encoding="utf-8")
    kb = ingest([source], kb="films", ontologies=[ontology])
    label = (rdflib.URIRef("http://dbpedia.org/ontology/director"), rdflib.RDFS.label, rdflib.Literal("directed by"))
    assert label in kb.to_rdflib()
    assert isomorphic(kb.to_rdflib(source_only=True), parsed(SOURCE))
