"""Relation paths: bounded enumeration on the KB, verbalisation from the ontology, scoring."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparqlqa.embed import get_embedder
from sparqlqa.ingest import ingest
from sparqlqa.kb import KnowledgeBase
from sparqlqa.offline.paths import (
    EXPAND_SAMPLE,
    Hop,
    QuestionScorer,
    RelationVectors,
    ScoringSettings,
    Unit,
    enumerate_paths,
    relation_texts,
    segmentations,
)

EX = "https://example.org/movies/"
REL = f"{EX}rel/"


def test_paths_both_directions_up_to_three_hops(movies_kb: KnowledgeBase) -> None:
    paths = {p.arrows(): p for p in enumerate_paths(movies_kb, f"{EX}ridley_scott")}
    assert "<-directed_by-" in paths
    assert "<-directed_by--starred_actors->" in paths
    assert "<-directed_by--starred_actors-><-starred_actors-" in paths
    assert paths["<-directed_by-"].count == 3  # Alien, Blade Runner, Gladiator
    assert max(len(p.hops) for p in paths.values()) == 3
    assert not any("type" in a or "label" in a for a in paths)  # only relations are walked
    assert len(enumerate_paths(movies_kb, f"{EX}ridley_scott", max_hops=1)) == 1


def test_hubs_are_expanded_from_a_bounded_sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [f"m{i}|has_genre|Drama\nm{i}|directed_by|d{i}\n" for i in range(EXPAND_SAMPLE * 3)]
    source = tmp_path / "kb.txt"
    source.write_text("".join(lines), encoding="utf-8")
    kb = ingest([source], kb="hub", format="triples", options={"sep": "|"})
    queries: list[str] = []
    original = kb.query
    monkeypatch.setattr(kb, "query", lambda q: queries.append(q) or original(q))
    start = kb.manifest.base_iri + "entity/Drama"
    paths = {p.arrows(): p for p in enumerate_paths(kb, start)}
    assert "<-has_genre--directed_by->" in paths
    assert len(queries) == 3  # one aggregate query per level, whatever the fan-out
    assert all(q.count("(1 ") <= EXPAND_SAMPLE for q in queries)


def test_relation_texts_come_from_the_ontology(movies_kb: KnowledgeBase) -> None:
    starred = movies_kb.schema.relation(f"{REL}starred_actors")
    assert starred is not None
    assert relation_texts(starred) == ["starred actors", "actor", "starring"]


def test_segmentations_offer_round_trips() -> None:
    out, back = Hop("r", forward=True), Hop("r", forward=False)
    cuts = segmentations((out, back, Hop("s")))
    assert (Unit("r", "round-trip-out"), Unit("s", "forward")) in cuts
    assert (Unit("r", "forward"), Unit("r", "backward"), Unit("s", "forward")) in cuts
    assert segmentations((back, out))[-1] == (Unit("r", "round-trip-in"),)


def _scores(kb: KnowledgeBase, question: str, start: str) -> dict[str, float]:
    scorer = QuestionScorer(question, RelationVectors(kb.schema, get_embedder("fake")), ScoringSettings())
    return {p.arrows(): scorer.score(p).score for p in enumerate_paths(kb, start)}


def test_every_hop_must_be_said(movies_kb: KnowledgeBase) -> None:
    one = _scores(movies_kb, "Which movies were directed by X?", f"{EX}ridley_scott")
    assert max(one, key=lambda a: one[a]) == "<-directed_by-"
    two = _scores(movies_kb, "Who is starring in the movies directed by X?", f"{EX}ridley_scott")
    assert max(two, key=lambda a: two[a]) == "<-directed_by--starred_actors->"


def test_better_labels_are_the_lever(tmp_path: Path) -> None:
    """A bare relation name says little; an ontology label and alias make the question match."""
    source = tmp_path / "kb.txt"
    source.write_text("Alien|dir|Ridley Scott\nAlien|cast|Sigourney Weaver\n", encoding="utf-8")
    question = "Which movies were directed by X?"
    bare = ingest([source], kb="bare", format="triples", options={"sep": "|"})
    plain = _scores(bare, question, bare.manifest.base_iri + "entity/Ridley%20Scott")
    ontology = tmp_path / "labels.ttl"
    base = "https://sparqlqa.dev/kb/labelled/relation/"
    ontology.write_text(f'<{base}dir> <http://www.w3.org/2004/02/skos/core#altLabel> "directed by", '
                        '"director" .\n', encoding="utf-8")
    better = ingest([source], kb="labelled", format="triples", options={"sep": "|"}, ontologies=[ontology])
    labelled = _scores(better, question, better.manifest.base_iri + "entity/Ridley%20Scott")
    assert labelled["<-dir-"] > plain["<-dir-"] + 0.2
