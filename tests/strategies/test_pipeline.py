"""The whole pipeline on the movie fixture: strategies, degradation, evidence, audit files, JSON."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from sparqlqa.errors import ConfigError, NotInCache
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.llm import FakeLLM, LLMRequest
from sparqlqa.stages.answer import Answer
from sparqlqa.strategies.ask import NO_LLM_NOTE, NO_OFFLINE_NOTE, ask
from sparqlqa.strategies.base import FourStep, Strategy, strategies
from sparqlqa.strategies.pipeline import AskContext

EX = "https://example.org/movies/"
REL = f"{EX}rel/"


def _term(kind: str, text: str, type_: str | None) -> dict[str, Any]:
    return {"kind": kind, "text": text, "type": type_}


#: what an LLM would answer for "Which science fiction film by Ridley Scott is about a creature on a spaceship?"
SCOTT_SCIFI = {
    "triplets": [
        {"head": _term("variable", "?x1", "movie"), "relation": "directed by",
         "tail": _term("constant", "Ridley Scott", "person")},
        {"head": _term("variable", "?x1", "movie"), "relation": "has genre",
         "tail": _term("constant", "Science Fiction", "genre")},
    ],
    "target": "?x1",
    "requirements": ["about a deadly creature aboard a spaceship"],
}
QUESTION = "Which science fiction film by Ridley Scott is about a creature on a spaceship?"


def _pick(word: str):  # type: ignore[no-untyped-def]
    """A listwise judge that puts the passage containing ``word`` first."""

    def answer(request: LLMRequest) -> str:
        passages = re.findall(r"^\[(\d+)\] (.*)$", request.messages[-1].content, flags=re.M)
        ranked = sorted(passages, key=lambda p: (word not in p[1], int(p[0])))
        return " > ".join(f"[{slot}]" for slot, _ in ranked)

    return answer


def test_end_to_end_right_answer_first_with_evidence(movies_kb: KnowledgeBase) -> None:
    llm = FakeLLM([SCOTT_SCIFI, _pick("Witness")])  # the reranker (wrongly) prefers Witness, a fill-in...
    answer = ask(movies_kb, QUESTION, llm=llm, k=5)
    assert answer.strategy == "4step"
    filtered = [i for i in answer.items if i.source == "filtered"]
    assert {i.iri for i in filtered} == {f"{EX}alien", f"{EX}blade_runner"}
    assert [i.matched for i in answer.items[:2]] == [True, True]  # ...without a reason: exact answers first
    assert answer.items[2].label == "Witness"  # the rerank's order holds among the fill-in
    second = ask(movies_kb, QUESTION, llm=FakeLLM([SCOTT_SCIFI, _pick("spaceship")]), k=5)
    top = second.items[0]
    assert top.iri == f"{EX}alien" and top.tier == 0 and top.source == "filtered"
    triples = top.evidence_triples()
    assert (f"{EX}alien", f"{REL}directed_by", f"{EX}ridley_scott") in triples
    assert (f"{EX}alien", f"{REL}has_genre", f"{EX}scifi") in triples
    assert "Alien —directed by→ Ridley Scott" in top.evidence_text(second.labels)
    assert "spaceship" in top.snippet and top.type_label == "movie"
    assert [c.backend for c in second.llm_calls] == ["fake", "fake"]
    assert any(q.stage == "sparql" for q in second.queries)
    assert {"triplets", "linking", "sparql", "vector", "rerank", "answer", "total"} <= set(second.timings_ms)
    assert second.meta.rerank_result.applied and second.meta.ranking.filtered == 2


def test_vector_order_without_rerank_and_top_up_below_filtered(movies_kb: KnowledgeBase) -> None:
    answer = ask(movies_kb, QUESTION, llm=FakeLLM([SCOTT_SCIFI]), k=5, rerank="none")
    sources = [i.source for i in answer.items]
    assert sources == ["filtered", "filtered", "vector", "vector", "vector"]
    assert answer.items[0].iri == f"{EX}alien"  # the requirement text decides between the two
    assert all(i.type == f"{EX}Movie" for i in answer.items)
    assert len(answer.llm_calls) == 1


def test_saved_rq_files_return_the_same_bindings_on_rdflib(movies_kb: KnowledgeBase, tmp_path: Path) -> None:
    from sparqlqa.ingest.rdflib_interop import kb_to_graph
    from sparqlqa.stages.audit import save_sparql

    answer = ask(movies_kb, QUESTION, llm=FakeLLM([SCOTT_SCIFI, _pick("spaceship")]), k=5)
    files = save_sparql(answer, tmp_path / "audit")
    assert len(files) == len(answer.queries) >= 3
    graph = kb_to_graph(movies_kb)
    for path in files:
        text = path.read_text("utf-8")
        assert f"# question:  {QUESTION}" in text and "# kb:        movies" in text
        assert "?x1 (movie) -> directed by -> person 'Ridley Scott'" in text and "model: fake:fake" in text
        ox = {tuple(sorted((k, v.value) for k, v in row.items())) for row in movies_kb.query(text).bindings()}
        rdf = {tuple(sorted((str(k), str(v)) for k, v in row.asdict().items())) for row in graph.query(text)}
        assert ox == rdf, path.name
    sparql = [p for p in files if p.name.endswith("-sparql.rq")]
    assert sparql and any(f"{EX}alien" in str(b) for b in graph.query(sparql[0].read_text("utf-8")))


@pytest.mark.parametrize("reply, why", [
    ("I am not sure what you mean.", "not JSON"),
    ({"triplets": [{"head": _term("variable", "?x1", "movie"), "relation": "was catered by",
                    "tail": _term("constant", "Nobody Known", "chef")}], "target": "?x1"}, "invented"),
    ({"triplets": [{"head": _term("constant", "Alien", "movie"), "relation": "directed by",
                    "tail": _term("constant", "Ridley Scott", "person")}], "target": None}, "no target"),
    ({"triplets": [], "target": "?x1"}, "empty"),
])
def test_garbage_llm_output_degrades_to_vector_ranking(movies_kb: KnowledgeBase, reply: Any, why: str) -> None:
    answer = ask(movies_kb, "Which film is about replicants in Los Angeles?", llm=FakeLLM([reply]), k=3,
                 rerank="none")
    assert answer.items and answer.notes, why
    assert answer.items[0].label == "Blade Runner", why
    json.dumps(answer.to_dict())


def test_no_llm_runs_offline_and_says_so_once(movies_kb: KnowledgeBase) -> None:
    answer = ask(movies_kb, "Which films did Ridley Scott direct?")
    expected = NO_LLM_NOTE if "offline" in strategies else NO_OFFLINE_NOTE
    assert answer.strategy == ("offline" if "offline" in strategies else "vss")
    assert answer.notes.count(expected) == 1 and answer.items
    assert answer.meta.llm is None and not answer.llm_calls


def test_strategies_that_need_an_llm_refuse_to_run_without_one(movies_kb: KnowledgeBase) -> None:
    with pytest.raises(ConfigError, match="needs an LLM"):
        ask(movies_kb, "Which films did Ridley Scott direct?", strategy="4step")
    with pytest.raises(ConfigError):
        ask(movies_kb, "   ")
    with pytest.raises(ConfigError):
        ask(movies_kb, "q", rerank="sideways")


def test_swapping_the_triplet_step_is_one_override(movies_kb: KnowledgeBase) -> None:
    from sparqlqa.stages.triplets import triplets_from_data

    class Scripted(FourStep):
        needs_llm = False
        rerank_enabled = False

        def make_triplets(self, ctx: AskContext) -> Any:
            made = triplets_from_data(SCOTT_SCIFI, ctx.question, ctx.kb.schema, source="offline")
            made.source = "offline"
            return made

    strategies.add("scripted-test", Scripted, replace=True)
    answer = ask(movies_kb, QUESTION, strategy="scripted-test", llm=FakeLLM([]), k=3)
    assert answer.items[0].iri == f"{EX}alien" and answer.triplets is not None
    assert answer.triplets.source == "offline" and not answer.llm_calls


def test_rerank_not_in_cache_keeps_vector_order(movies_kb: KnowledgeBase) -> None:
    llm = FakeLLM([SCOTT_SCIFI, NotInCache("c" * 64)])
    answer = ask(movies_kb, QUESTION, llm=llm, k=5)
    assert answer.items[0].iri == f"{EX}alien" and answer.pending_llm == ["c" * 64]
    assert any("not cached" in n for n in answer.notes)


def test_vss_strategies(movies_kb: KnowledgeBase) -> None:
    plain = ask(movies_kb, "replicants in Los Angeles", strategy="vss", k=3)
    assert plain.items[0].label == "Blade Runner" and len(plain.items) == 19  # every node, depth >= 100
    assert {i.source for i in plain.items} == {"vector"} and plain.triplets is None
    third = plain.items[2].label
    reranked = ask(movies_kb, "replicants in Los Angeles", strategy="vss+rerank", k=3,
                   llm=FakeLLM([_pick(third)]))
    assert reranked.items[0].label == third and len(reranked.llm_calls) == 1
    assert [i.label for i in reranked.items[3:]] == [i.label for i in plain.items[3:]]


def test_ask_by_name_and_answer_json_layout(movies_kb: KnowledgeBase) -> None:
    answer = ask("movies", QUESTION, llm=FakeLLM([SCOTT_SCIFI, _pick("spaceship")]), k=4)
    data = json.loads(json.dumps(answer.to_dict()))
    assert set(data) >= {"question", "kb", "strategy", "items", "triplets", "linked", "candidates",
                         "llm_calls", "queries", "notes", "timings_ms"}
    item = data["items"][0]
    assert item["rank"] == 1 and item["label"] == "Alien" and item["tier"] == 0
    assert set(item) >= {"iri", "label", "type", "score", "tier", "source", "evidence", "snippet"}
    assert data["llm_calls"][0]["input_tokens"] > 0 and "latency_ms" in data["llm_calls"][0]
    assert data["triplets"]["target"] == "?x1" and "Ridley Scott" in data["linked"]["links"]


def test_custom_strategy_interface_has_one_abstract_method() -> None:
    assert Strategy.__abstractmethods__ == frozenset({"run"})

    class Empty(Strategy):
        def run(self, ctx: AskContext) -> Answer:
            return Answer(question=ctx.question, kb=ctx.kb.name, strategy="empty")

    assert isinstance(Empty(), Strategy)


@pytest.mark.parametrize("name, expected", [
    ("fixture-scifi-by-ridley-scott.rq", {"alien", "blade_runner"}),
    ("fixture-relaxed-tier.rq", {"aliens", "avatar"}),
])
def test_worked_examples_run_on_oxigraph_and_rdflib(movies_kb: KnowledgeBase, name: str,
                                                    expected: set[str]) -> None:
    from sparqlqa.ingest.rdflib_interop import kb_to_graph

    text = (Path(__file__).resolve().parents[2] / "queries" / name).read_text("utf-8")
    ox = {row[0].value for row in movies_kb.query(text).rows if row[0] is not None}
    rdf = {str(row[0]) for row in kb_to_graph(movies_kb).query(text)}  # type: ignore[index]
    assert ox == rdf == {EX + e for e in expected}


def test_nodes_named_in_the_question_are_not_answers(movies_kb: KnowledgeBase) -> None:
    """'films sharing an actor with Alien': Alien satisfies the pattern too, but it is the question's constant."""
    sharing = {
        "triplets": [
            {"head": _term("variable", "?x1", "movie"), "relation": "starred actors",
             "tail": _term("variable", "?a", "person")},
            {"head": _term("constant", "Alien", "movie"), "relation": "starred actors",
             "tail": _term("variable", "?a", "person")},
        ],
        "target": "?x1", "requirements": [],
    }
    answer = ask(movies_kb, "Which films share an actor with Alien?", llm=FakeLLM([sharing]), k=5, rerank="none")
    filtered = {i.iri for i in answer.items if i.source == "filtered"}
    assert filtered == {f"{EX}avatar", f"{EX}aliens"}
    assert "the nodes named in the question were left out of the candidates" in answer.notes


def test_one_scored_node_from_ranking_to_answer_with_scores_on_it(movies_kb: KnowledgeBase) -> None:
    from sparqlqa.embed.embedders import get_embedder
    from sparqlqa.stages.answer import AnswerItem
    from sparqlqa.strategies.pipeline import build_answer, rank, rerank_top

    def reverse(request: LLMRequest) -> str:  # a listwise judge that turns the order round
        slots = re.findall(r"^\[(\d+)\] ", request.messages[-1].content, flags=re.M)
        return " > ".join(f"[{slot}]" for slot in reversed(slots))

    ctx = AskContext(kb=movies_kb, question=QUESTION, llm=FakeLLM([reverse]), embedder=get_embedder(None), k=5,
                     strategy="vss+rerank")
    ranking = rank(ctx, None, None)
    before = list(ranking.items)
    vss = {id(item): item.score for item in before}
    assert all(isinstance(item, AnswerItem) and item.scores == {"vss": item.score} for item in before)
    reranked = rerank_top(ctx, ranking)
    assert ranking.items == before and reranked.order is not None  # the rerank orders nothing itself...
    assert reranked.order.positions == (4, 3, 2, 1, 0)
    assert ranking.items[0].label == ""  # described once, by the answer builder
    answer = build_answer(ctx, ranking, reranked)  # ...the one ordering step applies its order
    assert all(a is b for a, b in zip(answer.items, before[::-1])) and len(answer.items) == 5  # no copies
    assert [n["iri"] for n in answer.to_dict()["meta"]["ranking"]["top"]] == [i.iri for i in before[::-1]]
    top = answer.items[0]
    assert top.label and top.snippet and top.score == 2.0
    assert top.scores == {"vss": vss[id(top)], "listwise": 2.0}  # the vector score stays beside the rerank's
