"""``sparqlqa llm ...``: the response cache, pending prompts, usage and keys.

Also exports :func:`llm_options`, the ``--llm`` / ``--llm-cache`` options for
every command that may call an LLM, and :func:`llm_from_options` to turn them
into an :class:`~sparqlqa.llm.LLM` (or None: use the offline strategy).
"""

from __future__ import annotations

__all__ = ["export_pending", "import_", "keys", "keys_delete", "keys_list", "keys_set", "llm", "llm_from_options",
           "llm_options", "pending", "stats"]

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from sparqlqa.llm import LLM

F = TypeVar("F", bound=Callable[..., Any])


def llm_options(func: F) -> F:
    """Add ``--llm SPEC`` (kwarg ``llm_spec``) and ``--llm-cache`` (kwarg ``llm_cache``) to a command."""
    func = click.option(
        "--llm-cache", "llm_cache", type=click.Choice(["use", "only", "off"]), default=None,
        envvar="SPARQLQA_LLM_CACHE", show_envvar=True,
        help="LLM response cache: use (read, call on miss, write; default), only (never call an LLM: "
        "misses are recorded for 'sparqlqa llm export-pending'), off.",
    )(func)
    func = click.option(
        "--llm", "llm_spec", metavar="SPEC", default=None, callback=_known_llm,
        help="LLM backend: anthropic[:MODEL], openai:BASE_URL#MODEL, offline.  Default: $SPARQLQA_LLM, "
        "else Anthropic when a key is set, else offline.",
    )(func)
    return func


def _known_llm(ctx: click.Context, param: click.Parameter, spec: str | None) -> str | None:
    """An unknown backend name fails at once, before any index is built or question asked."""
    from sparqlqa.errors import UnknownNameError
    from sparqlqa.llm import llms
    from sparqlqa.llm.base import llm_choices

    name = (spec or "").partition(":")[0].strip().lower()
    if name and name not in ("offline", "none") and name not in llms:
        raise UnknownNameError("llm", name, llm_choices())
    return spec


def llm_from_options(llm_spec: str | None, llm_cache: str | None) -> LLM | None:
    """The LLM chosen by :func:`llm_options`' values, or None for the offline strategy."""
    from sparqlqa.llm import get_llm, resolve_llm_spec

    spec = resolve_llm_spec(llm_spec)
    if spec is None:
        return None
    return get_llm(spec, cache_mode=llm_cache)


def _emit(as_json: bool, data: Any, text: str) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False) if as_json else text)


@click.group("llm")
def llm() -> None:
    """LLM response cache, pending prompts, usage and API keys."""


@llm.command("export-pending")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def export_pending(file: Path, as_json: bool) -> None:
    """Write prompts that missed the cache in '--llm-cache only' mode to FILE (JSONL).

    Each line has id, backend, model, who asked (question_id, question, kb,
    strategy, stage), system, messages, options, schema and "response": null.
    Stale prompts (see 'sparqlqa llm pending') are left out.  Fill in the responses (text, or JSON for prompts with a
    schema) and load them with 'sparqlqa llm import FILE'.
    """
    from sparqlqa.llm import LLMCache

    cache = LLMCache()
    count = cache.export_pending(file)
    stale = len(cache.pending(stale=True))
    text = f"wrote {count} pending prompt(s) to {file}" if count else f"no pending prompts; wrote empty {file}"
    if stale:
        text += f" ({stale} stale prompt(s) left out: 'sparqlqa llm pending --stale')"
    _emit(as_json, {"file": str(file), "pending": count, "stale": stale}, text)


@llm.command("pending")
@click.option("--stale", is_flag=True, help="The stale prompts instead: ones no current run asks any more.")
@click.option("--clear", is_flag=True, help="Remove the listed prompts from the cache.")
@click.option("--json", "as_json", is_flag=True, help="Print the prompts as JSON.")
def pending(stale: bool, clear: bool, as_json: bool) -> None:
    """List prompts waiting for an answer ('--llm-cache only' misses): stage, KB, strategy, question.

    A prompt is stale when the latest run of its question (same KB, strategy
    and question) did not ask it any more, e.g. once an earlier stage was
    answered.  Stale prompts are not exported; rerun the eval to refresh the
    set, then 'sparqlqa llm pending --stale --clear' removes the leftovers.
    """
    from sparqlqa.llm import LLMCache

    cache = LLMCache()
    records = cache.pending(stale=stale)
    removed = cache.clear_pending(stale_only=stale) if clear else 0
    rows = [{name: record.get(name) for name in ("id", "stage", "kb", "strategy", "question_id", "question",
                                                  "backend", "model", "stale")} for record in records]
    kind = "stale" if stale else "pending"
    lines = [_pending_line(row) for row in rows]
    lines.append(f"{len(rows)} {kind} prompt(s)" + (f"; removed {removed}" if clear else ""))
    _emit(as_json, {"stale": stale, "count": len(rows), "removed": removed, "prompts": rows}, "\n".join(lines))


def _pending_line(row: dict[str, Any]) -> str:
    question = " ".join(str(row.get("question") or "-").split())
    if len(question) > 60:
        question = question[:59] + "…"
    who = "/".join(str(row.get(name) or "-") for name in ("kb", "strategy"))
    qid = f"[{row['question_id']}] " if row.get("question_id") else ""
    return f"{row['id'][:12]}  {row.get('stage') or '-':<9} {who}  {qid}{question}"


@llm.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def import_(file: Path, as_json: bool) -> None:
    """Load answers from FILE (JSONL: {"id": ..., "response": text or JSON}) into the cache.

    Answers to prompts with a schema are validated against it; invalid lines
    are reported and skipped (exit status 1).  Their token counts are estimated
    from the text (about 4 characters a token) and marked as estimated.
    """
    from sparqlqa.llm import LLMCache

    report = LLMCache().import_answers(file)
    text = (f"imported {report.imported}, invalid {report.invalid}, unknown id {report.unknown}, "
            f"unanswered {report.unanswered}")
    if report.errors and not as_json:
        text += "\n" + "\n".join(f"  {line}" for line in report.errors)
    _emit(as_json, report.to_dict(), text)
    if report.invalid or report.unknown:
        click.get_current_context().exit(1)


@llm.command("stats")
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
def stats(as_json: bool) -> None:
    """Summarise the LLM response cache and recorded usage (tokens, cost, hits)."""
    from sparqlqa.llm import LLMCache

    data = LLMCache().stats()
    _emit(as_json, data, _format_stats(data))


def _format_stats(data: dict[str, Any]) -> str:
    usage = data["usage"]
    cost = f"${usage['cost_usd']:.4f}" if usage["cost_usd"] is not None else "unknown"
    lines = [
        f"cache: {data['path']} ({data['size_bytes'] / 1024:.0f} KiB)",
        f"stored responses: {data['responses']}    pending prompts: {data['pending']}"
        f" (+{data['stale_pending']} stale)",
        f"calls: {usage['calls']} (cache hits {usage['cache_hits']}, errors {usage['errors']}, "
        f"{usage['estimated_calls']} with estimated tokens)",
        f"tokens: {usage['input_tokens']} in, {usage['output_tokens']} out    cost: {cost}",
    ]
    for row in data["usage_by_model"]:
        row_cost = f"${row['cost_usd']:.4f}" if row["cost_usd"] is not None else "cost unknown"
        latency = f"{row['avg_latency_ms']:.0f} ms avg" if row["avg_latency_ms"] is not None else "-"
        lines.append(f"  {row['backend']}:{row['model']}: {row['calls']} calls, {row['cache_hits']} hits, "
                     f"{row['input_tokens']}+{row['output_tokens']} tokens, {row_cost}, {latency}")
    return "\n".join(lines)


@llm.group("keys")
def keys() -> None:
    """API keys stored in $SPARQLQA_HOME/keys.json (mode 0600); environment variables win."""


@keys.command("set")
@click.argument("name", type=click.Choice(["anthropic", "openai"]))
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def keys_set(name: str, as_json: bool) -> None:
    """Store the API key for NAME (asked for without echo)."""
    from sparqlqa.llm.keys import set_key

    value = click.prompt(f"{name} API key", hide_input=True, err=True)
    path = set_key(name, value)
    _emit(as_json, {"name": name, "file": str(path)}, f"stored the {name} key in {path} (mode 0600)")


@keys.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def keys_list(as_json: bool) -> None:
    """Say where each provider's key comes from (never prints keys)."""
    from sparqlqa.llm.keys import KEY_ENV_VARS, key_source

    sources = {name: key_source(name) for name in KEY_ENV_VARS}
    _emit(as_json, sources, "\n".join(f"{name}: {src or 'not set'}" for name, src in sources.items()))


@keys.command("delete")
@click.argument("name", type=click.Choice(["anthropic", "openai"]))
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def keys_delete(name: str, as_json: bool) -> None:
    """Remove the stored key for NAME from the keys file."""
    from sparqlqa.llm.keys import delete_key

    removed = delete_key(name)
    _emit(as_json, {"name": name, "removed": removed},
          f"removed the {name} key" if removed else f"no stored {name} key")
