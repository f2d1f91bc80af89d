"""Audit export: every SPARQL query an answer ran, as standalone ``.rq`` files.

Each file starts with a comment header (question, KB, timestamp, strategy,
model, triplets, how many rows it returned) followed by the query as it ran (with the KB's prefixes,
full IRIs are written as prefixed names after PREFIX lines: the same query), so it can be re-run on
any SPARQL 1.1 engine.

>>> from sparqlqa.stages.answer import Answer
>>> from sparqlqa.kb.records import QueryRecord
>>> answer = Answer(question="Who directed Alien?", kb="movies", strategy="vss",
...                 queries=[QueryRecord("SELECT ?s WHERE { ?s ?p ?o }", rows=3, stage="sparql")])
>>> import tempfile, pathlib
>>> [p.name for p in save_sparql(answer, pathlib.Path(tempfile.mkdtemp()))]
['who-directed-alien-01-sparql.rq']
"""

from __future__ import annotations

__all__ = ["save_sparql", "triplet_lines"]

import re
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sparqlqa.kb.records import QueryRecord
from sparqlqa.paths import atomic_write_text, make_folder
from sparqlqa.query.sparql_rewrite import compact_iris
from sparqlqa.stages.answer import Answer


def _one_line(text: Any) -> str:
    return " ".join(str(text).split())


def _slug(question: str, words: int = 6, limit: int = 40) -> str:
    """A short file-name-safe form of the question.

    >>> _slug("Which films did Ridley Scott direct?")
    'which-films-did-ridley-scott-direct'
    """
    parts = re.findall(r"[a-z0-9]+", question.lower())[:words]
    return "-".join(parts)[:limit].strip("-") or "question"


def format_term(term: Any) -> str:
    """A triplet end as text: ``movie 'Alien'`` for constants, ``?x1 (movie)`` for variables."""
    kind = getattr(term, "type", None)
    text = getattr(term, "text", str(term))
    if getattr(term, "kind", "") == "constant":
        return f"{kind} '{text}'" if kind else f"'{text}'"
    return f"{text} ({kind})" if kind else str(text)


def triplet_lines(answer: Answer) -> list[str]:
    """The answer's triplets as ``head -> relation -> tail`` lines, the target and requirements last."""
    triplets = answer.triplets
    run = answer.meta.records.get("fiske")
    if triplets is None and run is not None:  # FiSKE explores from clues instead of triplets (its JSON form
        fiske = run.to_dict()  # here: FiSKE's own types live above the stages)
        return [f"(none: FiSKE clues {', '.join(repr(c) for c in fiske.get('clues', []))}; "
                f"stop: {fiske.get('stop')}; answer: {fiske.get('answer_source') or 'none'})"]
    if triplets is None:
        return ["(none)"]
    lines = [f"{format_term(t.head)} -> {t.relation} -> {format_term(t.tail)}" for t in triplets.triplets]
    lines.append(f"target: {triplets.target or '(none)'}   source: {triplets.source}")
    lines.extend(f"requirement: {r}" for r in triplets.requirements)
    return lines


def header(answer: Answer, record: QueryRecord, number: int, total: int, timestamp: str) -> str:
    """The comment block written above query ``number``."""
    meta = answer.meta
    lines = [
        f"sparqlqa audit: query {number} of {total} (stage: {record.stage or 'sparql'})",
        f"question:  {_one_line(answer.question)}",
        f"kb:        {answer.kb}",
        f"timestamp: {timestamp}",
        f"strategy:  {answer.strategy}   model: {meta.llm or 'none (offline)'}   "
        f"embedder: {meta.embedder or '?'}",
        f"store:     {record.store or '?'}   rows: {record.rows}   elapsed_ms: {record.elapsed_ms}",
        "triplets:",
        *(f"  {_one_line(line)}" for line in triplet_lines(answer)),
    ]
    return "".join(f"# {line}\n" for line in lines)


def save_sparql(answer: Answer, directory: Path, *, stages: Iterable[str] | None = None,
                timestamp: str | None = None, prefixes: Mapping[str, str] | None = None) -> list[Path]:
    """Write one ``.rq`` file per query of ``answer`` (optionally only of ``stages``) into ``directory``;
    with ``prefixes`` (e.g. :func:`~sparqlqa.kb.vocab.kb_prefixes`) full IRIs under them are written as
    prefixed names, with PREFIX lines for the ones used (the query means the same)."""
    wanted = set(stages) if stages is not None else None
    records = [q for q in answer.queries if wanted is None or (q.stage or "sparql") in wanted]
    stamp = timestamp or datetime.now(timezone.utc).isoformat(timespec="seconds")
    make_folder(directory, what="the folder for the SPARQL files")
    base = _slug(answer.question)
    written = []
    for number, record in enumerate(records, start=1):
        stage = re.sub(r"[^a-z0-9]+", "-", (record.stage or "sparql").lower())
        path = directory / f"{base}-{number:02d}-{stage}.rq"
        query, used = compact_iris(record.query.rstrip() + "\n", dict(prefixes or {}))
        declared = "".join(f"PREFIX {name}: <{iri}>\n" for name, iri in sorted(used.items()))
        atomic_write_text(path, header(answer, record, number, len(records), stamp) + declared + query)
        written.append(path)
    return written
