"""The answer's records are typed objects (queries, meta, stage records); their JSON form is unchanged."""

from __future__ import annotations

import json
import re

import pytest

from sparqlqa import Answer, QueryRecord
from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.llm import FakeLLM, LLMRequest
from sparqlqa.stages.answer import AnswerMeta, Ranking
from sparqlqa.stages.rerank import RerankResult
from sparqlqa.strategies.ask import ask
from sparqlqa.strategies.offline.reasons import OfflineReasons

QUESTION = "Which films did Ridley Scott direct?"
TRIPLETS = {"triplets": [{"head": {"kind": "variable", "text": "?x1", "type": "movie"}, "relation": "directed by",
                          "tail": {"kind": "constant", "text": "Ridley Scott", "type": "person"}}],
            "target": "?x1", "requirements": []}


def _first_listed(request: LLMRequest) -> str:
    slots = re.findall(r"^\[(\d+)\]", request.messages[-1].content, flags=re.M)
    return " > ".join(f"[{slot}]" for slot in reversed(slots))


@pytest.fixture
def answer(movies_kb: KnowledgeBase) -> Answer:
    return ask(movies_kb, QUESTION, llm=FakeLLM([TRIPLETS, _first_listed]), k=5)


def test_meta_holds_the_stage_records_themselves(answer: Answer) -> None:
    meta = answer.meta
    assert isinstance(meta, AnswerMeta) and isinstance(meta.ranking, Ranking)
    assert meta.strategy == "4step" and meta.k == 5 and meta.llm == "fake:fake" and meta.topic == "auto"
    assert isinstance(meta.rerank_result, RerankResult) and meta.records["rerank"] is meta.rerank_result
    assert meta.rerank_result.applied and meta.answer_source is None and meta.offline is None
    data = answer.to_dict()["meta"]
    assert list(data) == ["strategy", "k", "rerank", "llm", "embedder", "ranking", "rerank_result", "exact", "topic"]
    assert data["ranking"] == meta.ranking.to_dict() and data["rerank_result"] == meta.rerank_result.to_dict()
    assert data["ranking"]["filtered"] == meta.ranking.filtered == 3


def test_the_old_dict_reads_of_meta_still_answer_with_a_warning(answer: Answer) -> None:
    data = json.loads(answer.to_json())["meta"]
    with pytest.warns(DeprecationWarning, match=r"AnswerMeta\['ranking'\]"):
        assert answer.meta["ranking"] == data["ranking"]
    with pytest.warns(DeprecationWarning):
        assert answer.meta.get("rerank_result") == data["rerank_result"] and answer.meta.get("offline") is None
    assert "exact" in answer.meta and "fiske_result" not in answer.meta


def test_every_query_is_a_record_and_its_json_is_the_record(answer: Answer) -> None:
    assert answer.queries and all(isinstance(q, QueryRecord) and q.stage for q in answer.queries)
    assert {"sparql", "labels", "texts"} <= {q.stage for q in answer.queries}
    assert answer.to_dict()["queries"] == [q.to_dict() for q in answer.queries]
    assert answer.candidates is not None
    assert [q.at("sparql") for q in answer.candidates.queries] == [q for q in answer.queries if q.stage == "sparql"]


def test_offline_and_model_entries_keep_their_json_keys(movies_kb: KnowledgeBase) -> None:
    offline = ask(movies_kb, QUESTION, strategy="offline")
    reasons = offline.meta.offline
    assert isinstance(reasons, OfflineReasons) and reasons.chosen and reasons.chosen[0].confidence is not None
    assert offline.to_dict()["meta"]["offline"] == reasons.to_dict() == offline.triplets.to_dict()["offline"]
    with pytest.warns(DeprecationWarning, match=r"OfflineReasons\['chosen'\]"):
        assert offline.meta.offline["chosen"] == reasons.to_dict()["chosen"]
    assert list(offline.to_dict()["meta"])[-3:] == ["offline", "exact", "topic"]
