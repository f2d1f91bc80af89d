"""The ``text2sparql`` strategy: the LLM writes the whole SPARQL query from the schema, made robust.

1. One LLM call (:mod:`~sparqlqa.strategies.text2sparql.prompts`) returns ``{"sparql", "columns", "form"}``
   (an older ``answer_variable`` is read as one column).
2. The query is read by real parsers, updates and SERVICE refused
   (:func:`~sparqlqa.strategies.text2sparql.query.read_query`).
3. Names it wrote as literals or guessed IRIs are linked to KB nodes and substituted as terms
   (:func:`~sparqlqa.strategies.text2sparql.grounding.ground`).
4. It runs through :meth:`KnowledgeBase.query` inside the request's bounds, recorded as stage ``sparql``;
   where a path goes out and back along one relation a FILTER keeps its two ends apart
   (:func:`~sparqlqa.strategies.text2sparql.query.out_and_back`), unless that leaves no answer.
5. A syntax error (an unknown prefix included), a form that returns no answers, or no rows where rows
   were expected (not a count of 0, an aggregate over nothing, nor a negative question's empty answer):
   one repair call gets the query and what went wrong, and its query goes through 2–4 again.  One repair
   at most.
6. The rows are the answer (``source="filtered"``), its table the query's named columns (:func:`shape`):
   several → form table, one ``COUNT`` → count, one other aggregate → value, one column → list (node
   IRIs and literal values: the items), ``ASK`` → boolean.  Only when no query ran to an answer does the
   vector ranking fill in, marked as fill-in, with a note.

Its record (each attempt: the LLM's query, the query that ran, substitutions, rows, the problem) is
``answer.meta.records["text2sparql"]`` (a :class:`Text2SparqlRun`; ``text2sparql_result`` in the JSON);
``answer.meta.answer_source`` says where the items came from (``query``, ``vector-fill-in``, ``pending``).
"""

from __future__ import annotations

__all__ = ["Attempt", "Draft", "Shaped", "Text2SparqlRun", "TextToSparql", "answer_variable"]

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sparqlqa.errors import LLMParseError, NotInCache, QueryError, ServiceRefused, SparqlSyntaxError, UpdateRefused
from sparqlqa.kb.records import QueryRecord
from sparqlqa.kb.terms import is_blank_key, is_value_key, term_key, value_text
from sparqlqa.kb.vocab import kb_prefixes
from sparqlqa.llm.context import llm_context
from sparqlqa.stages.answer import AnswerItem, Ranking
from sparqlqa.stages.modes import Form, ItemSource, values
from sparqlqa.stages.table import Table
from sparqlqa.strategies.base import Strategy, strategies
from sparqlqa.strategies.pipeline import AskContext, Reranked, build_answer, rank, rerank_top
from sparqlqa.strategies.text2sparql import prompts
from sparqlqa.strategies.text2sparql.grounding import Grounding, Substitution, ground, unmatched, written_term
from sparqlqa.strategies.text2sparql.query import (
    ReadQuery,
    add_filter,
    counted_items,
    out_and_back,
    read_query,
    readable,
    substitute,
)

if TYPE_CHECKING:
    from sparqlqa.kb.store import QueryResult
    from sparqlqa.llm import LLM, LLMCall
    from sparqlqa.stages.answer import Answer
    from sparqlqa.stages.execute import Candidates

PENDING_NOTE = ("waiting for recorded LLM answers (--llm-cache only): the text2sparql {what} prompt is pending; "
                "'sparqlqa llm export-pending FILE', answer it, 'sparqlqa llm import FILE', then ask again")
FILL_IN_NOTE = ("text2sparql: no query answered ({why}); the items are vector fill-in, similar to the question "
                "but not matched by a query")


class Pending(Exception):
    """An LLM prompt missed the cache in ``--llm-cache only`` mode."""


@dataclass(frozen=True)
class Draft:
    """The LLM's answer, read from its JSON: the query as written, its answer columns (no ``?``), its form.
    An older answer's ``answer_variable`` is read as its one column."""

    sparql: str
    columns: tuple[str, ...] = ()
    form: str = Form.LIST

    @classmethod
    def read(cls, data: object) -> Draft | None:
        """``None`` unless ``data`` is a JSON object; a missing or unknown form is ``list``."""
        if not isinstance(data, dict):
            return None
        form = data.get("form") if data.get("form") in values(Form) else Form.LIST
        named = data.get("columns")
        written = named if isinstance(named, list) else [data.get("answer_variable")]
        columns = (str(c).strip().lstrip("?$") for c in written if c)
        return cls(sparql=str(data.get("sparql", "")), form=str(form),
                   columns=tuple(dict.fromkeys(c for c in columns if c)))

    @property
    def answer_variable(self) -> str:
        """The first column: the one whose answers are the items."""
        return self.columns[0] if self.columns else ""


@dataclass
class Attempt:
    """One query: as the LLM wrote it, as it ran, what was linked, what came back or went wrong."""

    written: str
    answer_variable: str = ""
    form: str = Form.LIST
    #: the answer columns the LLM named (its first is ``answer_variable``)
    columns: list[str] = field(default_factory=list)
    sparql: str = ""
    substitutions: list[Substitution] = field(default_factory=list)
    rows: int | None = None
    problem: str | None = None
    #: the problem is one the repair call may fix (syntax, unknown prefix, no SELECT/ASK, no rows expected)
    repairable: bool = False
    result: QueryResult | None = None
    grounding: Grounding | None = None
    #: the query as the parsed algebra reads it (aggregates, order, grouping, negation)
    read: ReadQuery | None = None
    #: the FILTER conditions added to keep the ends of an out-and-back path apart
    kept_apart: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"written": self.written, "answer_variable": self.answer_variable, "columns": self.columns,
                "form": self.form, "sparql": self.sparql, "substitutions": [s.to_dict() for s in self.substitutions],
                "kept_apart": self.kept_apart, "rows": self.rows, "problem": self.problem}


@strategies.register("text2sparql")
class TextToSparql(Strategy):
    """The LLM writes the whole SPARQL query from the schema; names linked, one repair round."""

    needs_llm = True

    def run(self, ctx: AskContext) -> Answer:
        attempts: list[Attempt] = []
        try:
            first = self.attempt(ctx, self.ask_llm(ctx, prompts.build_prompt(
                ctx.question, ctx.kb, embedder=ctx.word_embedder), "text2sparql"))
            if first is not None:
                attempts.append(first)
            if first is not None and first.problem and first.repairable:
                ctx.note(f"text2sparql: the first query failed ({_first_line(first.problem)}); asked for a repair")
                repaired = self.attempt(ctx, self.ask_llm(ctx, prompts.repair_prompt(
                    ctx.question, ctx.kb, first.sparql or first.written, first.problem,
                    embedder=ctx.word_embedder), "text2sparql-repair"))
                if repaired is not None:
                    attempts.append(repaired)
        except Pending as pending:
            ctx.note(PENDING_NOTE.format(what=str(pending)))
            return finish(ctx, attempts, "pending")
        final = attempts[-1] if attempts else None
        if final is not None and final.result is not None and not final.problem:
            return answer_from_rows(ctx, final, attempts)
        why = _first_line(final.problem) if final is not None and final.problem else "the LLM wrote no usable query"
        ctx.note(FILL_IN_NOTE.format(why=why))
        ranking = rank(ctx, None, None)
        return finish(ctx, attempts, "vector-fill-in", ranking, rerank_top(ctx, ranking, enabled=False))

    def ask_llm(self, ctx: AskContext, prompt: str, stage: str) -> Draft | None:
        """The LLM's JSON (``None`` with a note when it is not JSON); :class:`Pending` when not cached."""
        if ctx.llm is None:  # guarded by ask(); kept for direct callers
            from sparqlqa.errors import ConfigError

            raise ConfigError("the text2sparql strategy needs an LLM")
        with ctx.stage("llm"), llm_context(stage=stage):
            try:
                reply = ctx.llm.complete(prompt, system=prompts.SYSTEM_PROMPT, schema=prompts.QUERY_SCHEMA,
                                         schema_name="sparql_query")
            except NotInCache as exc:
                ctx.pending.append(exc.key)
                raise Pending("repair" if stage.endswith("repair") else "query") from None
            except LLMParseError as exc:
                ctx.note(f"text2sparql: the LLM's answer could not be read ({exc})")
                ctx.llm_calls.append(_failed_call(ctx.llm, prompt, exc))
                return None
        ctx.llm_calls.append(reply.call)
        return Draft.read(reply.data)

    def attempt(self, ctx: AskContext, draft: Draft | None) -> Attempt | None:
        """Read, link and run the query of ``draft``; problems are recorded on the attempt, never raised."""
        if draft is None:
            return None
        attempt = Attempt(written=draft.sparql, form=draft.form, answer_variable=draft.answer_variable,
                          columns=list(draft.columns))
        read: ReadQuery | None = None
        try:
            with ctx.stage("sparql"):
                read = attempt.read = read_query(attempt.written, kb_prefixes(ctx.kb))
            if read.opaque:
                ctx.note("text2sparql: rdflib could not read the query's triple patterns; its names were not linked")
            with ctx.stage("linking"):
                attempt.grounding = ground(ctx.kb, read, embedder=ctx.word_embedder)
            attempt.substitutions = list(attempt.grounding.substitutions)
            for note in attempt.grounding.notes:
                ctx.note(note)
            attempt.sparql = substitute(read.text, attempt.grounding.replacements, attempt.grounding.predicates)
            with ctx.stage("sparql"):
                run_query(ctx, attempt, read, attempt.grounding)
        except (UpdateRefused, ServiceRefused) as exc:
            attempt.problem = f"refused: {exc.message}"
        except SparqlSyntaxError as exc:
            attempt.problem, attempt.repairable = readable(exc), True
        except QueryError as exc:
            attempt.problem = readable(exc)
            attempt.repairable = "expected SELECT or ASK" in exc.message
        record_query(ctx, attempt)
        if attempt.result is not None:
            _check_rows(attempt)
        if attempt.problem and attempt.rows == 0 and read is not None and attempt.grounding is not None:
            attempt.problem += _why_empty(ctx, read, attempt.grounding)
        return attempt


def run_query(ctx: AskContext, attempt: Attempt, read: ReadQuery, grounding: Grounding) -> None:
    """Run the query, with a FILTER keeping apart the two ends of each path out and back along one
    relation (:func:`out_and_back`); when that FILTER leaves no answer, the query as the LLM meant it."""
    conditions = [f"{written_term(a, grounding)} != {written_term(b, grounding)}" for a, b in out_and_back(read)]
    if conditions:
        kept = add_filter(attempt.sparql, conditions)
        result = ctx.kb.query(kept)
        if answer_keys(result, attempt.answer_variable) or result.form == "ASK":
            added = ", ".join(f"FILTER({condition})" for condition in conditions)
            ctx.note(f"text2sparql: a path goes out and back along one relation; added {added}")
            attempt.sparql, attempt.kept_apart, attempt.result = kept, conditions, result
            return
        ctx.queries.append(result.history().at("sparql"))
        ctx.note("text2sparql: keeping the ends of an out-and-back path apart left no answer; ran the query "
                 "without that FILTER")
    attempt.result = ctx.kb.query(attempt.sparql)


def _why_empty(ctx: AskContext, read: ReadQuery, grounding: Grounding) -> str:
    """What the repair prompt is told besides "0 rows": the names linked, the patterns nothing matches."""
    lines = [f"\n- {s.written!r} was linked to the stored value {s.label!r} of <{s.iri}>" if s.position == "value"
             else f"\n- {s.written!r} was linked to the node {s.label!r} <{s.iri}>" for s in grounding.substitutions]
    try:
        lines += [f"\n- no triple matches the pattern {{ {text} }} (check the relation and its direction)"
                  for text in unmatched(ctx.kb, read, grounding)]
    except QueryError:
        pass
    return "".join(lines)


def _failed_call(llm: LLM, prompt: str, exc: LLMParseError) -> LLMCall:
    """The record of a call whose answer could not be read (it was made: it counts)."""
    from sparqlqa.llm import LLMCall

    return LLMCall(backend=llm.backend_name, model=llm.model, system=prompts.SYSTEM_PROMPT,
                   messages=[{"role": "user", "content": prompt}], schema=prompts.QUERY_SCHEMA,
                   response_text=getattr(exc, "raw", "") or "", error=f"{type(exc).__name__}: {exc}")


def _check_rows(attempt: Attempt) -> None:
    """An empty answer where rows were expected is a problem the repair call may fix.  A false ASK, a count
    of 0, an aggregate over nothing and no rows for a negative question (NOT EXISTS, MINUS, ``!=``) are answers."""
    result = attempt.result
    if result is None or result.form == "ASK":
        return
    attempt.rows = len(result.rows)
    if any(answer_keys(result, column) for column in answer_columns(result, attempt)):
        return
    read = attempt.read
    if read is not None and (read.negated or (read.aggregates and not read.grouped)):
        return
    attempt.problem, attempt.repairable = "the query returned 0 rows", True


def record_query(ctx: AskContext, attempt: Attempt) -> None:
    """The query in ``ctx.queries`` as stage ``sparql`` (saved by ``--save-sparql`` like every query)."""
    if attempt.result is not None:
        ctx.queries.append(attempt.result.history().at("sparql"))
    elif attempt.sparql or attempt.written:
        ctx.queries.append(QueryRecord(query=attempt.sparql or attempt.written, form="", rows=0,
                                       error=_first_line(attempt.problem or ""), stage="sparql"))


def answer_variable(result: QueryResult, wanted: str) -> str | None:
    """The LLM's answer variable when the query projects it, else the first one."""
    if wanted in result.variables:
        return wanted
    return result.variables[0] if result.variables else None


def answer_columns(result: QueryResult, attempt: Attempt) -> list[str]:
    """The answer's columns: those the LLM named that the query projects, in its order; else (it named none
    the query projects) the answer variable alone, as an older one-variable answer read."""
    named = [column for column in attempt.columns if column in result.variables]
    if named:
        return named
    first = answer_variable(result, attempt.answer_variable)
    return [first] if first is not None else []


def answer_keys(result: QueryResult, wanted: str) -> list[str]:
    """The distinct answers (node IRIs and literal keys, no blank nodes) of the answer variable, in row order."""
    variable = answer_variable(result, wanted)
    if variable is None:
        return []
    keys = (term_key(term) for term in result.column(variable))
    return list(dict.fromkeys(key for key in keys if key is not None and not is_blank_key(key)))


def _number(key: str) -> float | None:
    if not is_value_key(key):
        return None
    try:
        return float(value_text(key))
    except ValueError:
        return None


@dataclass
class Shaped:
    """A query's answer: its form and value, the keys of its first column (the items), its table
    (``None``: made from the items, the count or the yes/no)."""

    form: str
    value: int | bool | str | None
    keys: list[str]
    table: Table | None


def shape(attempt: Attempt) -> Shaped:
    """Several columns → ``table``; one COUNT cell → ``count``; one cell of another aggregate (or a value
    the LLM called one) → ``value``; one column → ``list`` (or the count / yes-no the LLM asked of it).
    A list of values keeps the query's rows (repeats included); a list of nodes is its items, as the
    question's own nodes and ``--exact`` leave them (:func:`~sparqlqa.strategies.pipeline.settle`)."""
    result = attempt.result
    assert result is not None
    if result.form == "ASK":
        return Shaped(Form.BOOLEAN, bool(result.boolean), [], Table.from_result(result))
    read = attempt.read or ReadQuery(text=result.query, form=result.form)
    columns = answer_columns(result, attempt)
    table = Table.from_result(result, columns, aggregates=read.aggregates, ordered=read.ordered)
    keys = answer_keys(result, columns[0]) if columns else []
    if table.width > 1:
        return Shaped(Form.TABLE, None, keys, table)
    cell = table.rows[0][0] if len(table.rows) == 1 else None
    aggregate = read.aggregates.get(columns[0]) if columns else None
    count = _number(cell) if cell is not None and aggregate == "count" and attempt.form != Form.LIST else None
    if count is not None and count == int(count):
        return Shaped(Form.COUNT, int(count), [], table)
    if cell is not None and is_value_key(cell) and (aggregate or attempt.form == Form.VALUE):
        return Shaped("value", value_text(cell), keys, table)
    if attempt.form == Form.COUNT:
        return Shaped(Form.COUNT, len(keys), keys, None)
    if attempt.form == Form.BOOLEAN:
        return Shaped(Form.BOOLEAN, bool(keys), keys, None)
    nodes = bool(table.columns) and table.columns[0].kind == "node"
    return Shaped(Form.LIST, None, keys, None if nodes else table)  # nodes: the items' table (named, settled)


def answer_from_rows(ctx: AskContext, attempt: Attempt, attempts: list[Attempt]) -> Answer:
    """The query's rows as the answer: every item matched (``filtered``), in the query's order; its table."""
    from sparqlqa.stages.execute import Candidate, Candidates, Evidence

    shaped = shape(attempt)
    keys = shaped.keys
    counted = attempt.read.counted if attempt.read is not None else None
    if shaped.form == Form.COUNT and not keys and counted:
        keys = counted_keys(ctx, attempt, counted)
    if attempt.grounding is not None:
        ctx.topic_iris.update(attempt.grounding.topic)
    items = [AnswerItem.ranked(key, 1.0 - n / (len(keys) + 1), ItemSource.FILTERED, tier=0)
             for n, key in enumerate(keys)]
    ordered = attempt.read is not None and attempt.read.ordered
    candidates = Candidates(target=attempt.answer_variable or None,
                            items=[Candidate(key, 0, 1, Evidence()) for key in keys],
                            target_is_value=any(is_value_key(key) for key in keys),
                            form=shaped.form, value=shaped.value, ordered=ordered)
    ranking = Ranking(query_text=ctx.question, items=items)
    return finish(ctx, attempts, "query", ranking, rerank_top(ctx, ranking, enabled=False), candidates=candidates,
                  table=shaped.table)


def counted_keys(ctx: AskContext, attempt: Attempt, variable: str) -> list[str]:
    """What a COUNT query counted, for the items (the count stays the COUNT's); none when it cannot run."""
    query = counted_items(attempt.sparql, variable)
    if query is None:
        return []
    try:
        with ctx.stage("sparql"):
            result = ctx.kb.query(query)
    except QueryError as exc:
        ctx.note(f"text2sparql: the counted items could not be listed ({exc.message})")
        return []
    ctx.queries.append(result.history().at("sparql"))
    return answer_keys(result, variable)


def finish(ctx: AskContext, attempts: list[Attempt], source: str, ranking: Ranking | None = None,
           reranked: Reranked | None = None, *, candidates: Candidates | None = None,
           table: Table | None = None) -> Answer:
    """The answer, by the one builder, with the run's record in ``meta``."""
    ctx.records["text2sparql"] = Text2SparqlRun(attempts, source)
    ctx.meta["answer_source"] = source
    return build_answer(ctx, ranking, reranked, candidates=candidates, table=table)


@dataclass
class Text2SparqlRun:
    """The strategy's record (``Answer.meta.records["text2sparql"]``): each attempt, and where the answer came from."""

    attempts: list[Attempt]
    answer_source: str

    @property
    def repaired(self) -> bool:
        return len(self.attempts) > 1

    def to_dict(self) -> dict[str, Any]:
        return {"attempts": [a.to_dict() for a in self.attempts], "repaired": self.repaired,
                "answer_source": self.answer_source}


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text
