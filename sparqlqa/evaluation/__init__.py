"""``sparqlqa eval``: run strategies on a benchmark against one KB and report.

>>> from sparqlqa.evaluation import datasets
>>> sorted(datasets.names())
['jsonl', 'metaqa', 'pathquestion', 'spider4sparql', 'stark-amazon', 'stark-mag', 'stark-prime', 'wc2014']

:func:`evaluate` is the whole thing (the CLI is a thin layer over it): load
the questions, pick ``--sample``/``--limit``, answer every (question, strategy)
pair not yet in ``OUT/questions.jsonl``, then write ``metrics.json``,
``report.md``, ``metrics.png`` and ``latency.png``.  A benchmark with one KB per graph (Spider4SPARQL,
scored by execution accuracy) asks each question's own KB, ``kb_prefix + db``
(:mod:`sparqlqa.evaluation.graphs`).
"""

from __future__ import annotations

__all__ = [
    "LLM_STRATEGIES",
    "AskFunction",
    "Dataset",
    "EvalError",
    "EvalReport",
    "EvalResult",
    "EvalRun",
    "LLMUsage",
    "Outcome",
    "Question",
    "QuestionResult",
    "RunSettings",
    "RunStats",
    "StrategySummary",
    "datasets",
    "evaluate",
    "ingest_graphs",
    "load_questions",
    "question_metrics",
    "select_questions",
]

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparqlqa.errors import ConfigError, MissingExtraError
from sparqlqa.evaluation.datasets import Dataset, Question, datasets, load_questions
from sparqlqa.evaluation.graphs import GraphKBs, ingest_graphs
from sparqlqa.evaluation.metrics import question_metrics
from sparqlqa.evaluation.oracle import OracleSummary
from sparqlqa.evaluation.report import EvalReport, StrategySummary, build_metrics, report_markdown, write_report
from sparqlqa.evaluation.results import LLMUsage, QuestionResult
from sparqlqa.evaluation.runner import (
    AskFunction,
    EvalError,
    EvalRun,
    LLMChoice,
    Outcome,
    RunSettings,
    RunStats,
    select_questions,
)

#: strategies that call an LLM (an LLM object is built once and shared by the workers)
LLM_STRATEGIES: frozenset[str] = frozenset({"4step", "vss+rerank"})


@dataclass
class EvalResult:
    """What :func:`evaluate` did: the metrics, the markdown report, counts and files."""

    out_dir: Path
    metrics: EvalReport
    markdown: str
    stats: RunStats
    files: list[Path] = field(default_factory=list)
    plot_error: str | None = None


def _open_kb(kb: Any) -> Any:
    if isinstance(kb, str):
        from sparqlqa.kb.knowledge_base import open_kb

        return open_kb(kb)
    return kb


def _needs_llm(strategy: str) -> bool:
    try:
        from sparqlqa.strategies.base import strategies
    except ImportError:
        return strategy in LLM_STRATEGIES
    if strategy not in strategies:  # a stand-in strategy of an injected ``ask``
        return strategy in LLM_STRATEGIES
    return bool(getattr(strategies.get(strategy), "needs_llm", strategy in LLM_STRATEGIES))


def _llm(spec: str | None, cache_mode: str | None,
         strategies: Sequence[str], ask: AskFunction | None) -> tuple[dict[str, LLMChoice], str | None]:
    """The ``llm=`` argument per strategy and the resolved spec.

    One LLM object is built and shared by every strategy (and worker) that
    needs one; the others get ``"offline"``.  No LLM for an LLM strategy is an
    error before the first question (with the real pipeline).
    """
    needing = [s for s in strategies if _needs_llm(s)]
    if not needing:
        return {s: "offline" for s in strategies}, None
    from sparqlqa.llm import get_llm, resolve_llm_spec

    resolved = resolve_llm_spec(spec)
    if resolved is None and ask is None:
        raise ConfigError(f"strategy {needing[0]!r} needs an LLM and none is configured",
                          hint="pass --llm SPEC (e.g. anthropic) or set ANTHROPIC_API_KEY, "
                          "or evaluate only offline / vss")
    shared = get_llm(resolved, cache_mode=cache_mode) if resolved else None
    return {s: (shared if s in needing else "offline") for s in strategies}, resolved


def _oracle(kb: Any, questions: Sequence[Question], rows: Sequence[QuestionResult],
            strategies: Sequence[str]) -> OracleSummary | None:
    """The answerable subset's figures, when the questions give gold paths and ``kb`` is a real KB."""
    from sparqlqa.evaluation.oracle import answerable, gold_path, oracle_summary

    if not hasattr(kb, "schema") or not any(gold_path(q) is not None for q in questions):
        return None
    return oracle_summary(rows, strategies, answerable(kb, questions))


def _graph_kbs(kb_prefix: str | None, questions: Sequence[Question], has_kb: bool) -> GraphKBs | None:
    """The KBs of a benchmark with one KB per graph (``kb_prefix``); questions that name no graph need
    ``--kb``."""
    if kb_prefix is None:
        return None
    if not has_kb and any(q.db is None for q in questions):
        raise EvalError("these questions name no graph, so --kb-prefix cannot choose their KB",
                        hint="pass --kb NAME (--kb-prefix is for one KB per graph, e.g. spider4sparql)")
    return GraphKBs(kb_prefix)


def evaluate(dataset: str, source: str | Path, *, kb: Any = None, strategies: Sequence[str], out_dir: str | Path,
             k: int | None = None, llm: str | None = None, llm_cache: str | None = None, split: str | None = None,
             test_ratio: float = 1.0, limit: int | None = None, sample: int | None = None, seed: int = 0,
             workers: int = 1, plots: bool = True, ask: AskFunction | None = None, topic: str | None = None,
             embedder: str | None = None, kb_prefix: str | None = None,
             on_start: Callable[[int, int], None] | None = None,
             on_outcome: Callable[[Outcome], None] | None = None) -> EvalResult:
    """Run ``strategies`` on ``dataset`` questions from ``source`` against ``kb`` (object or name).

    ``on_start(pairs_to_run, pairs_total)`` is called before the first question,
    ``on_outcome`` after each (progress bars).  Resumes ``out_dir`` when it holds
    the same run.  Plots failing for want of matplotlib leave the other files
    written and set ``plot_error``.  ``topic``: what answers do with the nodes a question names
    (default: the dataset's mode, as its gold does: MetaQA ``exclude``, others ``auto``).  When the
    questions give their gold relation paths, the report adds Hits@1 over the answerable (oracle) subset.
    ``kb_prefix``: one KB per graph, a question about graph ``db`` asks KB ``kb_prefix + db`` (``kb`` is
    then not needed); ``k``: the dataset's default when None (an execution-scored answer keeps up to
    1,000 rows).
    """
    if not strategies:
        raise EvalError("no strategy to evaluate", hint="pass --strategy NAME[,NAME...]")
    k = k if k is not None else datasets.get(dataset).default_k
    if workers < 1 or k < 1:
        raise EvalError("--workers and --k must be at least 1")
    if kb is None and kb_prefix is None:
        raise EvalError("no KB to ask", hint="pass --kb NAME, or --kb-prefix P for one KB per graph (KB P<db>)")
    knowledge_base = _open_kb(kb) if kb is not None else None
    manifest = getattr(knowledge_base, "manifest", None)
    questions = load_questions(dataset, source, base_iri=getattr(manifest, "base_iri", ""),
                               split=split, test_ratio=test_ratio)
    chosen = select_questions(questions, limit=limit, sample=sample, seed=seed)
    graphs = _graph_kbs(kb_prefix, chosen, knowledge_base is not None)
    generation = (graphs.generations(q.db for q in chosen if q.db is not None) if graphs is not None
                  else str(getattr(manifest, "generation", "")))
    llm_args, llm_spec = _llm(llm, llm_cache, strategies, ask)
    settings = RunSettings(
        dataset=dataset, source=str(Path(source).expanduser().resolve()),
        kb=graphs.name("<db>") if graphs is not None else str(getattr(knowledge_base, "name", kb)),
        strategies=list(dict.fromkeys(strategies)), k=k,
        llm=llm_spec, llm_cache=llm_cache, split=split, test_ratio=test_ratio, limit=limit, sample=sample,
        seed=seed, workers=workers, kb_generation=generation,
        topic=topic or datasets.get(dataset).topic, embedder=embedder, kb_prefix=kb_prefix)
    out = Path(out_dir).expanduser()
    run = EvalRun(knowledge_base, chosen, settings, out, ask=ask, llm=llm_args, kb_of=graphs)
    tasks = run.prepare()
    if on_start is not None:
        on_start(len(tasks), len(chosen) * len(settings.strategies))
    stats = run.run(tasks, on_outcome)
    rows = run.rows()
    kind = datasets.get(dataset).kind
    metrics = build_metrics(settings, kind, len(chosen), rows, settings.strategies, stats)
    metrics.oracle = _oracle(knowledge_base, chosen, rows, settings.strategies)
    plot_error = None
    try:
        files = write_report(out, metrics, rows, plots=plots)
    except MissingExtraError as exc:  # the JSON and markdown are already written
        files, plot_error = [out / "metrics.json", out / "report.md"], exc.full_message()
    return EvalResult(out, metrics, report_markdown(metrics), stats, files, plot_error)
