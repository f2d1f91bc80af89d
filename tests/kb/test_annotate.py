"""Adding an ontology file's labels to a built KB (``sparqlqa kbs annotate``): the offline lever without
re-ingesting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sparqlqa.cli import main
from sparqlqa.embed.embedders import get_embedder
from sparqlqa.errors import IngestError
from sparqlqa.ingest import ingest
from sparqlqa.kb.knowledge_base import KnowledgeBase, open_kb
from sparqlqa.kb.ontologies import annotate_kb
from sparqlqa.strategies.ask import ask
from sparqlqa.strategies.offline.strategy import relation_vectors

REL = "https://sparqlqa.dev/kb/films/relation/"
LABELS = f"""@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
<https://sparqlqa.dev/kb/films> rdfs:label "my labels for films" ; a <http://www.w3.org/2002/07/owl#Ontology> .
<{REL}has_tags> skos:altLabel "keywords" ; rdfs:comment "Words that describe the film." .
<{REL}has_tagz> skos:altLabel "typo" .
"""


@pytest.fixture
def films(tmp_path: Path) -> KnowledgeBase:
    source = tmp_path / "kb.txt"
    source.write_text("Alien|has_tags|space\nAlien|in_language|English\nAlien|directed_by|Ridley Scott\n",
                      encoding="utf-8")
    return ingest([source], kb="films", format="triples", options={"sep": "|"})


def test_annotating_adds_aliases_and_reports_unknown_iris(films: KnowledgeBase, tmp_path: Path) -> None:
    labels = tmp_path / "labels.ttl"
    labels.write_text(LABELS, encoding="utf-8")
    kb, unknown = annotate_kb("films", [labels])
    tags = kb.schema.relation("has_tags")
    assert tags is not None and tags.aliases == ["keywords"] and tags.comment == "Words that describe the film."
    assert tags.label == "has tags"  # the file gave no rdfs:label: the old one stays
    assert unknown == [f"{REL}has_tagz"]  # the ontology's own header is not reported
    assert open_kb("films").manifest.extra["ontologies"] == [str(labels.resolve())]
    assert kb.manifest.generation == films.manifest.generation  # no re-ingest


def test_the_offline_strategy_sees_new_labels_in_the_same_process(films: KnowledgeBase, tmp_path: Path) -> None:
    embedder = get_embedder("fake:4096")
    tags = f"{REL}has_tags"
    assert "keywords" not in relation_vectors(films, embedder).texts(tags, "forward")
    labels = tmp_path / "labels.ttl"
    labels.write_text(LABELS, encoding="utf-8")
    kb, _ = annotate_kb("films", [labels])
    assert "keywords" in relation_vectors(kb, embedder).texts(tags, "forward")
    answer = ask(kb, "what are the keywords of Alien", strategy="offline", k=3)
    assert answer.items[0].label == "space"


def test_wrong_iris_and_bad_turtle_fail_clearly(films: KnowledgeBase, tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.ttl"
    wrong.write_text('<https://example.org/has_tags> <http://www.w3.org/2004/02/skos/core#altLabel> "x" .\n')
    with pytest.raises(IngestError, match="describes none of the relations"):
        annotate_kb("films", [wrong])
    bad = tmp_path / "bad.ttl"
    bad.write_text("@prefix skos: <http://www.w3.org/2004/02/skos/core#> .\n<a> skos:altLabel .\n")
    result = CliRunner().invoke(main, ["kbs", "annotate", "films", str(bad)])
    assert result.exit_code != 0 and "bad.ttl:2" in result.output and "Traceback" not in result.output
    assert open_kb("films").schema.relation("has_tags").aliases == []  # type: ignore[union-attr]


def test_cli_annotate_json(films: KnowledgeBase, tmp_path: Path) -> None:
    labels = tmp_path / "labels.ttl"
    labels.write_text(LABELS, encoding="utf-8")
    result = CliRunner().invoke(main, ["kbs", "annotate", "films", str(labels), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["unknown"] == [f"{REL}has_tagz"]
    assert {"iri": f"{REL}has_tags", "label": "has tags", "aliases": ["keywords"]} in data["relations"]
    missing = CliRunner().invoke(main, ["kbs", "annotate", "nokb", str(labels)])
    assert missing.exit_code != 0 and "nokb" in missing.output and "Traceback" not in missing.output
