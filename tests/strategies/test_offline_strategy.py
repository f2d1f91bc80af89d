"""The offline strategy end to end: same triplets as the LLM step, no LLM, explainable."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from sparqlqa.cli import main
from sparqlqa.ingest import ingest
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.labels import NodeMatch
from sparqlqa.stages.triplets import Term, Triplet
from sparqlqa.strategies.ask import NO_LLM_NOTE, ask
from sparqlqa.strategies.base import strategies
from sparqlqa.strategies.offline import OfflineTriplets, offline_triplets

EX = "https://example.org/movies/"
REL = f"{EX}rel/"


def _labels(answer_items: list) -> set[str]:  # type: ignore[type-arg]
    return {i.label for i in answer_items if i.source == "filtered"}


def test_registered_without_llm() -> None:
    offline = strategies.get("offline")
    assert offline.needs_llm is False and offline.rerank_enabled is False


def test_one_hop_triplets(movies_kb: KnowledgeBase) -> None:
    t = offline_triplets("Which movies were directed by Ridley Scott?", movies_kb)
    assert isinstance(t, OfflineTriplets) and t.source == "offline" and not t.llm_calls
    assert [(str(x.head.text), x.relation_iri, x.tail.text) for x in t.triplets] == [
        ("?x", f"{REL}directed_by", "Ridley Scott")]
    assert t.target == "?x" and 0 < t.triplets[0].confidence <= 1
    assert t.details.mentions[0].text == "Ridley Scott"
    assert t.details.paths["Ridley Scott"][0].arrows() == "<-directed_by-"
    assert t.to_dict()["offline"]["chosen"][0]["reading"].startswith("'Ridley Scott'")


def test_two_hops_end_to_end_with_evidence(movies_kb: KnowledgeBase) -> None:
    answer = ask(movies_kb, "Who directed the movies starring Harrison Ford?", strategy="offline", k=5)
    assert answer.strategy == "offline" and not answer.llm_calls
    assert _labels(answer.items) == {"Ridley Scott", "Peter Weir"}
    top = answer.items[0]
    assert top.tier == 0 and top.evidence is not None and len(top.evidence.triples) == 2
    assert [q.stage for q in answer.queries].count("sparql") >= 1
    assert answer.meta.offline.paths["Harrison Ford"][0].arrows() == "<-starred_actors--directed_by->"


def test_conjunction_of_two_mentions(movies_kb: KnowledgeBase) -> None:
    question = "Which movies directed by James Cameron starred Sigourney Weaver?"
    t = offline_triplets(question, movies_kb)
    assert {x.tail.text for x in t.triplets} == {"James Cameron", "Sigourney Weaver"}
    answer = ask(movies_kb, question, strategy="offline", k=5)
    assert _labels(answer.items) == {"Avatar", "Aliens"}


def test_the_named_node_is_not_its_own_answer(movies_kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    """A round trip (movies sharing an actor with Alien) reaches Alien too; it is left out."""
    import sparqlqa.strategies.offline.strategy as offline

    alien = Term("constant", "Alien")
    trip = OfflineTriplets(
        question="q", target="?x", requirements=[], source="offline", notes=[], llm_calls=[],
        triplets=[Triplet(alien, "starred actors", Term("variable", "?x1"), f"{REL}starred_actors"),
                  Triplet(Term("variable", "?x"), "starred actors", Term("variable", "?x1"), f"{REL}starred_actors")],
        links={"Alien": [NodeMatch(f"{EX}alien", "Alien", 1.0, "exact")]})
    monkeypatch.setattr(offline, "offline_triplets", lambda *a, **kw: trip)
    answer = ask(movies_kb, "Which movies have the same actor as Alien?", strategy="offline", k=5)
    assert _labels(answer.items) == {"Avatar", "Aliens"}
    assert any("left out" in n for n in answer.notes)


def test_nothing_named_degrades_to_vectors(movies_kb: KnowledgeBase) -> None:
    t = offline_triplets("what is the meaning of life", movies_kb)
    assert t.triplets == [] and "no KB node" in t.notes[0]
    answer = ask(movies_kb, "what is the meaning of life", strategy="offline", k=3)
    assert answer.items and all(i.source == "vector" for i in answer.items)


def test_default_without_llm_runs_offline(movies_kb: KnowledgeBase) -> None:
    answer = ask(movies_kb, "Which movies were directed by James Cameron?", k=5)
    assert answer.strategy == "offline" and NO_LLM_NOTE in answer.notes
    assert _labels(answer.items) == {"Avatar", "Aliens"}


def test_delimited_kb_never_seen_before(tmp_path: Path) -> None:
    source = tmp_path / "kb.txt"
    source.write_text("anne_smith\tspouse\tjohn_smith\njohn_smith\tnationality\tscotland\n"
                      "anne_smith\tnationality\twales\njohn_smith\tspouse\tanne_smith\n", encoding="utf-8")
    kb = ingest([source], kb="people", format="triples")
    answer = ask(kb, "what is the nationality of anne_smith 's spouse ?", strategy="offline", k=3)
    assert answer.items[0].label == "scotland"


def test_cli_ask_says_offline_and_shows_sparql(movies_kb: KnowledgeBase) -> None:
    result = CliRunner().invoke(main, ["ask", "movies", "Who directed the movies starring Harrison Ford?"])
    assert result.exit_code == 0, result.output
    assert "ran offline" in result.output and "SELECT" in result.output
    assert "Peter Weir" in result.output


@pytest.mark.slow
def test_real_model_two_hops(movies_kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sentence_transformers")
    monkeypatch.setenv("SPARQLQA_EMBEDDER", "sentence-transformers:all-MiniLM-L6-v2")
    answer = ask(movies_kb, "who directed the movies that Sigourney Weaver acted in", strategy="offline", k=5)
    assert _labels(answer.items) == {"Ridley Scott", "James Cameron"}
    assert os.environ["SPARQLQA_EMBEDDER"].startswith("sentence")


def test_a_lower_case_word_that_is_also_a_title_still_says_its_relation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """"who is the **writer** of Mad City": a film called "Writer" exists, but the word stays readable."""
    monkeypatch.setenv("SPARQLQA_EMBEDDER", "fake:4096")  # the small fake hashes "writer" like "directed"
    from sparqlqa.kb.labels import LabelIndex
    from sparqlqa.strategies.offline.mentions import detect_mentions
    from sparqlqa.strategies.offline.strategy import masked_for

    source = tmp_path / "kb.txt"
    source.write_text("Mad City|written_by|Tom Matthews\nMad City|directed_by|Costa Gavras\n"
                      "Writer|directed_by|Ann Lee\n", encoding="utf-8")
    kb = ingest([source], kb="titles", format="triples", options={"sep": "|"})
    question = "who is the writer of Mad City"
    mentions = detect_mentions(question, LabelIndex.for_kb(kb))
    assert {m.text for m in mentions} == {"writer", "Mad City"}
    city = next(m for m in mentions if m.text == "Mad City")
    assert masked_for(question, mentions, [city])[0] == "who is the writer of X"
    writer = next(m for m in mentions if m.text == "writer")
    assert masked_for(question, mentions, [writer])[0] == "who is the X of X"  # names stay hidden
    answer = ask(kb, question, strategy="offline", k=3)
    assert answer.items[0].label == "Tom Matthews"


@pytest.mark.slow
def test_real_model_reads_what_kind_of_film_as_its_genre(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On an untyped KB, "what kind of film is X" asks for a genre: "kind" alone is nearer "language"
    under MiniLM, "kind of film" is nearest "genre of film"."""
    pytest.importorskip("sentence_transformers")
    monkeypatch.setenv("SPARQLQA_EMBEDDER", "sentence-transformers:all-MiniLM-L6-v2")
    source = tmp_path / "kb.txt"
    source.write_text("Broken Sky|has_genre|Drama\nBroken Sky|in_language|Spanish\n"
                      "Broken Sky|directed_by|Julio Medem\nBroken Sky|release_year|2006\n"
                      "Broken Sky|written_by|Julio Medem\nBroken Sky|starred_actors|Asier Etxeandia\n"
                      "Broken Sky|has_tags|love\n", encoding="utf-8")
    kb = ingest([source], kb="kinds", format="triples", options={"sep": "|"})
    for question in ["what kind of film is Broken Sky", "what sort of movie is Broken Sky"]:
        answer = ask(kb, question, strategy="offline", k=3)
        assert answer.items[0].label == "Drama", question
