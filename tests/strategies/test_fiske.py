"""FiSKE on the movie fixture with a scripted FakeLLM: routes, budget, fallback, replay."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fiske_script import Script

from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.labels import NodeMatch
from sparqlqa.llm import FakeLLM, LLMCache
from sparqlqa.strategies.ask import ask
from sparqlqa.strategies.fiske.explorer import FiskeSettings
from sparqlqa.strategies.fiske.state import FiskeRun, ModelFallback
from sparqlqa.strategies.fiske.strategy import MODEL_KNOWLEDGE, Fiske
from sparqlqa.strategies.pipeline import AskContext

EX = "https://example.org/movies/"

TWO_HOP = Script(clues=["films", "Harrison Ford", "directed"],
                 relations={"[in] starred actors": ("films", 8), "[out] directed by": ("directed", 9)},
                 pairs={"Blade Runner": ("films", 8), "Witness": ("films", 8), "Ridley Scott": ("directed", 9),
                        "Peter Weir": ("directed", 9)})
THREE_HOP = Script(clues=["Alien", "director", "films", "genres"],
                   relations={"[out] directed by": ("director", 9), "[in] directed by": ("films", 8),
                              "[out] has genre": ("genres", 9)},
                   pairs={"Ridley Scott": ("director", 9), "Blade Runner": ("films", 8), "Gladiator": ("films", 8),
                          "Science Fiction": ("genres", 8), "Drama": ("genres", 8), "Horror": ("genres", 8)},
                   answers=["Science Fiction", "Drama", "Space opera"])


def _fiske(kb: KnowledgeBase, question: str, llm: FakeLLM, budget: int = 30) -> Any:
    ctx = AskContext(kb=kb, question=question, llm=llm, embedder=_embedder(), k=5, rerank="none",
                     strategy="fiske")
    return Fiske(FiskeSettings(budget=budget)).run(ctx)


def _embedder() -> Any:
    from sparqlqa.embed.embedders import get_embedder

    return get_embedder(None)


def _routes(answer: Any) -> dict[str, Any]:
    return answer.meta.records["fiske"].to_dict()


def test_two_hop_question_is_answered_through_a_covering_route(movies_kb: KnowledgeBase) -> None:
    llm = TWO_HOP.llm()
    answer = ask(movies_kb, "Who directed the films starring Harrison Ford?", strategy="fiske", llm=llm, k=5,
                 rerank="none")
    record = _routes(answer)
    kb_items = {i.iri for i in answer.items if i.source == "filtered"}
    assert kb_items == {EX + "ridley_scott", EX + "peter_weir"}
    assert record["stop"] == "covered" and record["answer_source"] == "kb-routes"
    [covering] = [r for r in record["routes"] if r["status"] == "covering"]
    assert [h["label"] for h in covering["hops"]] == ["[in] starred actors", "[out] directed by"]
    assert record["coverage"] == {"films": [2, 3], "Harrison Ford": [1, 2, 3], "directed": [3]}
    assert len(answer.llm_calls) == record["calls"] == 5 == len(llm.requests)
    item = next(i for i in answer.items if i.iri == EX + "peter_weir")
    assert item.evidence_text(answer.labels) == ["Witness —starred actors→ Harrison Ford",
                                                 "Witness —directed by→ Peter Weir"]
    explore = [q for q in answer.queries if q.stage == "fiske"]
    assert len(explore) == 4 and all("LIMIT 1000" in q.query for q in explore)
    assert not any(i.source == MODEL_KNOWLEDGE for i in answer.items)


def test_three_hop_question_steps_through_the_director(movies_kb: KnowledgeBase) -> None:
    answer = _fiske(movies_kb, "Which genres do the films of the director of Alien have?", THREE_HOP.llm())
    record = _routes(answer)
    assert {i.iri for i in answer.items if i.source == "filtered"} == {EX + "scifi", EX + "drama"}
    [covering] = [r for r in record["routes"] if r["status"] == "covering"]
    assert [h["label"] for h in covering["hops"]] == ["[out] directed by", "[in] directed by", "[out] has genre"]
    assert EX + "alien" not in covering["hops"][1]["edges"][0]  # the start is never walked back to
    # Alien's own genres also map "genres": that side route dies a step later (no relation maps the rest)
    side = next(r for r in record["routes"] if [h["label"] for h in r["hops"]] == ["[out] has genre"])
    assert side["status"] == "dead" and side["covered"] == ["Alien", "genres"]
    assert record["calls"] == 8 and record["steps"] == 3


def test_a_neighbour_named_by_a_clue_extends_without_an_llm_call(movies_kb: KnowledgeBase) -> None:
    script = Script(clues=["films", "Harrison Ford", "Ridley Scott"],
                    relations={"[in] starred actors": ("films", 8)},
                    pairs={"Blade Runner": ("films", 8), "Witness": ("films", 8)})
    llm = script.llm()
    answer = _fiske(movies_kb, "Which films starring Harrison Ford did Ridley Scott direct?", llm)
    record = _routes(answer)
    assert [i.iri for i in answer.items if i.source == "filtered"] == [EX + "blade_runner"]
    covering = [r for r in record["routes"] if r["status"] == "covering"]
    assert covering[0]["hops"][-1]["how"] == "name"
    # clues; route 1 (Harrison Ford): relations, pairs; route 2 (Ridley Scott): relations (dead); the name
    # hop of round 2 made no call
    assert [r.schema_name for r in llm.requests] == ["fiske_clues", "fiske_relations", "fiske_pairs",
                                                      "fiske_relations"]
    assert record["calls"] == 4 and record["steps"] == 2


def test_budget_stops_exploration_and_the_fallback_is_marked(movies_kb: KnowledgeBase) -> None:
    answer = _fiske(movies_kb, "Which genres do the films of the director of Alien have?", THREE_HOP.llm(),
                    budget=4)
    record = _routes(answer)
    assert record["stop"] == "budget" and record["calls"] == 4 and len(answer.llm_calls) == 4
    assert record["answer_source"] == MODEL_KNOWLEDGE and answer.meta.answer_source == MODEL_KNOWLEDGE
    assert any("budget of 4" in n and "NOT from the knowledge base" in n for n in answer.notes)
    assert [i.label for i in answer.items] == ["Science Fiction", "Drama", "Space opera"]
    assert all(i.source == MODEL_KNOWLEDGE and i.evidence is None and i.tier is None for i in answer.items)
    assert answer.items[0].iri == EX + "scifi"  # a name the KB knows gets its node ...
    assert answer.items[2].iri.startswith("urn:sparqlqa:model-knowledge:")  # ... others a placeholder
    assert any(r["status"] == "stopped" for r in record["routes"])
    run = answer.meta.records["fiske"]  # the run itself; the JSON above is its to_dict()
    assert isinstance(run, FiskeRun) and isinstance(run.fallback, ModelFallback)
    assert run.fallback.answers == record["fallback"]["answers"] == ["Science Fiction", "Drama", "Space opera"]
    assert all(isinstance(m, NodeMatch) for found in run.starts.values() for m in found)


def test_dead_routes_end_in_the_marked_fallback(movies_kb: KnowledgeBase) -> None:
    script = Script(clues=["Alien", "budget"], answers=["11 million dollars"])
    answer = _fiske(movies_kb, "What was the budget of Alien?", script.llm())
    record = _routes(answer)
    assert record["stop"] == "exhausted" and record["routes"][0]["status"] == "dead"
    assert answer.items[0].source == MODEL_KNOWLEDGE and record["fallback"]["answers"] == ["11 million dollars"]
    assert any("nothing new was found" in n for n in answer.notes)


def test_no_clue_names_a_node(movies_kb: KnowledgeBase) -> None:
    script = Script(clues=["Casablanca", "director"], answers=["Michael Curtiz"])
    answer = _fiske(movies_kb, "Who directed Casablanca?", script.llm())
    assert _routes(answer)["stop"] == "no-start" and answer.items[0].source == MODEL_KNOWLEDGE


def test_replay_stops_at_the_first_uncached_prompt(movies_kb: KnowledgeBase, tmp_path: Path) -> None:
    cache = LLMCache(tmp_path / "cache.sqlite")
    question = "Who directed the films starring Harrison Ford?"
    rounds = 0
    while True:
        answer = _fiske(movies_kb, question, FakeLLM(cache=cache, cache_mode="only"))
        pending = cache.pending()
        if not answer.pending_llm:
            break
        rounds += 1
        assert len(answer.pending_llm) == 1 and not answer.items  # nothing queued past the first miss
        assert len(pending) == 1 and pending[0]["id"] == answer.pending_llm[0]
        assert pending[0]["stage"] == pending[0]["schema_name"]  # the record says which FiSKE step waits
        reply = TWO_HOP.respond(pending[0]["messages"][-1]["content"], pending[0]["schema_name"])
        with cache._write() as conn:
            conn.execute("DELETE FROM pending")
        cache.put(pending[0]["id"], backend="fake", model="fake", text="", data=reply)
        assert rounds <= 5
    assert rounds == 5 and all(c.cache_hit for c in answer.llm_calls)
    assert {i.iri for i in answer.items if i.source == "filtered"} == {EX + "ridley_scott", EX + "peter_weir"}


def test_budget_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from sparqlqa.errors import ConfigError

    assert FiskeSettings.resolve().budget == 30
    monkeypatch.setenv("SPARQLQA_FISKE_BUDGET", "12")
    assert FiskeSettings.resolve().budget == 12 and FiskeSettings.resolve(5).budget == 5
    with pytest.raises(ConfigError, match="at least 2"):
        FiskeSettings.resolve(1)


def test_cli_explain_shows_routes_and_saves_the_exploration_sparql(movies_kb: KnowledgeBase, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from sparqlqa.cli import main
    from sparqlqa.strategies import ask as pipeline

    llm = TWO_HOP.llm()
    monkeypatch.setattr(pipeline, "resolve_llm", lambda spec, cache=None: llm if spec == "fake" else None)
    saved = tmp_path / "rq"
    result = CliRunner().invoke(main, ["ask", "movies", "Who directed the films starring Harrison Ford?",
                                       "--strategy", "fiske", "--llm", "fake", "--rerank", "none", "--explain",
                                       "--save-sparql", str(saved)])
    assert result.exit_code == 0, result.output
    assert "1-2. FiSKE routes (stop: covered, answer: kb-routes)" in result.output
    assert "route 3 [covering] ← 2: [out] directed by (llm 9) → " in result.output
    assert "'directed' by route(s) 3" in result.output
    files = sorted(p.name for p in saved.iterdir())
    assert sum(1 for name in files if name.endswith("-fiske.rq")) == 4
    first = (saved / files[0]).read_text()
    assert "FiSKE clues 'films', 'Harrison Ford', 'directed'; stop: covered" in first


def test_cli_call_budget_reaches_the_strategy(movies_kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from click.testing import CliRunner

    from sparqlqa.cli import main
    from sparqlqa.strategies import ask as pipeline

    llm = THREE_HOP.llm()
    monkeypatch.setattr(pipeline, "resolve_llm", lambda spec, cache=None: llm if spec == "fake" else None)
    result = CliRunner().invoke(main, ["ask", "movies", "Which genres do the films of the director of Alien have?",
                                       "--strategy", "fiske", "--llm", "fake", "--rerank", "none", "--json",
                                       "--call-budget", "4"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["meta"]["fiske_result"]["budget"] == 4 and data["meta"]["answer_source"] == MODEL_KNOWLEDGE
    assert {item["source"] for item in data["items"]} == {MODEL_KNOWLEDGE}


def test_a_failing_exploration_query_kills_the_route_not_the_answer(movies_kb: KnowledgeBase,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from sparqlqa.errors import QueryError
    from sparqlqa.strategies.fiske import explorer

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise QueryError("the endpoint timed out")

    monkeypatch.setattr(explorer, "neighbour_pairs", broken)
    answer = _fiske(movies_kb, "Who directed the films starring Harrison Ford?", TWO_HOP.llm())
    record = _routes(answer)
    assert record["routes"][0]["note"] == "the exploration query failed" and record["stop"] == "exhausted"
    assert any("timed out" in n for n in answer.notes) and answer.meta.answer_source == MODEL_KNOWLEDGE
