"""Benchmarks behind one interface: a :class:`Dataset` loads :class:`Question` objects.

Gold answers are KB node IRIs (STaRK: node id ``N`` → ``{base_iri}node/N``) or
labels matched to nodes case-insensitively (MetaQA, PathQuestion, WC2014).

>>> import tempfile, pathlib
>>> src = pathlib.Path(tempfile.mkdtemp()) / "qa.txt"
>>> _ = src.write_text("what movies did [Tom Hanks] act in\\tBig|Splash\\n")
>>> [q] = load_questions("metaqa", src)
>>> q.id, q.text, sorted(q.gold_labels), q.meta["topic"]
('1', 'what movies did Tom Hanks act in', ['Big', 'Splash'], 'Tom Hanks')
"""

from __future__ import annotations

__all__ = ["APART_EMPTY", "APART_VOCABULARY", "Dataset", "JsonlDataset", "MetaQA", "PathQuestion", "Question",
           "Spider4Sparql", "StarkAmazon", "StarkMag", "StarkPrime", "WorldCup2014", "datasets", "graph_files",
           "load_questions", "parse_path_answers"]

import ast
import csv
import json
import re
import sys
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from sparqlqa.errors import DatasetError
from sparqlqa.registry import Registry
from sparqlqa.stages.modes import TopicMode
from sparqlqa.text_input import DATASET, clean_text

#: the splits ``--split`` accepts (``human``: STaRK's human-generated set)
SPLITS: tuple[str, ...] = ("test", "val", "dev", "train", "human", "all")


#: one gold row of an execution-scored question: each cell's lexical form (IRIs for nodes), None unbound
GoldRow = tuple[str | None, ...]


@dataclass(frozen=True)
class Question:
    """One benchmark question and its gold answers: nodes (``gold_iris``/``gold_labels``), or the rows of
    the gold query (``gold_rows``, scored by execution accuracy; ``gold_ordered``: the gold has ORDER BY).
    ``db``: the graph it asks, in a benchmark with one KB per graph (Spider4SPARQL); ``None``: the run's KB."""

    id: str
    text: str
    gold_iris: frozenset[str] = frozenset()
    gold_labels: frozenset[str] = frozenset()
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    db: str | None = None
    gold_rows: tuple[GoldRow, ...] | None = None
    gold_ordered: bool = False

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "question": self.text, "gold_iris": sorted(self.gold_iris),
                                "gold_labels": sorted(self.gold_labels), **({"meta": self.meta} if self.meta else {})}
        if self.db is not None:
            data["db"] = self.db
        if self.gold_rows is not None:
            data.update(gold_rows=[list(row) for row in self.gold_rows], gold_ordered=self.gold_ordered)
        return data


class Dataset(ABC):
    """One benchmark format.  Options (``base_iri``, ``split``, ``test_ratio``) come to the constructor."""

    #: the name the format is registered under in :data:`datasets` (the registry sets it)
    name: ClassVar[str] = ""
    #: "retrieval" (STaRK metrics), "kgqa" (Hits@1, F1) or "execution" (the answer's rows against the gold's)
    kind: ClassVar[str] = "kgqa"
    #: answers ranked per question when ``--k`` is not given (an execution-scored answer needs all its rows)
    default_k: ClassVar[int] = 20
    #: what the answers do with the nodes a question names, as the gold does (``ask(topic=...)``): MetaQA's
    #: gold never holds the topic entity (``exclude``); PathQuestion's sometimes does (``auto``)
    topic: ClassVar[str] = TopicMode.AUTO

    def __init__(self, *, base_iri: str = "", split: str | None = None, test_ratio: float = 1.0) -> None:
        if split is not None and split not in SPLITS:
            raise DatasetError(f"unknown split {split!r}", hint="use one of: " + ", ".join(SPLITS))
        if not 0.0 < test_ratio <= 1.0:
            raise DatasetError(f"--test-ratio must be in (0, 1], not {test_ratio}")
        self.base_iri = base_iri
        self.split = split
        self.test_ratio = test_ratio

    @abstractmethod
    def load(self, source: Path) -> list[Question]:
        """The questions of ``source`` (a file or folder), in file order."""

    def _ratio(self, questions: list[Question]) -> list[Question]:
        """STaRK's ``--test-ratio``: the first ``int(n * ratio)`` questions of the split."""
        if self.test_ratio >= 1.0:
            return questions
        return questions[: int(len(questions) * self.test_ratio)]


datasets: Registry[type[Dataset]] = Registry("dataset", ("sparqlqa.evaluation.datasets",),
                                               name_attribute="name")


def load_questions(name: str, source: str | Path, **options: Any) -> list[Question]:
    """Load ``source`` with the dataset format registered as ``name``."""
    path = Path(source).expanduser()
    if not path.exists():
        raise DatasetError(f"{path}: no such file or folder")
    questions = [_clean(q, path) for q in datasets.get(name)(**options).load(path)]
    seen: set[str] = set()
    for question in questions:
        if question.id in seen:
            raise DatasetError(f"{path}: question id {question.id!r} appears twice",
                               hint="every question needs a unique id")
        seen.add(question.id)
    return questions


def _clean(question: Question, path: Path) -> Question:
    """``question`` with its text checked once, here at the edge (:func:`~sparqlqa.text_input.clean_text`):
    stray control characters become spaces; invalid Unicode or an overlong question is an error."""
    text = clean_text(question.text, kind=DATASET, field=f"{path}: question {question.id!r}")
    return question if text == question.text else replace(question, text=text)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, line) of the non-blank lines of a UTF-8 text file."""
    try:
        with path.open(encoding="utf-8-sig") as handle:
            for number, line in enumerate(handle, start=1):
                line = line.rstrip("\r\n")
                if line.strip():
                    yield number, line
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _pick_file(source: Path, candidates: list[str], what: str) -> Path:
    if source.is_file():
        return source
    for name in candidates:
        if (source / name).is_file():
            return source / name
    raise DatasetError(f"{source}: no {what} file here (looked for {', '.join(candidates)})",
                       hint="pass the question file itself, or a folder holding one of those")


# --- STaRK ------------------------------------------------------------------------------


def _parse_answer_ids(text: str, where: str) -> list[int]:
    """STaRK's ``answer_ids`` cell: a list literal of node ids, parsed without ``eval``.

    >>> _parse_answer_ids("[95312, 35882]", "x")
    [95312, 35882]
    """
    try:
        value = json.loads(text)
    except ValueError:
        try:
            value = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            value = None
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise DatasetError(f"{where}: answer_ids must be a list of node ids, found {text[:60]!r}")
    return value


class StarkDataset(Dataset):
    """STaRK QA: ``stark_qa/stark_qa.csv`` + ``split/{train,val,test}.index``, or the human set.

    ``source`` is the dataset's folder (``…/stark/primekg``), the STaRK root
    (holding ``prime``/``primekg``, ``mag``, ``amazon``), or a QA CSV file.
    """

    kind = "retrieval"
    folders: ClassVar[tuple[str, ...]] = ()

    def load(self, source: Path) -> list[Question]:
        root = self._root(source)
        split = self.split or "test"
        if split == "human":
            csv_path = source if source.is_file() else root / "stark_qa" / "stark_qa_human_generated_eval.csv"
            return self._ratio(list(self._read_csv(csv_path).values()))
        csv_path = source if source.is_file() else root / "stark_qa" / "stark_qa.csv"
        rows = self._read_csv(csv_path)
        if split == "all":
            return self._ratio([rows[key] for key in sorted(rows, key=int)])
        split_name = "val" if split == "dev" else split
        split_dir = root / "split" if source.is_dir() else csv_path.parent.parent / "split"
        ids = self._read_index(split_dir / f"{split_name}.index")
        missing = [i for i in ids if i not in rows]
        if missing:
            raise DatasetError(f"{split_dir / (split_name + '.index')}: {len(missing)} id(s) not in "
                               f"{csv_path.name}, e.g. {missing[0]}",
                               hint="use the split files that came with this QA file")
        return self._ratio([rows[i] for i in ids])

    def _root(self, source: Path) -> Path:
        if source.is_file():
            return source.parent.parent
        if (source / "stark_qa").is_dir():
            return source
        for name in self.folders:
            if (source / name / "stark_qa").is_dir():
                return source / name
        raise DatasetError(f"{source}: not a STaRK {self.name} folder (no stark_qa/ inside)",
                           hint=f"pass the folder holding stark_qa/ and split/ (e.g. …/stark/{self.folders[-1]})")

    @staticmethod
    def _read_index(path: Path) -> list[str]:
        if not path.is_file():
            raise DatasetError(f"{path}: split file missing", hint="download the split files with the QA set")
        ids = [line.strip() for _, line in _lines(path)]
        bad = [i for i in ids if not i.isdigit()]
        if bad:
            raise DatasetError(f"{path}: split files hold one numeric id per line, found {bad[0]!r}")
        return ids

    def _read_csv(self, path: Path) -> dict[str, Question]:
        if not path.is_file():
            raise DatasetError(f"{path}: QA file missing")
        rows: dict[str, Question] = {}
        csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            needed = {"id", "query", "answer_ids"}
            if not needed <= set(reader.fieldnames or ()):
                raise DatasetError(f"{path}: expected columns id,query,answer_ids, found "
                                   f"{','.join(reader.fieldnames or ())}")
            for row in reader:
                where = f"{path}:{reader.line_num}"
                qid = (row["id"] or "").strip()
                if not qid.isdigit():
                    raise DatasetError(f"{where}: id must be a number, found {qid!r}")
                answers = _parse_answer_ids(row["answer_ids"] or "", where)
                iris = frozenset(f"{self.base_iri}node/{n}" for n in answers)
                rows[qid] = Question(qid, row["query"] or "", iris, frozenset(), {"answer_ids": answers})
        return rows


@datasets.register("stark-prime")
class StarkPrime(StarkDataset):
    folders = ("prime", "primekg")


@datasets.register("stark-mag")
class StarkMag(StarkDataset):
    folders = ("mag",)


@datasets.register("stark-amazon")
class StarkAmazon(StarkDataset):
    folders = ("amazon",)


# --- KGQA text formats ------------------------------------------------------------------

_TOPIC = re.compile(r"\[([^\]]+)\]")


@datasets.register("metaqa")
class MetaQA(Dataset):
    """MetaQA (1/2/3-hop, vanilla and NTM): ``question with [entity] TAB ans1|ans2``.

    The brackets are removed from the question text; the topic entity is kept
    in ``meta["topic"]``.  A folder holds ``qa_{split}.txt`` (default: test, then dev).  A question-type
    file beside it (``qa_dev_qtype.txt``, one type per line) puts each question's relation path in
    ``meta["qtype"]`` (``actor_to_movie``), from which ``eval`` finds the answerable subset.
    """

    topic = TopicMode.EXCLUDE

    def load(self, source: Path) -> list[Question]:
        names = [f"qa_{self.split}.txt"] if self.split else ["qa_test.txt", "qa_dev.txt"]
        path = _pick_file(source, names, "MetaQA question")
        qtypes = _question_types(path)
        questions = []
        for number, line in _lines(path):
            fields = line.split("\t")
            if len(fields) != 2 or not fields[1].strip():
                raise DatasetError(f"{path}:{number}: expected 'question TAB ans1|ans2', found {line[:80]!r}")
            topic = _TOPIC.search(fields[0])
            text = _TOPIC.sub(lambda m: m.group(1), fields[0]).strip()
            labels = frozenset(a.strip() for a in fields[1].split("|") if a.strip())
            meta: dict[str, Any] = {"topic": topic.group(1)} if topic else {}
            if number <= len(qtypes) and qtypes[number - 1].strip():
                meta["qtype"] = qtypes[number - 1].strip()
            questions.append(Question(str(number), text, frozenset(), labels, meta))
        return self._ratio(questions)


def _question_types(path: Path) -> list[str]:
    """The lines of MetaQA's ``<stem>_qtype.txt`` beside ``path`` (line ``n`` types question line ``n``)."""
    types = path.with_name(path.stem + "_qtype.txt")
    if not types.is_file():
        return []
    try:
        return types.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []


def parse_path_answers(field_text: str) -> frozenset[str]:
    """PathQuestion/WC2014 answers: ``main(a/b/)`` → {a, b}; else split on ``|`` or ``/``.

    Names may hold brackets themselves (PQL: ``Hard_Times(Hard_Times_(live)/Hard_Times/)``): the list is
    the bracketed tail whose own brackets balance and whose head balances too, preferring one that
    lists the head answer.

    >>> sorted(parse_path_answers("female(male/female/)")), sorted(parse_path_answers("spain/italy"))
    (['female', 'male'], ['italy', 'spain'])
    >>> sorted(parse_path_answers("Hard_Times(Hard_Times_(live)/Hard_Times/)"))
    ['Hard_Times', 'Hard_Times_(live)']
    """
    text = field_text.strip()
    split = _answer_list(text)
    if split is not None:
        main, inside = split
        names = [a.strip() for a in inside.split("/") if a.strip()]
        return frozenset(names or [main.strip()])
    separator = "|" if "|" in text else "/"
    return frozenset(a.strip() for a in text.split(separator) if a.strip())


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += (char == "(") - (char == ")")
        if depth < 0:
            return False
    return depth == 0


def _answer_list(text: str) -> tuple[str, str] | None:
    """``(head, list)`` of ``head(list)``, where both may hold balanced brackets; ``None`` when the text
    has no such tail.  Of several readings, the first whose list names the head wins, else the first."""
    if not text.endswith(")"):
        return None
    readings = [(text[:i], text[i + 1 : -1]) for i, char in enumerate(text[:-1]) if char == "("]
    readings = [(head, inside) for head, inside in readings if head.strip() and _balanced(head) and _balanced(inside)]
    for head, inside in readings:
        if head.strip() in {a.strip() for a in inside.split("/")}:
            return head, inside
    return readings[0] if readings else None


class TabbedPathDataset(Dataset):
    """``question TAB answers TAB path…`` (PathQuestion PQ/PQL, WorldCup2014)."""

    def load(self, source: Path) -> list[Question]:
        path = _pick_file(source, [f"{self.split}.txt"] if self.split else [], f"{self.name} question")
        questions = []
        for number, line in _lines(path):
            fields = line.split("\t")
            labels = parse_path_answers(fields[1]) if len(fields) >= 2 else frozenset()
            if len(fields) < 2 or not fields[0].strip() or not labels:
                raise DatasetError(f"{path}:{number}: expected 'question TAB answers TAB path', "
                                   f"found {line[:80]!r}")
            meta = {"path": fields[2].strip()} if len(fields) > 2 else {}
            labels, meta = self._gold(fields, labels, meta)
            questions.append(Question(str(number), fields[0].strip(), frozenset(), labels, meta))
        return self._ratio(questions)

    def _gold(self, fields: list[str], labels: frozenset[str], meta: dict[str, Any],
              ) -> tuple[frozenset[str], dict[str, Any]]:
        """The gold labels and meta of one line (column 2's answers here)."""
        return labels, meta


@datasets.register("pathquestion")
class PathQuestion(TabbedPathDataset):
    """PathQuestion PQ / PQL: the gold keeps the topic entity when the path leads back to it, so the
    answers do too when the query returns only it (``topic = "auto"``)."""



@datasets.register("wc2014")
class WorldCup2014(TabbedPathDataset):
    """WorldCup2014: ``question TAB one example answer TAB path TAB full/answer/set``.  Many questions
    have several right answers ("name a player who plays at Forward from Mexico"), so the gold is the
    answer set of column 4 (with the example, should the set miss it); the example answer is kept in
    ``meta["example"]``.  A line without column 4 is read like PathQuestion (column 2 is the gold).

    >>> import tempfile, pathlib
    >>> src = pathlib.Path(tempfile.mkdtemp()) / "wc.txt"
    >>> _ = src.write_text("a forward from Mexico ?\\tAlan_PULIDO\\tAlan_PULIDO#plays_position#Forward\\t"
    ...                    "Oribe_PERALTA/Alan_PULIDO/\\n")
    >>> [q] = load_questions("wc2014", src)
    >>> sorted(q.gold_labels), q.meta["example"]
    (['Alan_PULIDO', 'Oribe_PERALTA'], 'Alan_PULIDO')
    """

    def _gold(self, fields: list[str], labels: frozenset[str], meta: dict[str, Any],
              ) -> tuple[frozenset[str], dict[str, Any]]:
        answers = parse_path_answers(fields[3]) if len(fields) > 3 else frozenset()
        if not answers:
            return labels, meta
        return answers | labels, {**meta, "example": fields[1].strip()}


# --- users' own sets --------------------------------------------------------------------

_IRI = re.compile(r"^<?[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"]+>?$")


def _is_iri(text: str) -> bool:
    """Absolute IRIs (``scheme:…`` with ``//`` or ``urn:``, optionally in ``<>``) are gold nodes."""
    return bool(_IRI.match(text)) and ("://" in text or text.lstrip("<").startswith("urn:"))


@datasets.register("jsonl")
class JsonlDataset(Dataset):
    """One JSON object per line: ``{"id": …, "question": …, "answers": [IRI or label, …]}``.

    ``id`` defaults to the line number; answers that are absolute IRIs are
    matched by IRI, the others by label.
    """

    def load(self, source: Path) -> list[Question]:
        path = _pick_file(source, [f"{self.split}.jsonl"] if self.split else [], "JSONL question")
        questions = []
        for number, line in _lines(path):
            where = f"{path}:{number}"
            try:
                obj = json.loads(line)
            except ValueError as exc:
                raise DatasetError(f"{where}: not valid JSON ({exc})") from None
            text, answers = (obj.get("question"), obj.get("answers")) if isinstance(obj, dict) else (None, None)
            if not isinstance(text, str) or not text.strip():
                raise DatasetError(f"{where}: needs a non-empty \"question\" string")
            if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
                raise DatasetError(f"{where}: \"answers\" must be a list of strings (IRIs or labels)")
            iris = frozenset(a.strip().strip("<>") for a in answers if _is_iri(a.strip()))
            labels = frozenset(a.strip() for a in answers if a.strip() and not _is_iri(a.strip()))
            qid = str(obj.get("id", number))
            extra = {k: v for k, v in obj.items() if k not in ("id", "question", "answers")}
            questions.append(Question(qid, text.strip(), iris, labels, extra))
        return self._ratio(questions)


# --- Spider4SPARQL: execution accuracy, one KB per graph ------------------------------------

#: why a question is reported apart from the main figure (its gold says little)
APART_EMPTY = "empty gold"
APART_VOCABULARY = "gold vocabulary missing"
_S4S_FIELDS = ("id", "db", "question", "gold_rows")


@datasets.register("spider4sparql")
class Spider4Sparql(Dataset):
    """Spider4SPARQL (Kosten et al., 2023): ``questions_dev.json``, a JSON list of ``{"id", "db", "question",
    "gold_sparql", "gold_vars", "gold_rows", "gold_ordered", "form", "gold_vocab_missing"}``, beside ``kg/<db>.nt``
    (one graph per database: each is its own KB, asked by ``db``).  ``source``: the file, or a folder holding
    it (``questions_{split}.json``, default dev).  ``meta``: ``form`` (the benchmark's rough class of the gold
    query), ``gold_sparql``, ``gold_vars``, and ``apart`` when the gold is empty or uses names no mapping
    produces (reported apart from the main figure).

    >>> import tempfile, pathlib, json
    >>> src = pathlib.Path(tempfile.mkdtemp()) / "questions_dev.json"
    >>> _ = src.write_text(json.dumps([{"id": "q1", "db": "concert", "question": "How many singers?",
    ...                                 "gold_rows": [["6"]], "form": "count"}]))
    >>> [q] = load_questions("spider4sparql", src)
    >>> q.db, q.gold_rows, q.gold_ordered, q.meta["form"], "apart" in q.meta
    ('concert', (('6',),), False, 'count', False)
    """

    kind = "execution"
    default_k = 1000

    def load(self, source: Path) -> list[Question]:
        path = _pick_file(source, [f"questions_{self.split or 'dev'}.json"], "Spider4SPARQL questions")
        try:
            entries = json.loads(path.read_text("utf-8-sig"))
        except UnicodeDecodeError as exc:
            raise DatasetError(f"{path}: not UTF-8 text ({exc.reason})") from None
        except ValueError as exc:
            raise DatasetError(f"{path}: not valid JSON ({exc})") from None
        if not isinstance(entries, list):
            raise DatasetError(f"{path}: expected a JSON list of questions")
        return self._ratio([_s4s_question(entry, f"{path}: entry {number}")
                            for number, entry in enumerate(entries, start=1)])


def _s4s_question(entry: object, where: str) -> Question:
    """One entry of ``questions_dev.json`` as a question (its fields checked)."""
    if not isinstance(entry, dict) or any(key not in entry for key in _S4S_FIELDS):
        raise DatasetError(f"{where}: needs the keys {', '.join(_S4S_FIELDS)}")
    rows = entry["gold_rows"]
    if not isinstance(rows, list) or not all(
            isinstance(row, list) and all(c is None or isinstance(c, str) for c in row) for row in rows):
        raise DatasetError(f"{where}: gold_rows must be a list of rows of strings (or null)")
    if not isinstance(entry["question"], str) or not str(entry["db"]).strip():
        raise DatasetError(f"{where}: needs a \"question\" string and a \"db\"")
    missing = entry.get("gold_vocab_missing") or []
    apart = APART_VOCABULARY if missing else APART_EMPTY if not rows else None
    meta = {"form": str(entry.get("form") or "other"), "gold_sparql": entry.get("gold_sparql"),
            "gold_vars": entry.get("gold_vars") or [], **({"apart": apart} if apart else {}),
            **({"gold_vocab_missing": missing} if missing else {})}
    return Question(str(entry["id"]), entry["question"].strip(), meta=meta, db=str(entry["db"]).strip(),
                    gold_rows=tuple(tuple(row) for row in rows), gold_ordered=bool(entry.get("gold_ordered")))


def graph_files(source: str | Path) -> dict[str, Path]:
    """``{db: kg/<db>.nt}`` of a Spider4SPARQL folder (``source``: the folder, or its question file)."""
    folder = Path(source).expanduser()
    folder = folder.parent if folder.is_file() else folder
    graphs = folder / "kg"
    if not graphs.is_dir():
        raise DatasetError(f"{folder}: no kg/ folder beside the questions",
                           hint="pass the Spider4SPARQL folder holding questions_dev.json and kg/<db>.nt")
    return {path.stem: path for path in sorted(graphs.glob("*.nt"))}
