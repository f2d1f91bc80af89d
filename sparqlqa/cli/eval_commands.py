"""``sparqlqa eval DATASET FILE|DIR --kb NAME --strategy a,b --out DIR``."""

from __future__ import annotations

__all__ = ["eval_"]

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from sparqlqa.cli.llm_commands import llm_options
from sparqlqa.cli.output import KB_NAME, PlainProgress, console, device_option, err_console, note, print_json
from sparqlqa.cli.remote_options import endpoint_timeout, endpoint_timeout_option
from sparqlqa.errors import ConfigError
from sparqlqa.stages.modes import TopicMode, values

#: eval's exit status when some answers failed (counted as misses; listed in report.md)
EXIT_ERRORS = 1
#: eval's exit status when the run is incomplete but nothing failed (pairs wait for imported LLM
#: answers, or failed transiently): rerun the same command to finish
EXIT_INCOMPLETE = 3

DATASET_NAMES = ("stark-prime", "stark-mag", "stark-amazon", "metaqa", "pathquestion", "wc2014", "jsonl",
                 "spider4sparql")
SPLIT_NAMES = ("test", "val", "dev", "train", "human", "all")


def parse_strategies(text: str) -> list[str]:
    """``"offline, vss"`` → ``["offline", "vss"]`` (order kept, duplicates dropped).

    >>> parse_strategies("4step,vss+rerank, 4step")
    ['4step', 'vss+rerank']
    """
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise ConfigError("--strategy names no strategy", hint="e.g. --strategy 4step,offline,vss,vss+rerank")
    return list(dict.fromkeys(names))


def _check_strategies(names: list[str]) -> None:
    """Unknown names fail before any question runs (when the pipeline's registry is there)."""
    try:
        from sparqlqa.strategies.base import strategies
    except ImportError:
        return
    from sparqlqa.errors import UnknownNameError

    for name in names:
        if name not in strategies:
            raise UnknownNameError("strategy", name, strategies.names())


ProgressHooks = tuple[Callable[[int, int], None], Callable[[Any], None]]


@contextmanager
def _progress() -> Iterator[ProgressHooks]:
    """(on_start, on_outcome): a rich bar with ETA on a terminal, else a log line every 5%."""
    if not sys.stderr.isatty():
        yield _plain_progress()
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*columns, console=err_console(), transient=True) as bar:
        task = bar.add_task("answering", total=None)

        def start(todo: int, total: int) -> None:
            bar.update(task, total=todo, description=f"answering ({total - todo} already done)")

        yield start, lambda outcome: bar.advance(task)


def _plain_progress() -> ProgressHooks:
    """Plain lines for logs: the count first, then ``answered 12/40 pairs (30%), 0 pairs/s, ETA 3m``
    every $SPARQLQA_PROGRESS_EVERY seconds and at the end."""
    state: dict[str, Any] = {"total": 0, "seen": 0, "lines": PlainProgress("answered", "pairs")}

    def start(todo: int, total: int) -> None:
        state.update(total=todo, lines=PlainProgress("answered", "pairs"))
        note(f"{todo} of {total} (question, strategy) pairs to answer")

    def step(outcome: Any) -> None:
        state["seen"] += 1
        state["lines"].update(state["seen"], state["total"])

    return start, step


@click.command("eval")
@click.argument("dataset", type=click.Choice(DATASET_NAMES))
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.option("--kb", "kb_name", type=KB_NAME, help="Knowledge base to answer from.")
@click.option("--kb-prefix", metavar="P",
              help="One KB per graph (spider4sparql): a question about graph DB asks KB P<DB> "
              "(e.g. s4s_ → s4s_concert_singer).")
@click.option("--ingest", "ingest_graphs", is_flag=True,
              help="With --kb-prefix: first ingest every SOURCE/kg/<DB>.nt missing as KB P<DB>.")
@click.option("--strategy", "strategy_text", default="4step", show_default=True,
              help="Comma-separated strategies run side by side: 4step, fiske, text2sparql, offline, vss, vss+rerank "
              "(fiske's call budget: $SPARQLQA_FISKE_BUDGET, default 30).")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Report folder; rerunning with the same folder resumes the run.")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N questions (after --sample).")
@click.option("--sample", type=click.IntRange(min=1), help="A random subset of N questions (see --seed).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --sample.")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Questions answered at once (bounds concurrent LLM calls).")
@click.option("--k", "k", type=click.IntRange(min=1),
              help="Answers ranked per question (MRR is computed over these; default 20, spider4sparql 1000).")
@click.option("--split", type=click.Choice(SPLIT_NAMES),
              help="STaRK: test (default), val, train, human, all; MetaQA/PQ/JSONL folders: qa_SPLIT file.")
@click.option("--test-ratio", type=click.FloatRange(min=0, max=1, min_open=True), default=1.0,
              show_default=True, help="Use the first fraction of the split (as STaRK's runner).")
@click.option("--no-plots", is_flag=True, help="Skip the PNG plots (no matplotlib needed).")
@click.option("--topic", type=click.Choice(values(TopicMode)),
              help="The nodes a question names among its answers (default: as the dataset's gold does: "
              "MetaQA exclude, the others auto).")
@llm_options
@click.option("--embedder", "embedder_spec", metavar="SPEC",
              help="Embedder for the vector ranking (e.g. static; default $SPARQLQA_EMBEDDER or onnx).")
@device_option
@endpoint_timeout_option()
@click.option("--json", "as_json", is_flag=True, help="Print metrics.json instead of the table.")
def eval_(dataset: str, source: Path, kb_name: str | None, strategy_text: str, out_dir: Path, limit: int | None,
          sample: int | None, seed: int, workers: int, k: int | None, split: str | None, test_ratio: float,
          no_plots: bool, llm_spec: str | None, llm_cache: str | None, timeout_s: float | None,
          embedder_spec: str | None, as_json: bool, topic: str | None = None, kb_prefix: str | None = None,
          ingest_graphs: bool = False) -> None:
    """Run strategies on a benchmark DATASET (questions in SOURCE, a file or folder) and report.

    Writes OUT/metrics.json, OUT/report.md (metric × strategy), OUT/questions.jsonl (one row per
    question and strategy: rank of the first gold answer, triplets, SPARQL, evidence) and PNG plots.
    When the questions give their gold relation paths (MetaQA's qa_*_qtype.txt beside the file,
    PathQuestion's path column), report.md adds Hits@1 over the answerable (oracle) subset.
    Spider4SPARQL (SOURCE: the folder holding questions_dev.json and kg/<DB>.nt) is scored by execution
    accuracy, per form, with empty-gold questions apart; each question asks KB P<DB> (--kb-prefix P;
    --ingest builds the missing ones first).
    A killed run resumes when rerun with the same --out.  Exit status: 0 when every pair is answered
    without error, 1 when some answers failed (listed in report.md), 3 when the run is incomplete
    (pending LLM answers, transient failures: rerun to finish).
    """
    from sparqlqa.evaluation import evaluate

    strategies = parse_strategies(strategy_text)
    _check_strategies(strategies)
    kb_names = _kb_names(source, kb_name, kb_prefix, ingest_graphs)
    with endpoint_timeout(timeout_s):
        _prepare_indexes(kb_names, strategies, embedder_spec)
        with _progress() as (on_start, on_outcome):
            result = evaluate(dataset, source, kb=kb_name, strategies=strategies, out_dir=out_dir, k=k,
                              llm=llm_spec, llm_cache=llm_cache, split=split, test_ratio=test_ratio, limit=limit,
                              sample=sample, seed=seed, workers=workers, plots=not no_plots, ask=None, topic=topic,
                              embedder=embedder_spec, kb_prefix=kb_prefix,
                              on_start=on_start, on_outcome=on_outcome)
    _finish(result, as_json)


def _kb_names(source: Path, kb_name: str | None, kb_prefix: str | None, ingest: bool) -> list[str]:
    """The KBs the run asks: ``--kb``, or one per graph of SOURCE's ``kg/`` (``--kb-prefix``; ingested first
    with ``--ingest``, those there kept)."""
    if kb_name is None and kb_prefix is None:
        raise ConfigError("no KB to ask", hint="pass --kb NAME, or --kb-prefix P for one KB per graph (KB P<DB>)")
    if ingest and kb_prefix is None:
        raise ConfigError("--ingest needs --kb-prefix", hint="e.g. --kb-prefix s4s_ --ingest")
    if kb_prefix is None:
        return [kb_name] if kb_name else []
    from sparqlqa.evaluation.datasets import graph_files
    from sparqlqa.evaluation.graphs import GraphIngest, ingest_graphs
    from sparqlqa.kb.knowledge_base import list_kbs

    if ingest:
        def told(done: GraphIngest) -> None:
            note(f"ingested {done.kb}: {done.triples:,} triples in {done.seconds:.1f} s" if done.built
                 else f"KB {done.kb} is there: kept")

        ingest_graphs(source, kb_prefix, on_graph=told)
    present = {manifest.name for manifest in list_kbs()}
    return [name for db in graph_files(source) if (name := f"{kb_prefix}{db}") in present]


def _prepare_indexes(kb_names: list[str], strategies: list[str], embedder_spec: str | None = None) -> None:
    """As ``ask`` does before a question (:func:`~sparqlqa.cli.ask_commands.prepare_index`): a strategy that
    answers from the node index alone (``vss``) has it built first, announced and with progress; the others
    load a finished one and otherwise answer without it (the SPARQL candidates embedded, no fill-in), which
    one note says, with the command that builds it."""
    from sparqlqa.cli.ask_commands import prepare_index
    from sparqlqa.embed.embedders import get_embedder
    from sparqlqa.kb.knowledge_base import open_kb
    from sparqlqa.vectors.index import index_supported

    embedder = get_embedder(embedder_spec)
    unbuilt = []
    for name in kb_names:
        with open_kb(name) as kb:
            if not prepare_index(kb, embedder, strategies) and index_supported(kb):
                unbuilt.append(name)
    if unbuilt:
        shown = ", ".join(unbuilt[:3]) + (f" and {len(unbuilt) - 3} more" if len(unbuilt) > 3 else "")
        note(f"the node index of {shown} ({embedder.model_id}) is not built: answers have no 'similar, not "
             f"matched' fill-in, as a first ask; 'sparqlqa index {unbuilt[0]}' builds it (scores with it)")


def _finish(result: Any, as_json: bool) -> None:
    stats = result.stats
    if as_json:
        print_json({**result.metrics.to_dict(), "out_dir": str(result.out_dir),
                    "files": [str(f) for f in result.files]})
    else:
        console().print(result.markdown, markup=False, highlight=False)
        note(f"report in {result.out_dir}: " + ", ".join(f.name for f in result.files)
             + " + questions.jsonl")
    errors = result.metrics.errors
    if errors:
        note(f"{len(errors)} answer(s) failed and count as misses (listed in report.md), e.g. "
             + "; ".join(f"{e.id}/{e.strategy}: {e.error}" for e in errors[:3]))
    if stats.failed:
        note(f"{stats.failed} pair(s) failed transiently and were not recorded; rerun to retry. "
             + "; ".join(stats.messages[:3]))
    if stats.pending:
        note(f"{stats.pending} pair(s) wait for LLM answers (--llm-cache only): "
             "'sparqlqa llm export-pending FILE', answer them, 'sparqlqa llm import FILE', then rerun")
    if result.plot_error:
        err_console().print(f"plots skipped: {result.plot_error}", style="yellow", markup=False)
    if errors or not result.metrics.complete:
        click.get_current_context().exit(EXIT_ERRORS if errors else EXIT_INCOMPLETE)
