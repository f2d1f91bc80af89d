"""Topic entities (issue 26, item 5): the nodes a question names are left out of its answers unless it asks
for them (``topic="auto"``), always (``exclude``) or never (``keep``)."""

from __future__ import annotations

from typing import Any

import pytest

from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.llm import FakeLLM
from sparqlqa.strategies.ask import ask

EX = "https://example.org/movies/"


def _term(kind: str, text: str, type_: str | None) -> dict[str, Any]:
    return {"kind": kind, "text": text, "type": type_}


def same_director(film: str) -> dict[str, Any]:
    """Triplets of "which films share a director with FILM": the path leads back to FILM too."""
    return {"triplets": [{"head": _term("variable", "?x", "movie"), "relation": "directed by",
                          "tail": _term("variable", "?p", "person")},
                         {"head": _term("constant", film, "movie"), "relation": "directed by",
                          "tail": _term("variable", "?p", "person")}],
            "target": "?x", "requirements": []}


def _ask(kb: KnowledgeBase, film: str, topic: str, **options: Any) -> list[str]:
    answer = ask(kb, f"Which films share a director with {film}?", llm=FakeLLM([same_director(film)]), k=7,
                 rerank="none", topic=topic, **options)
    return [item.iri.removeprefix(EX) for item in answer.items]


@pytest.mark.parametrize("topic", ["auto", "exclude"])
def test_the_named_film_is_left_out_when_other_films_answer(movies_kb: KnowledgeBase, topic: str) -> None:
    found = _ask(movies_kb, "Blade Runner", topic, exact=True)
    assert sorted(found) == ["alien", "gladiator"]


def test_keep_returns_the_named_film_with_the_others(movies_kb: KnowledgeBase) -> None:
    assert sorted(_ask(movies_kb, "Blade Runner", "keep", exact=True)) == ["alien", "blade_runner", "gladiator"]


def test_auto_keeps_the_named_node_when_the_query_returns_only_it(movies_kb: KnowledgeBase) -> None:
    """Witness is Peter Weir's only film: the question asks for it back (PathQuestion's gold does this)."""
    found = _ask(movies_kb, "Witness", "auto")
    assert found[0] == "witness" and found.count("witness") == 1


def test_exclude_leaves_the_named_node_out_even_then_and_never_as_fill_in(movies_kb: KnowledgeBase) -> None:
    answer = ask(movies_kb, "Which films share a director with Witness?", llm=FakeLLM([same_director("Witness")]),
                 k=7, rerank="none", topic="exclude")
    assert f"{EX}witness" not in [i.iri for i in answer.items]
    assert answer.items and not any(i.matched for i in answer.items)  # what is left is fill-in
    assert any("--topic exclude" in note for note in answer.notes)


def test_auto_never_adds_the_named_node_as_fill_in(movies_kb: KnowledgeBase) -> None:
    for topic, held in (("auto", False), ("keep", True)):
        answer = ask(movies_kb, "Which films share a director with Blade Runner?", k=7, rerank="none",
                     llm=FakeLLM([same_director("Blade Runner")]), topic=topic)
        ranked = [node.iri for node in answer.meta.ranking.items]  # before the last word on items
        assert len(ranked) == 7 - (not held)  # the top-up skipped it, or the query kept it
        assert (f"{EX}blade_runner" in ranked) is held
        assert [i.iri for i in answer.items].count(f"{EX}blade_runner") == held



def test_auto_leaves_a_pure_similarity_list_alone_but_exclude_does_not(movies_kb: KnowledgeBase) -> None:
    """Nothing satisfies "?x starred actors Witness": every answer is fill-in.  The question may be about
    its own entity (PathQuestion's round trips are), so ``auto`` keeps it there; ``exclude`` never does."""
    nothing = {"triplets": [{"head": _term("variable", "?x", "movie"), "relation": "starred actors",
                             "tail": _term("constant", "Witness", "movie")}], "target": "?x", "requirements": []}
    listed: dict[str, list[str]] = {}
    for topic in ("auto", "exclude"):
        answer = ask(movies_kb, "Which films star Witness?", llm=FakeLLM([nothing]), k=7, rerank="none",
                     topic=topic)
        assert answer.items and not any(i.matched for i in answer.items)
        listed[topic] = [i.iri for i in answer.items]
    assert f"{EX}witness" in listed["auto"] and f"{EX}witness" not in listed["exclude"]
