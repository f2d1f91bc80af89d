"""Offline mention detection: longest match first, tolerant to case, punctuation, underscores, typos."""

from __future__ import annotations

from pathlib import Path

from sparqlqa.ingest import ingest
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.labels import LabelIndex
from sparqlqa.strategies.offline.mentions import detect_mentions

EX = "https://example.org/movies/"


def _texts(question: str, kb: KnowledgeBase, **kw: bool) -> list[str]:
    return [m.text for m in detect_mentions(question, LabelIndex.for_kb(kb), **kw)]


def test_longest_match_and_case_punctuation(movies_kb: KnowledgeBase) -> None:
    found = detect_mentions("who directed BLADE-runner?", LabelIndex.for_kb(movies_kb))
    assert [m.text for m in found] == ["BLADE-runner"]
    assert found[0].nodes == [f"{EX}blade_runner"] and found[0].method == "exact"
    # "Aliens" is one longer name, not "Alien" + "s"
    assert _texts("is Aliens a sequel", movies_kb) == ["Aliens"]


def test_aliases_are_names_too(movies_kb: KnowledgeBase) -> None:
    found = detect_mentions("films by sir ridley scott", LabelIndex.for_kb(movies_kb))
    assert found[0].text == "sir ridley scott" and found[0].nodes == [f"{EX}ridley_scott"]


def test_small_typos_are_tolerated(movies_kb: KnowledgeBase) -> None:
    found = detect_mentions("which movies did Sigourny Weaver star in", LabelIndex.for_kb(movies_kb))
    assert found and found[0].method == "fuzzy" and found[0].nodes == [f"{EX}sigourney_weaver"]


def test_brackets_help_but_are_not_required(movies_kb: KnowledgeBase) -> None:
    assert _texts("who starred in [Witness] with Harrison Ford", movies_kb) == ["Witness"]
    both = _texts("who starred in [Witness] with Harrison Ford", movies_kb, use_brackets=False)
    assert set(both) == {"Witness", "Harrison Ford"}
    # a bracket that names nothing is ignored
    assert _texts("what did [Nobody Known] film with Tom Cruise", movies_kb) == ["Tom Cruise"]


def test_underscored_names_and_masking(tmp_path: Path) -> None:
    source = tmp_path / "kb.txt"
    source.write_text("the_godfather\tdirected_by\tfrancis_ford_coppola\n", encoding="utf-8")
    kb = ingest([source], kb="films", format="triples")
    question = "who directed The Godfather ?"
    found = detect_mentions(question, LabelIndex.for_kb(kb))
    assert [m.key for m in found] == ["the godfather"]
    assert found[0].masked(question) == "who directed X ?"
    hinted = "who directed [The Godfather] ?"
    bracketed = detect_mentions(hinted, LabelIndex.for_kb(kb))
    assert bracketed[0].method == "bracket" and bracketed[0].masked(hinted) == "who directed X ?"


def test_function_words_are_never_mentions(tmp_path: Path) -> None:
    source = tmp_path / "kb.txt"
    source.write_text("The|linked_to|Who\nAlpha Centauri|linked_to|The\n", encoding="utf-8")
    kb = ingest([source], kb="words", format="triples", options={"sep": "|"})
    assert _texts("who is the alpha centauri", kb) == ["alpha centauri"]


def test_lower_case_cue_words_are_not_names(tmp_path: Path) -> None:
    """"who acted together with X": "together" asks for co-stars even when a film is called "Together"."""
    source = tmp_path / "kb.txt"
    source.write_text("Together|starred_actors|Ann Lee\nOther Film|starred_actors|Dirk Benedict\n", encoding="utf-8")
    kb = ingest([source], kb="cues", format="triples", options={"sep": "|"})
    assert _texts("who acted together with Dirk Benedict", kb) == ["Dirk Benedict"]
    assert "Together" in _texts("who starred in Together", kb)  # written as a name, it is one
