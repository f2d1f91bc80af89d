"""Evaluation reports: ``metrics.json``, ``report.md`` (metric × strategy) and PNG plots.

Everything is computed from the per-question rows the runner wrote, so a
resumed run reports over all of its questions.

>>> rows = [QuestionResult("1", "vss", "q", metrics={"hit@1": 1.0, "hit@5": 1.0, "recall@20": 0.5, "mrr": 1.0,
...                                                  "hits@1": 1.0, "f1": 0.5}, latency_ms=10.0)]
>>> summary = summarize(rows, ["vss"])
>>> summary["vss"].questions, summary["vss"].metrics["recall@20"], summary["vss"].latency_ms.p50
(1, 0.5, 10.0)
"""

from __future__ import annotations

__all__ = ["EvalReport", "LLMPerQuestion", "LLMTotals", "LatencySummary", "ReportedError", "StrategySummary",
           "build_metrics", "report_markdown", "write_report"]

import io
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sparqlqa.errors import MissingExtraError
from sparqlqa.evaluation.execution_report import (
    EXECUTION_SEMANTICS,
    ExecutionFigures,
    execution_figures,
    execution_markdown,
)
from sparqlqa.evaluation.metrics import ALL_METRICS, RETRIEVAL_METRICS, mean, percentile
from sparqlqa.evaluation.oracle import OracleSummary, oracle_markdown
from sparqlqa.evaluation.results import QuestionResult
from sparqlqa.evaluation.runner import RunSettings, RunStats
from sparqlqa.kb.records import JsonRecord
from sparqlqa.paths import atomic_write_bytes, atomic_write_json, atomic_write_text

METRICS_FILE = "metrics.json"
TABLE_FILE = "report.md"
METRICS_PLOT = "metrics.png"
#: errors listed one per line in report.md (all are in metrics.json)
MAX_LISTED_ERRORS = 20
LATENCY_PLOT = "latency.png"

#: the metric rows of the table, by dataset kind
TABLE_METRICS: dict[str, tuple[str, ...]] = {
    "retrieval": RETRIEVAL_METRICS,
    "kgqa": ("hits@1", "f1", "hit@5", "recall@20", "mrr"),
    "execution": (),  # the execution-accuracy table replaces them
}
_TITLES = {"hit@1": "Hit@1", "hit@5": "Hit@5", "recall@20": "Recall@20", "mrr": "MRR", "hits@1": "Hits@1",
           "f1": "F1"}


@dataclass
class LLMPerQuestion:
    """Mean LLM use per question (``cost_usd``: ``None`` when no call had a known price)."""

    calls: float = 0.0
    input_tokens: float = 0.0
    output_tokens: float = 0.0
    cost_usd: float | None = None


@dataclass
class LLMTotals:
    calls: int = 0
    cache_hits: int = 0
    cost_usd: float | None = None


@dataclass
class LatencySummary:
    """Latency per question in ms over the timed (not warm-up) rows."""

    p50: float | None = None
    p95: float | None = None
    mean: float | None = None
    n: int = 0
    warmup_excluded: int = 0


@dataclass
class StrategySummary(JsonRecord):
    """One strategy's figures in a report: questions, errors, mean metrics, LLM use, latency."""

    questions: int = 0
    errors: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    llm_per_question: LLMPerQuestion = field(default_factory=LLMPerQuestion)
    llm_totals: LLMTotals = field(default_factory=LLMTotals)
    latency_ms: LatencySummary = field(default_factory=LatencySummary)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _strategy_summary(rows: Sequence[QuestionResult]) -> StrategySummary:
    timed = [r for r in rows if not r.warmup] or list(rows)
    latencies = [r.latency_ms for r in timed]
    usage = [r.llm for r in rows]
    costs = [u.cost_usd for u in usage if u.cost_usd is not None]
    return StrategySummary(
        questions=len(rows), errors=sum(1 for r in rows if r.error),
        metrics={name: mean(r.metric(name) for r in rows) for name in ALL_METRICS},
        llm_per_question=LLMPerQuestion(calls=mean(float(u.calls) for u in usage),
                                        input_tokens=mean(float(u.input_tokens) for u in usage),
                                        output_tokens=mean(float(u.output_tokens) for u in usage),
                                        cost_usd=mean(costs) if costs else None),
        llm_totals=LLMTotals(calls=sum(u.calls for u in usage), cache_hits=sum(u.cache_hits for u in usage),
                             cost_usd=sum(costs) if costs else None),
        latency_ms=LatencySummary(p50=percentile(latencies, 50), p95=percentile(latencies, 95),
                                  mean=mean(latencies) if latencies else None, n=len(latencies),
                                  warmup_excluded=len(rows) - len(timed)))


def summarize(rows: Sequence[QuestionResult], strategies: Sequence[str]) -> dict[str, StrategySummary]:
    """Per strategy: question count, errors, mean metrics, LLM usage per question, latency p50/p95."""
    return {s: _strategy_summary([r for r in rows if r.strategy == s]) for s in strategies}


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def _markdown_table(summary: Mapping[str, StrategySummary], kind: str = "retrieval") -> str:
    """Metric × strategy table (GitHub markdown).

    >>> s = {"a": StrategySummary(questions=2, metrics={"hit@1": 0.5, "hit@5": 1.0, "recall@20": 1.0, "mrr": 0.75},
    ...                           latency_ms=LatencySummary(p50=1.0, p95=2.0))}
    >>> print(_markdown_table(s).splitlines()[3])
    | Hit@1 | 0.500 |
    """
    names = list(summary)
    lines = ["| metric | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]

    def row(title: str, values: list[str]) -> None:
        lines.append(f"| {title} | " + " | ".join(values) + " |")

    row("questions", [_fmt(summary[n].questions) for n in names])
    for metric in TABLE_METRICS.get(kind, RETRIEVAL_METRICS):
        row(_TITLES[metric], [_fmt(summary[n].metrics.get(metric)) for n in names])
    if any(summary[n].errors for n in names):
        row("errors", [_fmt(summary[n].errors) for n in names])
    usage = [summary[n].llm_per_question for n in names]
    row("LLM calls / question", [_fmt(u.calls, 2) for u in usage])
    row("input tokens / question", [_fmt(u.input_tokens, 0) for u in usage])
    row("output tokens / question", [_fmt(u.output_tokens, 0) for u in usage])
    row("cost / question (USD)", [_fmt(u.cost_usd, 5) for u in usage])
    row("latency p50 (ms)", [_fmt(summary[n].latency_ms.p50, 1) for n in names])
    row("latency p95 (ms)", [_fmt(summary[n].latency_ms.p95, 1) for n in names])
    return "\n".join(lines) + "\n"


def _one_line(text: str, limit: int = 300) -> str:
    """An error message on one report line.

    >>> _one_line("ValueError: bad\\n  thing")
    'ValueError: bad thing'
    """
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def report_markdown(metrics: EvalReport) -> str:
    """The whole ``report.md``: what was run, the table, and what is incomplete."""
    run = metrics.run
    meaning = ("execution accuracy (below)" if metrics.execution is not None else
               "STaRK semantics (Hit@k, Recall@20 over all gold answers, MRR over the returned "
               "ranking; unreturned gold answers are misses; ties ordered by IRI)")
    head = [f"# Evaluation: {run.dataset} on KB `{run.kb}`", "",
            f"- source: `{run.source}`" + (f" (split {run.split})" if run.split else ""),
            f"- questions: {metrics.questions}; k = {run.k}; LLM: {run.llm or 'none'}",
            f"- metrics: {meaning}; latency percentiles leave out each strategy's first (warm-up) question of "
            "every invocation", "", *(execution_markdown(metrics.execution) if metrics.execution else [])]
    incomplete = {s: metrics.questions - v.questions for s, v in metrics.strategies.items()
                  if v.questions < metrics.questions}
    tail = [""]
    errors = metrics.errors
    if errors:
        tail += [f"## Errors ({len(errors)} answer(s) failed; each counts as a miss)", ""]
        tail += [f"- question {e.id} ({e.strategy}): {_one_line(e.error)}" for e in errors[:MAX_LISTED_ERRORS]]
        if len(errors) > MAX_LISTED_ERRORS:
            tail.append(f"- … and {len(errors) - MAX_LISTED_ERRORS} more (see `error` in questions.jsonl)")
        tail.append("")
    if incomplete:
        tail.append("**Incomplete**: " + ", ".join(f"{s} lacks {n} question(s)" for s, n in incomplete.items())
                    + " (rerun the same command to finish; with `--llm-cache only`, import the pending "
                    "answers first: `sparqlqa llm export-pending FILE`).")
    tail = ["", *oracle_markdown(metrics.oracle), *tail[1:]]
    return "\n".join(head) + "\n" + _markdown_table(metrics.strategies, metrics.kind) + "\n".join(tail) + "\n"


def write_report(out_dir: Path, metrics: EvalReport, rows: Sequence[QuestionResult], *,
                 plots: bool = True) -> list[Path]:
    """Write metrics.json and report.md (atomically), then the plots; the paths written."""
    atomic_write_json(out_dir / METRICS_FILE, metrics.to_dict())
    atomic_write_text(out_dir / TABLE_FILE, report_markdown(metrics))
    written = [out_dir / METRICS_FILE, out_dir / TABLE_FILE]
    if plots:
        written += _write_plots(out_dir, metrics, rows)
    return written


def _figure(width: float, height: float) -> Any:
    """A matplotlib Figure on the Agg canvas (no pyplot global state)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingExtraError("matplotlib", "plots of evaluation reports",
                                "pip install 'sparqlqa[plots]'") from None
    figure = Figure(figsize=(width, height), dpi=110, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _save(figure: Any, path: Path) -> Path:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    atomic_write_bytes(path, buffer.getvalue())
    return path


def _plot_metrics(metrics: EvalReport, path: Path) -> Path:
    """Grouped bars: one group per metric, one bar per strategy."""
    names = list(metrics.strategies)
    shown = TABLE_METRICS.get(metrics.kind, RETRIEVAL_METRICS)
    titles = [_TITLES[m] for m in shown]
    if metrics.execution is not None:  # execution accuracy per form
        titles = sorted({form for f in metrics.execution.values() for form in f.by_form})
    figure = _figure(1.6 + 1.3 * len(titles), 3.6)
    axes = figure.add_subplot()
    width = 0.8 / max(len(names), 1)
    for i, name in enumerate(names):
        values = _bar_values(metrics, name, shown, titles)
        xs = [j + (i - (len(names) - 1) / 2) * width for j in range(len(titles))]
        bars = axes.bar(xs, values, width, label=name)
        axes.bar_label(bars, fmt="%.2f", fontsize=7)
    axes.set_xticks(range(len(titles)), titles)
    axes.set_ylim(0, 1.08)
    axes.set_ylabel("score")
    axes.set_title(f"{metrics.run.dataset} · {metrics.questions} questions")
    axes.legend(fontsize=8)
    return _save(figure, path)


def _bar_values(metrics: EvalReport, name: str, shown: Sequence[str], titles: Sequence[str]) -> list[float]:
    """One strategy's bars: its accuracy per form (execution), else its metrics."""
    if metrics.execution is None:
        return [metrics.strategies[name].metrics[m] for m in shown]
    forms = metrics.execution[name].by_form
    return [(forms[t].accuracy or 0.0) if t in forms else 0.0 for t in titles]


def _plot_latency(metrics: EvalReport, rows: Sequence[QuestionResult], path: Path) -> Path:
    """Latency distribution per strategy (box plot, log scale when it spans decades)."""
    names = list(metrics.strategies)
    data = [[max(r.latency_ms, 1e-3) for r in rows if r.strategy == n and not r.warmup] for n in names]
    figure = _figure(1.8 + 1.2 * len(names), 3.6)
    axes = figure.add_subplot()
    axes.boxplot([d or [0.0] for d in data], showfliers=True)
    axes.set_xticks(range(1, len(names) + 1), names)
    flat = [v for d in data for v in d]
    if flat and max(flat) / max(min(flat), 1e-3) > 50:
        axes.set_yscale("log")
    axes.set_ylabel("latency per question (ms)")
    axes.set_title("latency distribution")
    return _save(figure, path)


def _write_plots(out_dir: Path, metrics: EvalReport, rows: Sequence[QuestionResult]) -> list[Path]:
    """``metrics.png`` and ``latency.png``; :class:`MissingExtraError` without matplotlib."""
    return [_plot_metrics(metrics, out_dir / METRICS_PLOT),
            _plot_latency(metrics, rows, out_dir / LATENCY_PLOT)]


TIE_RULE = ("ranking = the strategy's list order; inside a run of consecutive items with equal scores, "
            "items are ordered by IRI (code-point order); unscored items tie at the bottom, ordered by IRI")


@dataclass
class ReportedError:
    """A pair whose strategy failed (a miss); ``crash``: an unexpected exception."""

    id: str
    strategy: str
    error: str
    crash: bool = False

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "strategy": self.strategy, "error": self.error}
        return {**data, "crash": True} if self.crash else data


@dataclass
class EvalReport(JsonRecord):
    """The content of ``metrics.json`` (:meth:`to_dict`): the run's settings, each strategy's figures, the
    errors, what the metrics mean, the last invocation's counts and the answerable subset's figures."""

    run: RunSettings
    kind: str
    questions: int
    strategies: dict[str, StrategySummary] = field(default_factory=dict)
    errors: list[ReportedError] = field(default_factory=list)
    last_invocation: RunStats | None = None
    oracle: OracleSummary | None = None
    #: execution accuracy per strategy (an execution-scored dataset: Spider4SPARQL)
    execution: dict[str, ExecutionFigures] | None = None

    @property
    def complete(self) -> bool:
        """Every strategy answered every question."""
        return all(v.questions == self.questions for v in self.strategies.values())

    def to_dict(self) -> dict[str, Any]:
        semantics = {**SEMANTICS, **({"execution": EXECUTION_SEMANTICS} if self.execution is not None else {})}
        data = {"run": asdict(self.run), "kind": self.kind, "questions": self.questions, "complete": self.complete,
                "strategies": {name: s.to_dict() for name, s in self.strategies.items()},
                "errors": [e.to_dict() for e in self.errors], "semantics": semantics,
                "last_invocation": self.last_invocation.to_dict() if self.last_invocation is not None else {}}
        if self.oracle is not None:
            data["oracle"] = self.oracle.to_dict()
        if self.execution is not None:
            data["execution"] = {name: f.to_dict() for name, f in self.execution.items()}
        return data


def build_metrics(run: RunSettings, kind: str, n_questions: int, rows: Sequence[QuestionResult],
                  strategies: Sequence[str], last_invocation: RunStats | None = None) -> EvalReport:
    """The report of a run (``metrics.json`` is its :meth:`~EvalReport.to_dict`)."""
    return EvalReport(run=run, kind=kind, questions=n_questions, strategies=summarize(rows, strategies),
                      errors=[ReportedError(r.id, r.strategy, r.error, r.crash) for r in rows if r.error],
                      last_invocation=last_invocation,
                      execution=execution_figures(rows, strategies) if kind == "execution" else None)


#: what the figures of ``metrics.json`` mean
SEMANTICS: dict[str, str] = {
    "hit@k": "1 if any gold answer is in the top k",
    "recall@20": "gold answers in the top 20 / number of gold answers",
    "mrr": "1 / rank of the first gold answer over the returned ranking (0 if none)",
    "f1": "answer-set F1; answer set = best-tier SPARQL-filtered items, else the top item",
    "gold_matching": "by IRI when the gold answer has one, else by label (case-insensitive)",
    "ties": TIE_RULE,
    "latency": "per question, the answer's timings_ms['total'] (else wall time); "
               "percentiles linearly interpolated; warm-up rows (first question of "
               "each strategy per invocation: index builds, model loads) left out",
}
