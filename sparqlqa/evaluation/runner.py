"""Run strategies over questions; one JSONL row per (question, strategy), resumable.

Every finished (question, strategy) pair is appended to ``questions.jsonl`` in
the output folder (write + flush + fsync per row).  A run that is killed —
even with SIGKILL mid-write — resumes where it stopped: pairs already written
are skipped and a truncated last line is cut off.  Answers that still wait for
LLM responses (``--llm-cache only`` misses) are *not* written, so the pair runs
again once the answers are imported; the LLM cache makes every call made
before the kill a cache hit.

The answer function is injectable (``ask=``) so tests and benchmarks can run
the harness with a stand-in; the default is :func:`sparqlqa.strategies.ask.ask`.
"""

from __future__ import annotations

__all__ = ["RESULTS_FILE", "AskFunction", "EvalError", "EvalRun", "LLMChoice", "Outcome", "ResultsFile", "RunSettings",
           "RunStats", "error_row", "execution_score", "select_questions"]

import contextvars
import json
import os
import random
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from sparqlqa.errors import (
    ConfigError,
    DatasetError,
    LLMAuthError,
    LLMUnavailable,
    NotInCache,
    SparqlqaError,
    StorageError,
)
from sparqlqa.evaluation.datasets import Question
from sparqlqa.evaluation.execution import ExecutionScore, score_rows
from sparqlqa.evaluation.metrics import RankedItem, answer_set, apply_tie_rule, question_metrics
from sparqlqa.evaluation.results import LLMUsage, QuestionResult, TopItem
from sparqlqa.llm.context import llm_context
from sparqlqa.paths import atomic_write_json, make_folder
from sparqlqa.stages.modes import TopicMode

if TYPE_CHECKING:
    from sparqlqa.llm import LLM, LLMCall
    from sparqlqa.stages.answer import Answer

#: the ``llm=`` argument of ``ask`` for one strategy: an LLM object, ``"offline"``, or None (the default)
LLMChoice: TypeAlias = "LLM | str | None"

#: ``ask(kb, question, *, strategy=, llm=, k=, llm_cache=) -> Answer``
AskFunction = Callable[..., Any]

RESULTS_FILE = "questions.jsonl"
RUN_FILE = "run.json"
#: errors that a later run may not see again (rate limits, network): the pair is left for the rerun
TRANSIENT_ERRORS = (LLMUnavailable, ConnectionError, TimeoutError)
#: stop when this many pairs failed or crashed and none succeeded
FAILURE_FUSE = 5


class EvalError(SparqlqaError):
    """The evaluation cannot go on (bad settings, a broken strategy)."""


def _default_ask() -> AskFunction:
    """:func:`sparqlqa.strategies.ask.ask` (imported on first use)."""
    try:
        from sparqlqa.strategies.ask import ask
    except ModuleNotFoundError as exc:
        if exc.name == "sparqlqa.strategies.ask":
            raise EvalError("the question-answering pipeline is not installed (sparqlqa.strategies.pipeline)") from None
        raise
    return ask


@dataclass
class RunSettings:
    """What a run is; ``identity()`` must match when an output folder is resumed."""

    dataset: str
    source: str
    kb: str
    strategies: list[str]
    k: int = 20
    llm: str | None = None
    llm_cache: str | None = None
    split: str | None = None
    test_ratio: float = 1.0
    limit: int | None = None
    sample: int | None = None
    seed: int = 0
    workers: int = 1
    kb_generation: str = ""
    #: what answers do with the nodes a question names (``ask(topic=...)``); the dataset's, as its gold does
    topic: str = TopicMode.AUTO
    #: ``--embedder`` (None: the default); an index is searched only with the embedder that built it
    embedder: str | None = None
    #: one KB per graph (Spider4SPARQL): a question about graph ``db`` asks KB ``kb_prefix + db``
    kb_prefix: str | None = None

    def identity(self) -> dict[str, Any]:
        """Settings that change answers or the question set's meaning (not their number)."""
        return {"dataset": self.dataset, "source": self.source, "kb": self.kb, "k": self.k,
                "llm": self.llm, "split": self.split, "test_ratio": self.test_ratio,
                "kb_generation": self.kb_generation, **({"topic": self.topic} if self.topic != TopicMode.AUTO else {}),
                "embedder": self.embedder, **({"kb_prefix": self.kb_prefix} if self.kb_prefix is not None else {})}


def select_questions(questions: Sequence[Question], *, limit: int | None = None,
                     sample: int | None = None, seed: int = 0) -> list[Question]:
    """``--sample N --seed S`` (a seeded random subset, kept in file order), then ``--limit N``.

    >>> qs = [Question(str(i), "q") for i in range(10)]
    >>> [q.id for q in select_questions(qs, sample=3, seed=1)] == [q.id for q in select_questions(qs, sample=3, seed=1)]
    True
    >>> [q.id for q in select_questions(qs, limit=2)]
    ['0', '1']
    """
    chosen = list(questions)
    if sample is not None and sample < len(chosen):
        keep = set(random.Random(seed).sample(range(len(chosen)), sample))
        chosen = [q for i, q in enumerate(chosen) if i in keep]
    if limit is not None:
        chosen = chosen[:limit]
    return chosen


class ResultsFile:
    """Append-only JSONL of result rows, durable per row, tolerant of a torn last line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def load(self) -> dict[tuple[str, str], QuestionResult]:
        """Rows by (id, strategy); repairs a truncated last line in place."""
        if not self.path.exists():
            return {}
        data = self.path.read_bytes()
        rows: dict[tuple[str, str], QuestionResult] = {}
        good_end = 0
        for line in data.splitlines(keepends=True):
            try:
                row = json.loads(line)
            except ValueError:
                if good_end + len(line) < len(data):  # a bad line in the middle: not ours to fix
                    raise DatasetError(f"{self.path}: corrupt line at byte {good_end}",
                                       hint="remove that line, or start afresh in another --out") from None
                break
            if isinstance(row, dict) and "id" in row and "strategy" in row:
                rows.setdefault((str(row["id"]), str(row["strategy"])), QuestionResult.from_dict(row))
            good_end += len(line)
        if good_end < len(data) or (data and not data.endswith(b"\n")):
            self._repair(good_end, complete=good_end == len(data))
        return rows

    def _repair(self, good_end: int, *, complete: bool) -> None:
        with self.path.open("r+b") as handle:
            handle.truncate(good_end)
            if complete:  # the last row parsed but lost its newline
                handle.seek(0, os.SEEK_END)
                handle.write(b"\n")
            handle.flush()
            os.fsync(handle.fileno())

    def append(self, row: QuestionResult) -> None:
        line = (json.dumps(row.to_dict(), ensure_ascii=False, default=str) + "\n").encode("utf-8")
        with self._lock:
            make_folder(self.path.parent, what="the report folder")
            try:
                with self.path.open("ab") as handle:
                    handle.write(line)
                    handle.flush()
                    os.fsync(handle.fileno())
            except OSError as exc:
                raise StorageError.from_os_error(exc, self.path, doing="append a result to") from None


def _ranked_items(answer: Answer) -> list[RankedItem]:
    """What the metrics read of the answer's items (the scored nodes themselves)."""
    return [RankedItem(iri=str(item.iri), label=item.label or "", score=float(item.score), tier=item.tier,
                       source=item.source) for item in answer.items]


def _llm_usage(calls: Iterable[LLMCall]) -> LLMUsage:
    """Calls, tokens, cost and cache hits of a list of ``LLMCall`` records."""
    return LLMUsage.of(calls)


def _jsonable(obj: object) -> object:
    from sparqlqa.stages.answer import to_jsonable

    return to_jsonable(obj)


def _evidence(answer: Answer, iris: Iterable[str]) -> dict[str, object]:
    wanted = set(iris)
    return {str(item.iri): _jsonable(item.evidence) for item in answer.items
            if item.iri in wanted and item.evidence is not None}


def execution_score(question: Question, answer: Answer | None) -> ExecutionScore | None:
    """An execution-scored question's score: the answer's table rows (lexical forms, IRIs for nodes) against
    the gold rows (no answer: none, wrong); None for a question scored by its gold nodes.  Rows no query
    matched (vector fill-in, ``Table.matched`` false) are no rows: they are not what a query returned."""
    if question.gold_rows is None:
        return None
    rows: list[list[str | None]] = []
    if answer is not None:
        from sparqlqa.stages.answer import answer_table

        table = answer.table or answer_table(answer)
        rows = table.lexical_rows() if table.matched else []
    return score_rows(rows, question.gold_rows, ordered=question.gold_ordered,
                      form=str(question.meta.get("form", "other")), apart=question.meta.get("apart"))


def _result_row(question: Question, strategy: str, answer: Answer, wall_ms: float, k: int) -> QuestionResult:
    """The per-question record of one answer (metrics, ranking, triplets, SPARQL, evidence, cost; the rows
    against the gold's for an execution-scored question)."""
    items = _ranked_items(answer)
    metrics = question_metrics(items, question.gold_iris, question.gold_labels)
    ranked = apply_tie_rule(items)
    top = [TopItem(i, it.iri, it.label, it.score, it.tier, it.source) for i, it in enumerate(ranked[: max(k, 1)], 1)]
    rank = metrics["rank"]
    evidence_for = [ranked[0].iri] if ranked else []
    if isinstance(rank, int):
        evidence_for.append(ranked[rank - 1].iri)
    timings = {str(k_): float(v) for k_, v in answer.timings_ms.items()}
    return QuestionResult(
        id=question.id, strategy=strategy, question=question.text, gold_iris=sorted(question.gold_iris),
        gold_labels=sorted(question.gold_labels), metrics=metrics, answer_set=[it.iri for it in answer_set(ranked)],
        items=top, triplets=_jsonable(answer.triplets), sparql=[query.query for query in answer.queries],
        evidence=_evidence(answer, evidence_for), notes=[str(n) for n in answer.notes],
        llm=_llm_usage(answer.llm_calls), latency_ms=float(timings.get("total", wall_ms)), wall_ms=wall_ms,
        timings_ms=timings, strategy_used=str(answer.strategy), execution=execution_score(question, answer))


def _describe_error(error: BaseException, *, where: bool = False) -> str:
    """``"Type: message"``, with ``where=True`` also the innermost frame (``(at file.py:12 in f)``)
    so that a crash in a strategy can be found from the report alone.

    >>> try:
    ...     [].pop()
    ... except IndexError as exc:
    ...     _describe_error(exc, where=True).split(" (at ")[0]
    'IndexError: pop from empty list'
    """
    text = f"{type(error).__name__}: {error}"
    frames = traceback.extract_tb(error.__traceback__) if where else []
    if frames:
        last = frames[-1]
        text += f" (at {Path(last.filename).name}:{last.lineno} in {last.name})"
    return text


def error_row(question: Question, strategy: str, error: BaseException, wall_ms: float,
              *, crash: bool = False) -> QuestionResult:
    """The record of a pair whose strategy failed: every metric 0 (a miss), the error kept
    (``crash``: an unexpected exception, i.e. a bug, that repeated; its location is kept too)."""
    metrics = question_metrics([], question.gold_iris, question.gold_labels)
    return QuestionResult(id=question.id, strategy=strategy, question=question.text,
                          gold_iris=sorted(question.gold_iris), gold_labels=sorted(question.gold_labels),
                          metrics=metrics, latency_ms=wall_ms, wall_ms=wall_ms, strategy_used=strategy,
                          error=_describe_error(error, where=crash), crash=crash,
                          execution=execution_score(question, None))


def _split_warm_up(tasks: Sequence[tuple[Question, str]],
                  ) -> tuple[list[tuple[Question, str]], list[tuple[Question, str]]]:
    """(the first pair of each strategy, the others), both in task order.

    >>> q1, q2 = Question("1", "a"), Question("2", "b")
    >>> warm, rest = _split_warm_up([(q1, "x"), (q1, "y"), (q2, "x")])
    >>> [(q.id, s) for q, s in warm], [(q.id, s) for q, s in rest]
    ([('1', 'x'), ('1', 'y')], [('2', 'x')])
    """
    seen: set[str] = set()
    warm: list[tuple[Question, str]] = []
    rest: list[tuple[Question, str]] = []
    for question, strategy in tasks:
        (rest if strategy in seen else warm).append((question, strategy))
        seen.add(strategy)
    return warm, rest


#: errors that say the run itself is wrong (settings, KB, key, extras, files that cannot be written or
#: a damaged LLM cache): stop at once
ABORT_ERRORS: tuple[type[BaseException], ...] = (ConfigError, LLMAuthError, StorageError)


def _is_abort(exc: BaseException) -> bool:
    from sparqlqa.errors import KBError, MissingExtraError

    return isinstance(exc, (*ABORT_ERRORS, KBError, MissingExtraError))


@dataclass
class Outcome:
    """What happened to one (question, strategy) pair.

    ``status``: ``done`` (row written), ``error`` (strategy failed on it: row
    written, counted as a miss), ``pending`` (waits for imported LLM answers),
    ``failed`` (transient or unexpected error: not written, retried on rerun).
    """

    question: Question
    strategy: str
    status: str
    row: QuestionResult | None = None
    message: str = ""
    #: an unexpected exception (a bug) that repeated
    crash: bool = False


@dataclass
class RunStats:
    """Counts of one invocation of :meth:`EvalRun.run`."""

    total_pairs: int = 0
    already_done: int = 0
    done: int = 0
    errors: int = 0
    pending: int = 0
    failed: int = 0
    #: of ``errors``: unexpected exceptions (bugs) that repeated
    crashes: int = 0
    messages: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class EvalRun:
    """One evaluation: questions × strategies against one KB, results in ``out_dir``."""

    def __init__(self, kb: Any, questions: Sequence[Question], settings: RunSettings, out_dir: Path, *,
                 ask: AskFunction | None = None, llm: Mapping[str, LLMChoice] | None = None,
                 kb_of: Callable[[str], Any] | None = None) -> None:
        self.kb = kb
        #: the KB of a question's graph (``Question.db``), in a benchmark with one KB per graph
        self.kb_of = kb_of
        self.questions = list(questions)
        self.settings = settings
        self.out_dir = out_dir
        self.ask = ask
        #: the ``llm=`` argument per strategy (an LLM object, ``"offline"``, or None: the default)
        self.llm = dict(llm or {})
        self.results = ResultsFile(out_dir / RESULTS_FILE)
        #: crash rows not written yet (:meth:`_nothing_worked`)
        self._held: list[QuestionResult] = []

    def prepare(self) -> list[tuple[Question, str]]:
        """Check a previous run in ``out_dir`` is the same run; the pairs still to answer."""
        make_folder(self.out_dir, what="the report folder")
        run_path = self.out_dir / RUN_FILE
        previous: dict[str, Any] = {}
        if run_path.exists():
            try:
                previous = json.loads(run_path.read_text("utf-8"))
            except ValueError:
                previous = {}
            old = previous.get("identity", {})
            new = self.settings.identity()
            changed = sorted(key for key in new if key in old and old[key] != new[key])
            if changed:
                raise EvalError(f"{self.out_dir} holds a run with other settings ({', '.join(changed)})",
                                hint="use another --out folder, or delete this one to start afresh")
        strategies = list(dict.fromkeys([*previous.get("strategies", []), *self.settings.strategies]))
        atomic_write_json(run_path, {"identity": self.settings.identity(), "strategies": strategies,
                                     "settings": asdict(self.settings)})
        done = self.results.load()
        return [(q, s) for q in self.questions for s in self.settings.strategies if (q.id, s) not in done]

    def rows(self) -> list[QuestionResult]:
        """The written rows of this run's questions and strategies, in question order."""
        written = self.results.load()
        return [written[(q.id, s)] for q in self.questions for s in self.settings.strategies
                if (q.id, s) in written]

    def answer_one(self, question: Question, strategy: str, *, warm_up: bool = False) -> Outcome:
        """Ask one question with one strategy; never raises except for errors that end the run.

        A transient error (rate limit, network) leaves the pair for the rerun (``failed``); a
        sparqlqa error is the strategy's answer (``error``, a miss); any other exception is a bug: the
        pair is asked once more, and when it raises again it is an ``error`` too, with its message and
        location (a deterministic crash would fail every rerun, so it is counted, not retried)."""
        ask = self.ask or _default_ask()
        start = time.perf_counter()
        for attempt in (1, 2):
            try:
                with llm_context(question_id=question.id):  # pending LLM prompts say which question asked
                    chosen = {"embedder": self.settings.embedder} if self.settings.embedder else {}
                    topic = {"topic": self.settings.topic} if self.settings.topic != TopicMode.AUTO else {}
                    kb = self.kb_of(question.db) if self.kb_of is not None and question.db is not None else self.kb
                    answer = ask(kb, question.text, strategy=strategy, llm=self.llm.get(strategy),
                                 k=self.settings.k, llm_cache=self.settings.llm_cache, **topic, **chosen)
                break
            except NotInCache:
                return Outcome(question, strategy, "pending")
            except TRANSIENT_ERRORS as exc:
                return Outcome(question, strategy, "failed", message=_describe_error(exc))
            except SparqlqaError as exc:
                if _is_abort(exc):
                    raise
                wall = (time.perf_counter() - start) * 1000
                return Outcome(question, strategy, "error", error_row(question, strategy, exc, wall), str(exc))
            except Exception as exc:  # a bug in a strategy: once more, then an error
                if attempt == 2:
                    wall = (time.perf_counter() - start) * 1000
                    row = error_row(question, strategy, exc, wall, crash=True)
                    return Outcome(question, strategy, "error", row, row.error or "", crash=True)
        wall = (time.perf_counter() - start) * 1000
        if answer.pending_llm:
            return Outcome(question, strategy, "pending")
        row = _result_row(question, strategy, answer, wall, self.settings.k)
        row.warmup = warm_up
        return Outcome(question, strategy, "done", row)

    def _record(self, outcome: Outcome, stats: RunStats,
                on_outcome: Callable[[Outcome], None] | None) -> None:
        counter = {"done": "done", "error": "errors", "pending": "pending", "failed": "failed"}[outcome.status]
        setattr(stats, counter, getattr(stats, counter) + 1)
        stats.crashes += outcome.crash
        if outcome.row is not None:
            self._held.append(outcome.row)
        if not self._nothing_worked(stats):  # crash rows are held until something works (see _fuse)
            for row in self._held:
                self.results.append(row)
            self._held.clear()
        if outcome.message and len(stats.messages) < 20:
            stats.messages.append(f"{outcome.question.id}/{outcome.strategy}: {outcome.message}")
        if on_outcome is not None:
            on_outcome(outcome)
        if stats.failed + stats.crashes >= FAILURE_FUSE and self._nothing_worked(stats):
            self._held.clear()
            raise EvalError(f"the first {stats.failed + stats.crashes} questions all failed; stopping",
                            hint=f"first failure: {stats.messages[0] if stats.messages else '?'}")

    @staticmethod
    def _nothing_worked(stats: RunStats) -> bool:
        """No pair answered yet, only crashes and transient failures: the strategy itself may be broken,
        so its crash rows are not written yet (a rerun after the fix must ask those pairs again)."""
        return stats.done + stats.errors - stats.crashes == 0 and stats.crashes + stats.failed > 0

    def run(self, tasks: Sequence[tuple[Question, str]] | None = None,
            on_outcome: Callable[[Outcome], None] | None = None) -> RunStats:
        """Answer ``tasks`` (default: :meth:`prepare`'s), ``settings.workers`` at a time.

        The first pair of each strategy runs alone and is marked ``warmup``
        (it builds the KB's indexes and loads models: its latency is not
        representative and the report leaves it out of the percentiles); the
        rest run in a bounded thread pool: at most ``workers`` questions — so at
        most ``workers`` concurrent LLM calls — and ``2 × workers`` queued.
        """
        if tasks is None:
            tasks = self.prepare()
        stats = RunStats(total_pairs=len(self.questions) * len(self.settings.strategies),
                         already_done=len(self.questions) * len(self.settings.strategies) - len(tasks))
        started = time.perf_counter()
        warm_up, rest = _split_warm_up(tasks)
        for question, strategy in warm_up:
            self._record(self.answer_one(question, strategy, warm_up=True), stats, on_outcome)
        if self.settings.workers <= 1:
            for question, strategy in rest:
                self._record(self.answer_one(question, strategy), stats, on_outcome)
        else:
            self._run_pool(rest, stats, on_outcome)
        for row in self._held:  # fewer crashes than the fuse and nothing else ran: they are the result
            self.results.append(row)
        self._held.clear()
        stats.elapsed_s = time.perf_counter() - started
        return stats

    def _run_pool(self, tasks: Sequence[tuple[Question, str]], stats: RunStats,
                  on_outcome: Callable[[Outcome], None] | None) -> None:
        workers = self.settings.workers
        pending_tasks = iter(tasks)
        inflight: set[Future[Outcome]] = set()
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sparqlqa-eval") as pool:
            try:
                while True:
                    while len(inflight) < 2 * workers:
                        task = next(pending_tasks, None)
                        if task is None:
                            break
                        # a copy of the context: ``--timeout`` (a ContextVar) reaches the worker
                        inflight.add(pool.submit(contextvars.copy_context().run, partial(self.answer_one, *task)))
                    if not inflight:
                        break
                    finished, _ = wait(inflight, return_when=FIRST_COMPLETED)
                    for future in finished:
                        inflight.discard(future)
                        self._record(future.result(), stats, on_outcome)
            except BaseException:
                for future in inflight:
                    future.cancel()
                raise
