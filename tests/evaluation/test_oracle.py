"""Evaluation honesty (issue 26, item 7): PathQuestion answers with brackets in their names, the answerable
(oracle) subset, and the datasets' topic modes reaching ``ask``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sparqlqa.evaluation import evaluate
from sparqlqa.evaluation.datasets import datasets, load_questions, parse_path_answers
from sparqlqa.evaluation.oracle import answerable, gold_path, metaqa_path, oracle_markdown, pathquestion_path
from sparqlqa.stages.answer import Answer, AnswerItem

#: PQL-style lines whose answer names hold brackets (the old reader split them into junk such as ")")
BRACKETED = [
    ("Hard_Times(Hard_Times_(live)/Hard_Times/)", {"Hard_Times_(live)", "Hard_Times"}),
    ("Hard_Times_(live)(Hard_Times_(live)/Hard_Times/)", {"Hard_Times_(live)", "Hard_Times"}),
    ("Paris_(film)(Paris_(film)/)", {"Paris_(film)"}),
    ("Up(Up_(2009_film)/Up_(TV_series)/Up/)", {"Up_(2009_film)", "Up_(TV_series)", "Up"}),
    ("united_kingdom(united_kingdom/)", {"united_kingdom"}),
    ("female(male/female/)", {"male", "female"}),
]


@pytest.mark.parametrize("field, expected", BRACKETED)
def test_answers_whose_names_hold_brackets_parse_whole(field: str, expected: set[str]) -> None:
    assert parse_path_answers(field) == frozenset(expected)


def test_pathquestion_lines_with_bracketed_names_load_right(tmp_path: Path) -> None:
    src = tmp_path / "PQL-2H.txt"
    src.write_text("what album did hard times release ?\tHard_Times(Hard_Times_(live)/Hard_Times/)\t"
                   "Hard_Times#album#Hard_Times_(live)#<end>#Hard_Times_(live)\n"
                   "who is x 's spouse ?\tb(b/)\tx#spouse#b\n", encoding="utf-8")
    first, second = load_questions("pathquestion", src)
    assert first.gold_labels == {"Hard_Times_(live)", "Hard_Times"} and ")" not in first.gold_labels
    assert second.gold_labels == {"b"}
    assert gold_path(first) == pathquestion_path("Hard_Times#album#Hard_Times_(live)#<end>#Hard_Times_(live)")


def test_the_real_pathquestion_files_read_as_before(shared_data: Path) -> None:
    """PQ-2H / PQ-3H hold no bracketed names: every line keeps the answers the old reader gave it."""
    for name, lines in (("PQ-2H.txt", 1908), ("PQ-3H.txt", 5198)):
        questions = load_questions("pathquestion", shared_data / "pathquestion" / name)
        assert len(questions) == lines
        assert all(label and "(" not in label and ")" not in label for q in questions for label in q.gold_labels)


def test_dataset_topic_modes_follow_their_gold() -> None:
    assert datasets.get("metaqa").topic == "exclude" and datasets.get("pathquestion").topic == "auto"


# --- the answerable subset -------------------------------------------------------------------------------

KB_LINES = ["Film A|directed_by|Ann", "Film A|starred_actors|Bo", "Film B|starred_actors|Bo",
            "Film B|directed_by|Cy"]
QUESTIONS = ["what films did [Bo] act in\tFilm A|Film B", "who directed the films [Bo] acted in\tAnn|Cy",
             "who directed the films [Bo] acted in\tZed", "what films did [Nobody] act in\tFilm A"]
QTYPES = ["actor_to_movie", "actor_to_movie_to_director", "actor_to_movie_to_director", "actor_to_movie"]


@pytest.fixture
def metaqa_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "2-hop"
    folder.mkdir()
    (folder / "qa_dev.txt").write_text("\n".join(QUESTIONS) + "\n", encoding="utf-8")
    (folder / "qa_dev_qtype.txt").write_text("\n".join(QTYPES) + "\n", encoding="utf-8")
    return folder


@pytest.fixture
def metaqa_kb(tmp_path: Path) -> Any:
    from sparqlqa.ingest import ingest

    src = tmp_path / "kb.txt"
    src.write_text("\n".join(KB_LINES) + "\n", encoding="utf-8")
    return ingest([src], kb="mq", format="triples", options={"sep": "|"})


def test_metaqa_question_types_become_gold_paths(metaqa_dir: Path) -> None:
    questions = load_questions("metaqa", metaqa_dir, split="dev")
    assert [q.meta["qtype"] for q in questions] == QTYPES
    path = gold_path(questions[1])
    assert path is not None and path.topic == "Bo"
    assert path.hops == metaqa_path("actor_to_movie_to_director") == (("starred_actors", False), ("directed_by", True))


def test_answerable_runs_the_gold_path_from_the_topic_entity(metaqa_dir: Path, metaqa_kb: Any) -> None:
    questions = load_questions("metaqa", metaqa_dir, split="dev")
    assert answerable(metaqa_kb, questions) == {"1": True, "2": True, "3": False, "4": False}


class Guess:
    """A stand-in ``ask`` that answers every question with one label and records its options."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.options: list[dict[str, Any]] = []

    def __call__(self, kb: Any, question: str, **options: Any) -> Answer:
        self.options.append(options)
        item = AnswerItem(iri=f"urn:x:{self.label}", label=self.label, type=None, score=1.0, tier=0,
                          source="filtered", evidence=None, snippet="")
        return Answer(question=question, kb="mq", strategy=options["strategy"], items=[item])


def test_eval_reports_the_answerable_subset_and_asks_with_the_datasets_topic_mode(
        metaqa_dir: Path, metaqa_kb: Any, tmp_path: Path) -> None:
    guess = Guess("Film A")  # right for question 1 (answerable) and 4 (not answerable)
    result = evaluate("metaqa", metaqa_dir, kb=metaqa_kb, strategies=["offline"], out_dir=tmp_path / "out",
                      split="dev", plots=False, ask=guess)
    assert {o["topic"] for o in guess.options} == {"exclude"}
    oracle = result.metrics.oracle
    assert oracle is not None and oracle.with_path == 4 and oracle.answerable == 2
    assert oracle.strategies["offline"].to_dict() == {"questions": 2, "hits@1": 0.5, "f1": pytest.approx(2 / 3 / 2)}
    assert result.metrics.strategies["offline"].metrics["hits@1"] == 0.5  # 2 of 4 on the whole set
    assert "## Answerable subset (oracle): 2 of 4 questions" in result.markdown
    assert "| Hits@1 | 0.500 |" in result.markdown.split("Answerable subset")[1]
    saved = json.loads((tmp_path / "out" / "metrics.json").read_text("utf-8"))
    assert saved["oracle"]["answerable"] == 2 and saved["run"]["topic"] == "exclude"


def test_topic_can_be_chosen_and_auto_is_not_passed_on(metaqa_dir: Path, metaqa_kb: Any, tmp_path: Path) -> None:
    guess = Guess("Ann")
    evaluate("metaqa", metaqa_dir, kb=metaqa_kb, strategies=["offline"], out_dir=tmp_path / "o", split="dev",
             plots=False, ask=guess, topic="auto")
    assert guess.options and all("topic" not in o for o in guess.options)


def test_no_oracle_section_without_gold_paths() -> None:
    assert oracle_markdown(None) == []
