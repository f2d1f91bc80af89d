"""``sparqlqa ask`` (answer a question) and ``sparqlqa index`` (build the node vector index)."""

from __future__ import annotations

__all__ = ["BLAS_THREADS_ENV", "NO_NODE_EXIT", "answer_rows", "answers_table", "answers_tsv", "ask", "delimited",
           "ensure_index", "index", "needs_index", "one_blas_thread", "prepare_index", "print_sparql", "show_answer",
           "table_view"]

import os
import sys
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sparqlqa.cli.llm_commands import llm_options
from sparqlqa.cli.output import (
    KB_NAME,
    cell,
    console,
    count_progress,
    device_option,
    note,
    print_json,
    safe,
    safe_field,
    warning,
)
from sparqlqa.cli.remote_options import endpoint_timeout, endpoint_timeout_option
from sparqlqa.english import plural
from sparqlqa.kb.vocab import kb_prefixes
from sparqlqa.stages.modes import ColumnKind, Form, ItemSource, RerankMode, TopicMode, values

if TYPE_CHECKING:
    from sparqlqa.embed.embedders import Embedder
    from sparqlqa.kb.knowledge_base import KnowledgeBase
    from sparqlqa.kb.records import QueryRecord
    from sparqlqa.stages.answer import Answer
    from sparqlqa.stages.table import Table
    from sparqlqa.vectors.index import IndexSummary


#: ``ask --format``: the answer's table as comma- or tab-separated rows
TABLE_FORMATS = {"csv": ",", "tsv": "\t"}
#: the forms the terminal shows as their table (a value answer: its one cell) instead of ranked items
TABLE_FORMS = (Form.VALUE, Form.TABLE)

#: exit status of ``ask`` when the question names no node of the KB (answers are vector-only); README table
NO_NODE_EXIT = 3
#: the environment variable OpenBLAS reads, once, when numpy loads it: how many threads its pool starts
BLAS_THREADS_ENV = "OPENBLAS_NUM_THREADS"


def one_blas_thread() -> None:
    """Before numpy is imported in a one-question process: OpenBLAS's pool, one thread per core started as
    numpy loads, costs 0.06 s CPU on 2 cores (``import numpy`` 0.16 → 0.09 s, benchmarks/RESULTS.md "Cold
    ask"), more than a question's few small products can win back.  A value the user set is kept."""
    os.environ.setdefault(BLAS_THREADS_ENV, "1")


def ensure_index(kb: KnowledgeBase, embedder: Embedder, *, quiet: bool = False, ahead: bool = True,
                 rebuild: bool = False) -> IndexSummary:
    """:func:`sparqlqa.vectors.index.ensure_index` on the terminal: says what it starts and shows progress
    (unless ``quiet``; ``ahead``: mention ``sparqlqa index``); warnings are shown even when ``quiet``."""
    from sparqlqa.vectors.index import ensure_index as ensure

    def starting(state: str) -> None:
        if not quiet:
            tip = f"; 'sparqlqa index {kb.name}' builds it ahead" if ahead else ""
            what = f"the node index of {kb.name} ({embedder.model_id})"
            note(f"rebuilding {what} from scratch (resumable)" if state == "rebuilding" else
                 f"{state} {what}: once per KB and embedder, resumable{tip}")

    with (nullcontext(lambda done, total: None) if quiet else
          count_progress(f"embedding nodes of {kb.name} ({embedder.model_id})", "indexed", "nodes")) as update:
        summary = ensure(kb, embedder, progress=update, warn=warning, rebuild=rebuild, starting=starting)
    return summary


@click.command("index")
@click.argument("name", type=KB_NAME)
@click.option("--embedder", "embedder_spec", metavar="SPEC",
              help="Embedder (default: $SPARQLQA_EMBEDDER or onnx:all-MiniLM-L6-v2).")
@device_option
@click.option("--rebuild", is_flag=True, help="Discard this embedder's index of NAME and build it afresh.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def index(name: str, embedder_spec: str | None, rebuild: bool, as_json: bool) -> None:
    """Build (or resume) the node vector index of knowledge base NAME (--rebuild: from scratch)."""
    from sparqlqa.embed.embedders import get_embedder
    from sparqlqa.kb.knowledge_base import open_kb

    with open_kb(name) as kb:
        summary = ensure_index(kb, get_embedder(embedder_spec), ahead=False, rebuild=rebuild)
    if as_json:
        print_json(summary.to_dict())
    elif not summary.supported:
        note(f"{name} is a remote endpoint: it has no node index (ask embeds its SPARQL candidates)")
    else:
        state = "rebuilt" if summary.rebuilt else "already built" if summary.already_built else "built"
        console().print(f"{summary.nodes} nodes, {summary.types} types, dimension {summary.dimension}: "
                        f"{state} in {summary.seconds} s → {summary.folder}", highlight=False)


def _open_target(words: tuple[str, ...], endpoint: str | None, profile: str) -> tuple[KnowledgeBase, str]:
    """``NAME QUESTION`` → that KB; ``--endpoint URL QUESTION`` → an unsaved KB over the endpoint."""
    from sparqlqa.errors import ConfigError
    from sparqlqa.text_input import NAME, PROSE, clean_text

    if endpoint is not None:
        if len(words) != 1:
            raise ConfigError("with --endpoint, give only the question", hint='sparqlqa ask --endpoint URL "question"')
        from sparqlqa.remote import open_endpoint

        question = clean_text(words[0], kind=PROSE, field="the question (QUESTION)")
        return open_endpoint(endpoint, profile), question
    if len(words) != 2:
        raise ConfigError("give a knowledge base name and a question",
                          hint='sparqlqa ask NAME "question"  (or: sparqlqa ask --endpoint URL "question")')
    from sparqlqa.kb.knowledge_base import open_kb

    name = clean_text(words[0], kind=NAME, field="the knowledge base name (NAME)")
    question = clean_text(words[1], kind=PROSE, field="the question (QUESTION)")
    return open_kb(name), question


@click.command("ask")
@click.argument("words", nargs=-1, required=True, metavar="NAME QUESTION")
@click.option("--endpoint", metavar="URL", help="Ask a SPARQL endpoint directly (no saved KB): give only QUESTION.")
@click.option("--profile", "profile_name", default="generic", show_default=True,
              help="With --endpoint: wikidata, freebase, generic or a profile file.")
@llm_options
@click.option("--k", "k", type=click.IntRange(min=1), default=20, show_default=True,
              help="Candidates kept for reranking (topped up from the vector ranking when fewer survive).")
@click.option("--rerank", type=click.Choice(values(RerankMode)), default=RerankMode.LISTWISE.value, show_default=True,
              help="LLM rerank of the top k.")
@click.option("--strategy", metavar="NAME", help="4step, fiske, text2sparql (the LLM writes the whole query), "
              "offline, vss or vss+rerank (default: 4step with an LLM, else offline).")
@click.option("--embedder", "embedder_spec", metavar="SPEC", help="Embedder for the vector ranking.")
@device_option
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True, help="Answers shown.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole answer as JSON.")
@click.option("--format", "table_format", type=click.Choice(tuple(TABLE_FORMATS)),
              help="Write only the answer's table on stdout, every row, as CSV or TSV (a count or yes/no is one "
              "cell): a header of column names, IRIs in node columns, each followed by its <column>_name.")
@click.option("--explain", is_flag=True, help="Print each stage's result as a readable trace.")
@click.option("--save-sparql", "save_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write every executed query as a commented .rq file into this folder.")
@click.option("-q", "--quiet", is_flag=True, help="Only the answers (no SPARQL, no notes).")
@click.option("--plain", is_flag=True, help="Tab-separated answers with full IRIs and bare SPARQL: for copying.")
@click.option("--call-budget", type=click.IntRange(min=2), help="fiske: most LLM calls per question "
              "(default 30, or $SPARQLQA_FISKE_BUDGET).")
@endpoint_timeout_option()
@click.option("--exact", is_flag=True, help="Only answers that satisfied the query (no 'similar, not matched' "
              "fill-in from vector search).")
@click.option("--topic", type=click.Choice(values(TopicMode)), default=TopicMode.AUTO.value, show_default=True,
              help="The nodes the question names: auto = left out unless the query returns only them; "
              "exclude = always left out; keep = answers like any other node.")
@click.option("--lang", metavar="CODE", help="The question's language (de, fr, es ...; default: detected). "
              "Answers are named in it where the KB has a label in it.")
def ask(words: tuple[str, ...], endpoint: str | None, profile_name: str, llm_spec: str | None,
        llm_cache: str | None, k: int, rerank: str, strategy: str | None, embedder_spec: str | None, top: int,
        as_json: bool, table_format: str | None, explain: bool, save_dir: Path | None, quiet: bool, plain: bool,
        call_budget: int | None, timeout_s: float | None, exact: bool = False, topic: str = TopicMode.AUTO,
        lang: str | None = None) -> None:
    """Answer QUESTION over knowledge base NAME (or over a SPARQL endpoint with --endpoint).

    \b
    Examples:
      sparqlqa ask movies "Which films did Ridley Scott direct?" --explain
      sparqlqa ask --endpoint http://localhost:8890/sparql --profile freebase "who directed Alien"
    """
    one_blas_thread()
    from sparqlqa.embed.embedders import get_embedder
    from sparqlqa.strategies.ask import ask as run_ask

    _check_format(table_format, as_json=as_json, plain=plain, explain=explain)
    with endpoint_timeout(timeout_s):
        target, question = _open_target(words, endpoint, profile_name)
        with target as kb:
            prepare_index(kb, get_embedder(embedder_spec), [strategy], quiet=quiet)
            answer = run_ask(kb, question, strategy=strategy, llm=llm_spec, k=k, rerank=rerank,
                             embedder=embedder_spec, llm_cache=llm_cache,
                             settings={"call_budget": call_budget} if call_budget else None, exact=exact,
                             topic=topic, lang=lang)
            prefixes = kb_prefixes(kb)
    saved = _save(answer, save_dir, prefixes) if save_dir is not None else []
    _warn_if_unnarrowed(answer)
    if as_json or table_format:
        if table_format:
            click.echo(delimited(answer_rows(answer), TABLE_FORMATS[table_format]), nl=False)
        else:
            print_json(answer.to_dict())
        if not quiet:  # stdout stays pure JSON or rows; the notes go to stderr
            for text in answer.notes:
                note(f"note: {text}")
    else:
        show_answer(answer, top=top, explain=explain, quiet=quiet, plain=plain)
    if saved and not quiet:
        note(f"saved {len(saved)} SPARQL file(s) to {save_dir}")
    if unnarrowed(answer):
        sys.exit(NO_NODE_EXIT)


def _check_format(table_format: str | None, *, as_json: bool, plain: bool, explain: bool) -> None:
    """``--format`` writes only rows on stdout: it goes with none of the other outputs."""
    from sparqlqa.errors import ConfigError

    others = [flag for flag, given in (("--json", as_json), ("--plain", plain), ("--explain", explain)) if given]
    if table_format and others:
        raise ConfigError(f"--format {table_format} writes only the answer's rows: it cannot go with "
                          + " or ".join(others), hint=f'sparqlqa ask NAME "question" --format {table_format}')
def prepare_index(kb: KnowledgeBase, embedder: Embedder, strategies: Sequence[str | None], *, quiet: bool = False,
                  ahead: bool = True) -> bool:
    """Before answering, on the terminal (``ask``, ``eval``, ``serve``): build the node index when one of
    ``strategies`` answers from it alone (``vss``), load (repair, with a warning) a finished one, build a tiny
    KB's; the default strategies never wait for a bigger unbuilt or unfinished index (stage 3 embeds the
    SPARQL candidates, says how to build it).  Whether the index is at hand now."""
    from sparqlqa.vectors.index import index_at_hand, index_supported

    if not index_supported(kb):
        return False
    if any(needs_index(strategy) for strategy in strategies) or index_at_hand(kb, embedder):
        ensure_index(kb, embedder, quiet=quiet, ahead=ahead)
        return True
    return False


def needs_index(strategy: str | None) -> bool:
    """Whether ``strategy`` answers from the node index alone (``vss``); the default strategies do not."""
    if not strategy:
        return False
    from sparqlqa.strategies.base import strategies

    return strategies.get(strategy).needs_index


def _save(answer: Answer, directory: Path, prefixes: dict[str, str]) -> list[Path]:
    from sparqlqa.stages.audit import save_sparql

    return save_sparql(answer, directory, prefixes=prefixes)


# --- rendering -----------------------------------------------------------------------------------


def show_answer(answer: Answer, *, top: int = 10, explain: bool = False, quiet: bool = False,
                plain: bool = False) -> None:
    """The ranked answers as a table, then the SPARQL (unless quiet) or the full trace (explain).

    ``plain``: tab-separated answers with full IRIs and the bare SPARQL, for copying and scripts."""
    out = console()
    if explain:
        print_trace(answer, out)
    tabular = answer.form in TABLE_FORMS
    if plain:
        click.echo(delimited(answer_rows(answer), "\t") if tabular else answers_tsv(answer, top) + "\n", nl=False)
    elif answer.form == "value":
        out.print(cell(answer.headline))  # the value itself: "41.5", "1979-05-25"
    elif tabular:
        out.print(table_view(answer, top))
    else:
        out.print(cell(answer.headline))  # "3 films: …", "4 films: …", "yes — <evidence>", "no — …"
        out.print(answers_table(answer, top))
    if not quiet and not explain:
        for record in [q for q in answer.queries if q.stage == "sparql"]:
            print_sparql(record, plain=plain)
    if not quiet:
        for text in answer.notes:
            note(f"note: {text}")


def unnarrowed(answer: Answer) -> bool:
    """Whether the answer's strategy wanted to narrow with SPARQL but the question named no node of
    the KB, so every answer comes from vector similarity alone."""
    if answer.triplets is None:  # vss, vss+rerank: vectors by design
        return False
    links = answer.linked.links if answer.linked is not None else {}
    return not any(links.values()) and all(item.source == ItemSource.VECTOR for item in answer.items)


def _warn_if_unnarrowed(answer: Answer) -> None:
    if unnarrowed(answer) and not answer.items:
        warning(f"the question names no node of {answer.kb}, and the vector ranking needs its node index, which "
                f"is not built yet: name an entity as the KB spells it (try 'sparqlqa ask --explain'), or run "
                f"'sparqlqa index {answer.kb}' once")
    elif unnarrowed(answer):
        warning(f"the question names no node of {answer.kb}: these answers are only the nodes most similar to "
                "its words (no SPARQL narrowed them); name an entity as the KB spells it "
                "(try 'sparqlqa ask --explain')")


def answers_table(answer: Answer, top: int) -> Any:
    """A rich table: rank, label, type, score, tier, evidence (fill-in: "similar, not matched")."""
    from rich.table import Table

    from sparqlqa.stages.answer import FILL_IN_MARK

    table = Table(title=cell(f"{answer.question}  [{answer.strategy}]"), title_justify="left")
    for column in ("#", "answer", "type", "score", "tier", "evidence"):
        table.add_column(column, overflow="fold", justify="right" if column in ("#", "score") else "left")
    for rank, item in enumerate(answer.items[:top], start=1):
        evidence = item.evidence_text(answer.labels)
        summary = "; ".join(evidence[:2]) + (f" (+{len(evidence) - 2})" if len(evidence) > 2 else "")
        tier = str(item.tier) if item.tier is not None else \
            ("model" if item.source == ItemSource.MODEL_KNOWLEDGE else "vector")
        if not item.matched:
            why = f" (moved up by the rerank: {item.rerank_reason})" if item.rerank_reason else ""
            summary = FILL_IN_MARK + why
        table.add_row(str(rank), cell(item.label), cell(item.type_label or ""), f"{item.score:.3f}", tier,
                      cell(summary or "—", style="" if item.matched else "dim"))
    if not answer.items:
        table.add_row("", "(no answer)", "", "", "", "")
    return table


def answer_rows(answer: Answer) -> Table:
    """The answer's table: its query's own, or its items as one column, its count or yes/no as one cell."""
    from sparqlqa.stages.answer import answer_table

    return answer.table or answer_table(answer)


def _numeric(table: Table, index: int) -> bool:
    """Whether every bound cell of column ``index`` is a number (xsd:integer, decimal, double, …)."""
    from sparqlqa.kb.terms import is_value_key, value_datatype
    from sparqlqa.stages.forms import is_numeric_type

    cells = [key for key in table.column(table.columns[index].name) if key is not None]
    return bool(cells) and all(is_value_key(key) and is_numeric_type(value_datatype(key)) for key in cells)


def table_view(answer: Answer, top: int) -> Any:
    """A table answer as a rich table: the columns' headings, node cells by name, numbers right-aligned; the
    first ``top`` rows, the caption says how many there are and how to get them all."""
    from rich.table import Table as RichTable

    table = answer_rows(answer)
    view = RichTable(title=cell(f"{answer.question}  [{answer.strategy}]"), title_justify="left",
                     caption_justify="left")
    for index, column in enumerate(table.columns):
        view.add_column(cell(column.heading), overflow="fold",
                        justify="right" if _numeric(table, index) else "left")
    for row in table.text_rows()[:top]:
        view.add_row(*(cell(text) for text in row))
    total = len(table.rows)
    caption = [f"{total} {plural('row', total)}" + (" (in the query's order)" if table.ordered else "")]
    if total > top:
        caption.append(f"the first {top} shown: --top N shows more, --format csv writes them all")
    if table.truncated:
        caption.append("cut short at the row limit")
    view.caption = cell("; ".join(caption), style="dim")
    if not table.rows:
        view.add_row(*(["(no answer)"] + [""] * (table.width - 1)))
    return view


def delimited(table: Table, separator: str) -> str:
    """A table as CSV (``separator`` ``,``) or TSV (a tab) for scripts: a header of column names, then every
    row; a node column holds IRIs and is followed by ``<column>_name`` (the node's name), a value column
    holds lexical forms; an unbound cell is empty.  A TSV field has its tabs and line breaks made spaces."""
    lines = [_header(table), *_fields(table)]
    if separator == "\t":
        return "".join("\t".join(safe(text) for text in line) + "\n" for line in lines)
    import csv
    import io

    buffer = io.StringIO()
    csv.writer(buffer, delimiter=separator, lineterminator="\n").writerows(
        [safe_field(text) for text in line] for line in lines)
    return buffer.getvalue()


def _header(table: Table) -> list[str]:
    names = [column.name for column in table.columns]
    header: list[str] = []
    for column in table.columns:
        header.append(column.name)
        if column.kind == ColumnKind.NODE:
            header.append(_free_name(f"{column.name}_name", names + header))
    return header


def _fields(table: Table) -> list[list[str]]:
    rows = []
    for keys, lexical in zip(table.rows, table.lexical_rows()):
        fields: list[str] = []
        for column, key, value in zip(table.columns, keys, lexical):
            fields.append(value or "")
            if column.kind == ColumnKind.NODE:
                fields.append(table.text(key))
        rows.append(fields)
    return rows


def _free_name(name: str, taken: list[str]) -> str:
    """``name``, or ``name_2``, ``name_3``, … when a column already has it."""
    number = 1
    candidate = name
    while candidate in taken:
        number += 1
        candidate = f"{name}_{number}"
    return candidate


def answers_tsv(answer: Answer, top: int) -> str:
    """The answers as tab-separated lines with a header: rank, label, type, score, tier, IRI, evidence."""
    from sparqlqa.stages.answer import FILL_IN_MARK

    lines = ["rank\tanswer\ttype\tscore\ttier\tiri\tevidence"]
    for rank, item in enumerate(answer.items[:top], start=1):
        tier = str(item.tier) if item.tier is not None else "vector"
        cells = [str(rank), item.label, item.type_label or "", f"{item.score:.3f}", tier, item.iri,
                 "; ".join(item.evidence_text(answer.labels)) if item.matched else FILL_IN_MARK]
        lines.append("\t".join(" ".join(safe(text).split()) for text in cells))
    return "\n".join(lines)


def print_sparql(record: QueryRecord, *, plain: bool = False) -> None:
    """One executed query in full, never cropped: a comment line with its row count and time, then the
    query, syntax-highlighted and soft-wrapped on a terminal (the terminal wraps long lines; copying
    gives the query back), bare with ``plain`` or when stdout is no terminal."""
    title = f"# SPARQL ({record.stage or 'sparql'}): {record.rows} rows, {record.elapsed_ms} ms"
    query = record.query.rstrip("\n")
    out = console()
    if plain or not out.is_terminal:
        click.echo(f"{title}\n{query}\n")
        return
    from rich.syntax import Syntax

    out.print(title, style="dim", soft_wrap=True, markup=False, highlight=False)
    text = Syntax(query, "sparql", background_color="default").highlight(query)
    text.rstrip()
    out.print(text, soft_wrap=True)
    out.print()


# --- --explain ---------------------------------------------------------------------------------------


def print_trace(answer: Answer, out: Any) -> None:
    """Each stage's result, in order, as readable text."""
    from sparqlqa.strategies.fiske.state import FiskeRun

    fiske = answer.meta.records.get("fiske")
    if isinstance(fiske, FiskeRun):  # FiSKE has no triplets or linked constants: its routes take their place
        from sparqlqa.strategies.fiske.report import route_lines

        _heading(out, f"1-2. FiSKE routes (stop: {fiske.stop}, answer: {fiske.answer_source or 'none'})")
        for line in route_lines(fiske.to_dict(), answer.labels):
            out.print(f"   {line}", highlight=False, markup=False)
    else:
        _print_triplets_and_links(answer, out)
    _heading(out, "3. SPARQL")
    for line in _candidate_lines(answer):
        out.print(f"   {safe(line)}", highlight=False, markup=False)
    for record in [q for q in answer.queries if q.stage == "sparql"]:
        print_sparql(record)
    _heading(out, "4. vector ranking")
    ranking = answer.meta.ranking
    if ranking is not None:
        out.print(safe(f"   query text: {ranking.query_text!r}; {ranking.filtered} filtered, "
                       f"{ranking.added} added from the global ranking "
                       f"(type: {ranking.target_type or 'any'})"), highlight=False, markup=False)
    _heading(out, f"5. rerank ({answer.meta.rerank}, LLM: {answer.meta.llm or 'none'})")
    for line in _llm_lines(answer):
        out.print(f"   {safe(line)}", highlight=False, markup=False)
    _heading(out, "timings")
    out.print("   " + ", ".join(f"{stage} {ms:.1f} ms" for stage, ms in answer.timings_ms.items()),
              highlight=False)


def _print_triplets_and_links(answer: Answer, out: Any) -> None:
    from sparqlqa.stages.audit import triplet_lines

    triplets = answer.triplets
    source = f" (source: {triplets.source})" if triplets is not None else ""
    _heading(out, f"1. triplets{source}")
    for line in [*_offline_lines(answer.meta.offline), *triplet_lines(answer)]:
        out.print(f"   {safe(line)}", highlight=False, markup=False)
    _heading(out, "2. linked constants")
    for line in _linked_lines(answer):
        out.print(f"   {safe(line)}", highlight=False, markup=False)


def _offline_lines(reasons: object, shown: int = 5) -> list[str]:
    """The offline step's reasoning (an ``OfflineReasons``): mentions found, paths considered with scores,
    readings chosen."""
    from sparqlqa.strategies.offline.reasons import OfflineReasons

    if not isinstance(reasons, OfflineReasons) or reasons.empty:
        return []
    lines = ["mentions: " + ("; ".join(f"{m.text!r} ({m.method}, {round(m.score, 3)}, {len(m.nodes[:5])} node(s))"
                                      for m in reasons.mentions) or "none")]
    for mention, paths in reasons.paths.items():
        lines.append(f"paths from {mention!r}:")
        for path in paths[:shown]:
            parts = ", ".join(f"{k} {round(v, 4):+.3f}" for k, v in path.parts.items())
            lines.append(f"  {round(path.score, 4):+.4f}  {path.arrows()}  ({path.count} node(s); {parts})")
    for choice in reasons.chosen:
        sure = f", confidence {round(choice.confidence, 4)}" if choice.confidence is not None else ""
        lines.append(f"chosen: {choice.reading}  score {round(choice.score, 4)}{sure}")
    return lines


def _heading(out: Any, text: str) -> None:
    out.print(cell(text, style="bold"))


def _linked_lines(answer: Answer) -> list[str]:
    links = answer.linked.links if answer.linked is not None else {}
    if not links:
        return ["(no constants linked)"]
    lines = []
    for text, matches in links.items():
        shown = ", ".join(f"{m.label} <{m.iri}> ({m.method} {m.score:.2f})" for m in matches[:3])
        lines.append(f"{text!r} → {shown or 'nothing'}")
    return lines


def _candidate_lines(answer: Answer) -> list[str]:
    candidates = answer.candidates
    if candidates is None:
        return ["(no SPARQL ran)"]
    tiers: dict[int, int] = {}
    for item in candidates.items:
        tiers[item.tier] = tiers.get(item.tier, 0) + 1
    by_tier = ", ".join(f"tier {t}: {n}" for t, n in sorted(tiers.items())) or "none"
    lines = [f"{len(candidates.items)} candidate(s) for {candidates.target} ({by_tier})"]
    if candidates.dropped:
        lines.append(f"dropped triplets: {', '.join(str(i + 1) for i in candidates.dropped)}")
    return lines


def _llm_lines(answer: Answer) -> list[str]:
    if not answer.llm_calls:
        return ["(no LLM calls)"]
    lines = []
    for number, call in enumerate(answer.llm_calls, start=1):
        cached = " cached" if call.cache_hit else ""
        lines.append(f"call {number}: {call.backend}:{call.model} {call.input_tokens} in / "
                     f"{call.output_tokens} out tokens, {call.latency_ms:.0f} ms{cached}")
    return lines
