"""Dataset loaders: the real STaRK CSVs, a fixture SKB, and the KGQA text formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sparqlqa.errors import DatasetError
from sparqlqa.evaluation.datasets import datasets, load_questions

BASE = "https://sparqlqa.dev/kb/t/"


@pytest.mark.parametrize(("name", "folder", "sizes"), [
    ("stark-prime", "primekg", {"test": 2801, "val": 2241, "train": 6162, "human": 109}),
    ("stark-mag", "mag", {"test": 2665, "val": 2665, "train": 7993, "human": 84}),
    ("stark-amazon", "amazon", {"test": 1642, "val": 1548, "train": 5910, "human": 81}),
])
def test_real_stark_split_sizes_match_the_published_ones(shared_data: Path, name: str, folder: str,
                                                         sizes: dict[str, int]) -> None:
    for split, size in sizes.items():
        questions = load_questions(name, shared_data / "stark" / folder, base_iri=BASE, split=split)
        assert len(questions) == size, split
        assert all(q.gold_iris and q.text for q in questions)


def test_real_stark_rows_map_to_node_iris_in_split_order(shared_data: Path) -> None:
    root = shared_data / "stark" / "primekg"
    first_test_id = (root / "split" / "test.index").read_text().split()[0]
    questions = load_questions("stark-prime", shared_data / "stark", base_iri=BASE)  # STaRK root works too
    assert questions[0].id == first_test_id
    by_id = {q.id: q for q in load_questions("stark-prime", root, base_iri=BASE, split="all")}
    # row "10328" of stark_qa.csv has answer_ids [18423]; the human set's row 1 has [95312, 35882]
    assert by_id["10328"].gold_iris == {f"{BASE}node/18423"}
    assert "transport of long-chain fatty acids" in by_id["10328"].text
    human = {q.id: q for q in load_questions("stark-prime", root, base_iri=BASE, split="human")}
    assert human["1"].gold_iris == {f"{BASE}node/95312", f"{BASE}node/35882"}


def test_test_ratio_takes_the_first_fraction_as_starks_runner(shared_data: Path) -> None:
    root = shared_data / "stark" / "primekg"
    full = load_questions("stark-prime", root, base_iri=BASE)
    tenth = load_questions("stark-prime", root, base_iri=BASE, test_ratio=0.1)
    assert len(tenth) == int(2801 * 0.1) == 280
    assert [q.id for q in tenth] == [q.id for q in full[:280]]


def _write_stark(root: Path, rows: list[tuple[str, str, str]], split: list[str]) -> Path:
    (root / "stark_qa").mkdir(parents=True)
    (root / "split").mkdir()
    lines = ["id,query,answer_ids"] + [f'{i},"{q}","{a}"' for i, q, a in rows]
    (root / "stark_qa" / "stark_qa.csv").write_text("\n".join(lines) + "\n")
    (root / "split" / "test.index").write_text("\n".join(split))
    return root


def test_fixture_skb_ids_map_to_the_right_nodes(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from stark_fixture import build_skb

    from sparqlqa.ingest import ingest

    kb = ingest([build_skb(tmp_path / "skb", "prime")], kb="sprime", format="stark",
                options={"dataset": "prime"})
    qa = _write_stark(tmp_path / "qa", [("7", 'Which gene, mutated in ""Li-Fraumeni"", binds MDM2?', "[0]"),
                                        ("8", "Which disease, with sarcoma, involves TP53?", "[3, 4]")], ["8", "7"])
    questions = load_questions("stark-prime", qa, base_iri=kb.manifest.base_iri)
    assert [q.id for q in questions] == ["8", "7"]
    assert questions[1].text == 'Which gene, mutated in "Li-Fraumeni", binds MDM2?'
    labels = {}
    for iri in questions[0].gold_iris | questions[1].gold_iris:
        rows = kb.query(f"SELECT ?l WHERE {{ <{iri}> <http://www.w3.org/2000/01/rdf-schema#label> ?l }}").rows
        labels[iri.rsplit("/", 1)[1]] = rows[0][0].value
    assert labels == {"0": "TP53", "3": "Li-Fraumeni syndrome", "4": "Sarcoma"}


def test_stark_answer_ids_are_parsed_without_eval(tmp_path: Path) -> None:
    root = _write_stark(tmp_path, [("1", "q", "__import__('os').system('false')")], ["1"])
    with pytest.raises(DatasetError, match="answer_ids must be a list"):
        load_questions("stark-mag", root, base_iri=BASE)


def test_stark_split_errors_say_where(tmp_path: Path) -> None:
    root = _write_stark(tmp_path, [("1", "q", "[1]")], ["1", "99"])
    with pytest.raises(DatasetError, match=r"1 id\(s\) not in stark_qa\.csv"):
        load_questions("stark-amazon", root, base_iri=BASE)
    with pytest.raises(DatasetError, match="split file missing"):
        load_questions("stark-amazon", root, base_iri=BASE, split="val")
    with pytest.raises(DatasetError, match="not a STaRK"):
        load_questions("stark-amazon", tmp_path / "split", base_iri=BASE)


def test_real_pathquestion_and_metaqa_files(shared_data: Path) -> None:
    pq = load_questions("pathquestion", shared_data / "pathquestion" / "PQ-2H.txt")
    assert len(pq) == 1908
    assert pq[0].gold_labels == {"united_kingdom"} and not pq[0].gold_iris
    assert pq[0].text == "which nationality is frederica_of_mecklenburg-strelitz 's couple ?"
    meta = load_questions("metaqa", shared_data / "metaqa" / "1-hop")  # folder: qa_test.txt, else qa_dev.txt
    assert len(meta) == 9992
    assert meta[0].text == "what movies did Temuera Morrison act in"
    assert meta[0].gold_labels == {"Once Were Warriors", "Tracker", "River Queen"}
    assert meta[0].meta["topic"] == "Temuera Morrison"
    ntm = load_questions("metaqa", shared_data / "metaqa" / "1-hop" / "ntm", split="dev")
    assert len(ntm) == 9992


def test_pathquestion_answer_alternatives_and_wc2014(tmp_path: Path) -> None:
    src = tmp_path / "pq.txt"
    src.write_text("gender of x 's child ?\tfemale(male/female/)\tx#children#y#gender#female\n")
    [q] = load_questions("pathquestion", src)
    assert q.gold_labels == {"male", "female"} and q.meta["path"].startswith("x#children")
    wc = tmp_path / "wc.txt"
    wc.write_text("which club does the teammate of a play for ?\tclub_b/club_c\ta#teammate#b#plays_for#club_b\n")
    [w] = load_questions("wc2014", wc)
    assert w.gold_labels == {"club_b", "club_c"}


def test_text_format_errors_carry_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("good question [x]\tans\nno answers here\n")
    with pytest.raises(DatasetError, match=r"bad.txt:2:"):
        load_questions("metaqa", bad)
    with pytest.raises(DatasetError, match=r"bad.txt:2:"):
        load_questions("pathquestion", bad)
    with pytest.raises(DatasetError, match="no MetaQA question file"):
        load_questions("metaqa", tmp_path)


def test_jsonl_answers_are_iris_or_labels(tmp_path: Path) -> None:
    src = tmp_path / "mine.jsonl"
    src.write_text(json.dumps({"id": "q1", "question": "Who directed Alien?",
                               "answers": ["https://example.org/ridley", "Ridley Scott"], "level": 1}) + "\n"
                   + json.dumps({"question": "Second?", "answers": ["<urn:x:1>"]}) + "\n")
    first, second = load_questions("jsonl", src)
    assert first.id == "q1" and first.gold_iris == {"https://example.org/ridley"}
    assert first.gold_labels == {"Ridley Scott"} and first.meta == {"level": 1}
    assert second.id == "2" and second.gold_iris == {"urn:x:1"}


def test_jsonl_errors_and_duplicate_ids(tmp_path: Path) -> None:
    src = tmp_path / "mine.jsonl"
    src.write_text('{"question": "q", "answers": "Paris"}\n')
    with pytest.raises(DatasetError, match=r"mine\.jsonl:1: \"answers\" must be a list"):
        load_questions("jsonl", src)
    src.write_text('{"id": 1, "question": "q", "answers": []}\n{"id": 1, "question": "r", "answers": []}\n')
    with pytest.raises(DatasetError, match="appears twice"):
        load_questions("jsonl", src)


def test_dataset_registry_names() -> None:
    assert set(datasets.names()) == {"stark-prime", "stark-mag", "stark-amazon", "metaqa", "pathquestion",
                                     "wc2014", "jsonl", "spider4sparql"}
    assert datasets.get("stark-mag").kind == "retrieval" and datasets.get("metaqa").kind == "kgqa"
    assert datasets.get("spider4sparql").kind == "execution"
