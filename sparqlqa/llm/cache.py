"""The LLM response cache: SQLite under ``$SPARQLQA_HOME/llm-cache.sqlite``.

Three tables:

* ``responses`` — answers by cache key (see :func:`sparqlqa.llm.base.cache_key`);
* ``pending`` — prompts asked in ``--llm-cache only`` mode that had no answer,
  exported with :meth:`LLMCache.export_pending` and answered with
  :meth:`LLMCache.import_answers`.  Each carries who asked it (question id when
  in eval, question, KB, strategy, stage: see :mod:`sparqlqa.llm.context`);
* ``usage`` — one row per call (hits, misses and failures) for ``sparqlqa llm stats``.

**Stale prompts.**  A pending prompt is *stale* when the latest run of the
question that recorded it (same KB, strategy and question text) no longer
asks it: that run finished without missing on it, e.g. because an earlier
stage's answer (imported since) changed the later prompt, or the KB changed.
:func:`sparqlqa.ask` calls :meth:`LLMCache.settle_pending` after each question,
so re-running an eval refreshes the pending set.  Stale prompts are not
exported; ``sparqlqa llm pending --stale [--clear]`` lists (and removes) them.

**Imported answers** have no token counts from an API: they are estimated from
the text (:func:`sparqlqa.llm.pricing.estimate_tokens`) and marked
``tokens_estimated``; a cache hit on one reports the estimated tokens and cost.

The database runs in WAL mode with a busy timeout and every operation opens
its own short-lived connection, so threads and processes (parallel eval
workers) can read and write at the same time without corrupting it.
"""

from __future__ import annotations

__all__ = ["CachedAnswer", "ImportReport", "LLMCache"]

import json
import shlex
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparqlqa.errors import ConfigError, LLMCacheError, LLMError, LLMParseError
from sparqlqa.llm.pricing import estimate_request_tokens, estimate_tokens
from sparqlqa.llm.structured import parse_structured, validate_structured
from sparqlqa.paths import atomic_write_text, make_folder, sparqlqa_home

if TYPE_CHECKING:
    from sparqlqa.llm.call import LLMCall

CACHE_FILENAME = "llm-cache.sqlite"
_BUSY_TIMEOUT_S = 60.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    data TEXT,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    source TEXT NOT NULL DEFAULT 'api',
    created REAL NOT NULL,
    tokens_estimated INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS pending (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    misses INTEGER NOT NULL DEFAULT 1,
    created REAL NOT NULL,
    question_id TEXT,
    question TEXT,
    kb TEXT,
    strategy TEXT,
    stage TEXT,
    stale INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS usage (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    key TEXT,
    cache_hit INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd REAL,
    latency_ms REAL NOT NULL,
    error TEXT,
    estimated INTEGER NOT NULL DEFAULT 0
);
"""

#: columns added since the first release: (table, column, declaration), added to older cache files
_ADDED_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("responses", "tokens_estimated", "INTEGER NOT NULL DEFAULT 0"),
    ("pending", "question_id", "TEXT"),
    ("pending", "question", "TEXT"),
    ("pending", "kb", "TEXT"),
    ("pending", "strategy", "TEXT"),
    ("pending", "stage", "TEXT"),
    ("pending", "stale", "INTEGER NOT NULL DEFAULT 0"),
    ("usage", "estimated", "INTEGER NOT NULL DEFAULT 0"),
)
#: the who-asked fields of a pending record
_OWNER_FIELDS = ("question_id", "question", "kb", "strategy", "stage")


@dataclass(frozen=True)
class CachedAnswer:
    """A stored answer."""

    text: str
    data: Any | None
    input_tokens: int
    output_tokens: int
    backend: str
    model: str
    source: str
    tokens_estimated: bool = False


@dataclass
class ImportReport:
    """What :meth:`LLMCache.import_answers` did with the answers file's lines: ``imported`` (cached now),
    ``invalid`` (not a JSON object with a string ``id``, or an answer its prompt's schema refuses),
    ``unknown`` (the id is not a pending prompt of this cache), ``unanswered`` (no response given: left
    pending); each invalid or unknown line's problem, located, in ``errors``."""

    imported: int = 0
    invalid: int = 0
    unknown: int = 0
    unanswered: int = 0
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class LLMCache:
    """The response cache; safe to share between threads and processes."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path is not None else sparqlqa_home() / CACHE_FILENAME
        self._ready = False
        self._init_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LLMCache({str(self.path)!r})"

    # --- connections ------------------------------------------------------------------

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection; any SQLite error opening or using it becomes an :class:`LLMCacheError`."""
        try:
            self._ensure_schema()
            conn = self._open()
            try:
                yield conn
            finally:
                conn.close()
        except sqlite3.Error as exc:
            raise _cache_error(self.path, exc) from None

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
            conn.execute("PRAGMA synchronous = NORMAL")
        except BaseException:
            conn.close()
            raise
        return conn

    def _ensure_schema(self) -> None:
        if self._ready:
            return
        with self._init_lock:
            if self._ready:
                return
            make_folder(self.path.parent, what="the LLM cache's folder")
            conn = self._open()
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.executescript(_SCHEMA)
                _add_missing_columns(conn)
            finally:
                conn.close()
            self._ready = True

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A connection inside ``BEGIN IMMEDIATE`` … ``COMMIT`` (rolled back on error)."""
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    # --- answers ------------------------------------------------------------------------

    def get(self, key: str) -> CachedAnswer | None:
        """The stored answer for ``key``, or None."""
        with self._connect() as conn:
            row = conn.execute(
                "SELECT text, data, input_tokens, output_tokens, backend, model, source, tokens_estimated "
                "FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        data = json.loads(row[1]) if row[1] is not None else None
        return CachedAnswer(text=row[0], data=data, input_tokens=row[2], output_tokens=row[3],
                            backend=row[4], model=row[5], source=row[6], tokens_estimated=bool(row[7]))

    def put(self, key: str, *, backend: str, model: str, text: str, data: Any | None = None,
            input_tokens: int = 0, output_tokens: int = 0, source: str = "api",
            tokens_estimated: bool = False) -> None:
        """Store an answer (replacing any older one) and clear its pending prompt."""
        data_json = json.dumps(data, ensure_ascii=False) if data is not None else None
        with self._write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO responses (key, backend, model, text, data, input_tokens, "
                "output_tokens, source, created, tokens_estimated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (key, backend, model, text, data_json, input_tokens, output_tokens, source, time.time(),
                 int(tokens_estimated)))
            conn.execute("DELETE FROM pending WHERE key = ?", (key,))

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    # --- pending prompts ----------------------------------------------------------------

    def add_pending(self, key: str, *, backend: str, model: str, request: dict[str, Any],
                    context: dict[str, str] | None = None) -> None:
        """Record a prompt that missed in ``only`` mode, with who asked it (``context``, see
        :mod:`sparqlqa.llm.context`); a repeat miss bumps its counter, takes the new context and
        makes it current again."""
        owner = [(context or {}).get(name) for name in _OWNER_FIELDS]
        with self._write() as conn:
            conn.execute(
                "INSERT INTO pending (key, backend, model, request, created, question_id, question, kb, "
                "strategy, stage) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET "
                "misses = misses + 1, stale = 0, question_id = excluded.question_id, "
                "question = excluded.question, kb = excluded.kb, strategy = excluded.strategy, "
                "stage = excluded.stage",
                (key, backend, model, json.dumps(request, ensure_ascii=False), time.time(), *owner))

    def pending(self, *, stale: bool | None = False) -> list[dict[str, Any]]:
        """Pending prompts, oldest first: id, backend, model, who asked (question_id, question, kb,
        strategy, stage), stale, then system, messages, options, schema.

        ``stale``: False (default) the current ones, True the stale ones, None both.
        """
        where = "" if stale is None else f"WHERE stale = {int(stale)} "
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT key, backend, model, question_id, question, kb, strategy, stage, stale, request "
                f"FROM pending {where}ORDER BY created, key").fetchall()
        return [{"id": row[0], "backend": row[1], "model": row[2], **dict(zip(_OWNER_FIELDS, row[3:8])),
                 "stale": bool(row[8]), **json.loads(row[9])} for row in rows]

    def settle_pending(self, *, kb: str, strategy: str, question: str, asked: Iterable[str]) -> int:
        """After a run of ``question``: its pending prompts not in ``asked`` become stale; their count."""
        asked = list(dict.fromkeys(asked))
        marks = ", ".join("?" for _ in asked)
        keep = f" AND key NOT IN ({marks})" if asked else ""
        with self._write() as conn:
            cursor = conn.execute(
                f"UPDATE pending SET stale = 1 WHERE stale = 0 AND kb = ? AND strategy = ? AND question = ?{keep}",
                (kb, strategy, question, *asked))
            return cursor.rowcount

    def clear_pending(self, *, stale_only: bool = False) -> int:
        """Remove pending prompts (only the stale ones with ``stale_only``); their count."""
        with self._write() as conn:
            cursor = conn.execute("DELETE FROM pending" + (" WHERE stale = 1" if stale_only else ""))
            return cursor.rowcount

    def export_pending(self, path: Path) -> int:
        """Write the current (not stale) pending prompts to ``path`` as JSONL (``"response": null``
        to fill in); their count."""
        records = self.pending()
        lines = [json.dumps({**record, "response": None}, ensure_ascii=False) for record in records]
        atomic_write_text(Path(path), "".join(line + "\n" for line in lines))
        return len(records)

    def import_answers(self, path: Path) -> ImportReport:
        """Load answers (``{"id": ..., "response": text-or-JSON}`` per line), validated against schemas."""
        report = ImportReport()
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ConfigError(f"cannot read answers file {path}: {exc.strerror or exc}") from None
        pending = {record["id"]: record for record in self.pending(stale=None)}
        for number, line in enumerate(lines, start=1):
            if line.strip():
                self._import_line(line, f"{path}:{number}", pending, report)
        return report

    def _import_line(self, line: str, where: str, pending: dict[str, dict[str, Any]],
                     report: ImportReport) -> None:
        try:
            record = json.loads(line)
        except ValueError as exc:
            report.invalid += 1
            report.errors.append(f"{where}: not JSON ({exc})")
            return
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            report.invalid += 1
            report.errors.append(f"{where}: expected an object with a string 'id'")
            return
        response = next((record[k] for k in ("response", "text", "data") if record.get(k) is not None), None)
        prompt = pending.get(record["id"])
        if response is None:
            report.unanswered += 1
            return
        if prompt is None:
            report.unknown += 1
            report.errors.append(f"{where}: id {record['id'][:12]} is not a pending prompt (already "
                                 "imported, or exported from another cache)")
            return
        try:
            text, data = _checked_answer(response, prompt.get("schema"))
        except LLMError as exc:
            report.invalid += 1
            report.errors.append(f"{where}: id {record['id'][:12]}: {exc}")
            return
        self.put(record["id"], backend=prompt["backend"], model=prompt["model"], text=text, data=data,
                 source="import", input_tokens=estimate_request_tokens(prompt),
                 output_tokens=estimate_tokens(text), tokens_estimated=True)
        report.imported += 1

    # --- usage --------------------------------------------------------------------------

    def record_usage(self, call: LLMCall) -> None:
        """Append one accounting row (no prompt or response text, no keys)."""
        with self._write() as conn:
            conn.execute(
                "INSERT INTO usage (ts, backend, model, key, cache_hit, input_tokens, output_tokens, "
                "cost_usd, latency_ms, error, estimated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (time.time(), call.backend, call.model, call.key, int(call.cache_hit), call.input_tokens,
                 call.output_tokens, call.cost_usd, call.latency_ms, call.error, int(call.tokens_estimated)))

    def stats(self) -> dict[str, Any]:
        """Summary of stored answers, pending prompts and recorded usage."""
        with self._connect() as conn:
            responses = conn.execute(
                "SELECT backend, model, source, COUNT(*) FROM responses "
                "GROUP BY backend, model, source ORDER BY backend, model, source").fetchall()
            pending, stale = conn.execute(
                "SELECT COUNT(*) - COALESCE(SUM(stale), 0), COALESCE(SUM(stale), 0) FROM pending").fetchone()
            usage = conn.execute(
                "SELECT backend, model, COUNT(*), SUM(cache_hit), SUM(error IS NOT NULL), "
                "SUM(input_tokens), SUM(output_tokens), SUM(cost_usd), "
                "AVG(CASE WHEN cache_hit = 0 AND error IS NULL THEN latency_ms END), SUM(estimated) "
                "FROM usage GROUP BY backend, model ORDER BY backend, model").fetchall()
        by_model = [_usage_row(row) for row in usage]
        return {
            "path": str(self.path),
            "size_bytes": _size(self.path),
            "responses": sum(row[3] for row in responses),
            "responses_by_model": [{"backend": b, "model": m, "source": s, "count": n}
                                   for b, m, s, n in responses],
            "pending": pending,
            "stale_pending": stale,
            "usage": _usage_total(by_model),
            "usage_by_model": by_model,
        }


#: SQLite result codes (the low byte of an extended code) of a busy, a damaged and an unwritable database
_BUSY_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
_DAMAGED_CODES = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
_STORAGE_CODES = (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL,
                  sqlite3.SQLITE_PERM)
#: the same, by message (Python 3.10 has no ``sqlite_errorcode``)
_BUSY_WORDS = ("database is locked", "database table is locked", "database is busy")
_STORAGE_WORDS = ("unable to open", "readonly database", "disk i/o error", "database or disk is full")


def _cache_error(path: Path, exc: sqlite3.Error) -> LLMCacheError:
    """The error to show for ``exc`` on the cache file ``path``: the file is never deleted or overwritten,
    the hint says whether to wait (locked), fix the folder (cannot open or write) or move it aside."""
    reason = str(exc) or type(exc).__name__
    code = getattr(exc, "sqlite_errorcode", None)
    code = code & 0xFF if isinstance(code, int) else None
    lowered = reason.lower()
    off = "or run without the cache: --llm-cache off (ask, eval)"
    if code in _BUSY_CODES or (code is None and any(w in lowered for w in _BUSY_WORDS)):
        hint = (f"another process holds the LLM cache (e.g. an eval with several --workers): wait for it to "
                f"finish, then try again; {off}")
    elif code in _STORAGE_CODES or (code is None and any(w in lowered for w in _STORAGE_WORDS)):
        hint = f"check that the folder {path.parent} is writable and has free disk space; {off}"
    else:
        hint = (f"the file is damaged or not a sparqlqa cache; it may hold paid LLM answers, so sparqlqa leaves "
                f"it as it is. To start a fresh cache, move it aside: {move_aside_command(path)}; {off}")
    return LLMCacheError(f"the LLM cache {path} cannot be used: {reason}", path=str(path), reason=reason,
                         hint=hint)


def move_aside_command(path: Path) -> str:
    """A shell command renaming the cache file ``path`` (and its ``-wal``/``-shm`` files, which belong to
    it) to an unused ``.broken`` name, so the next run starts a fresh cache.

    >>> move_aside_command(Path("/h/llm-cache.sqlite"))
    'mv /h/llm-cache.sqlite /h/llm-cache.sqlite.broken'
    """
    target = path.with_name(path.name + ".broken")
    number = 1
    while any(target.with_name(target.name + suffix).exists() for suffix in ("", "-wal", "-shm")):
        number += 1
        target = path.with_name(f"{path.name}.broken-{number}")
    moves = [f"mv {shlex.quote(str(path))} {shlex.quote(str(target))}"]
    for suffix in ("-wal", "-shm"):
        part = path.with_name(path.name + suffix)
        if part.exists():
            moves.append(f"mv {shlex.quote(str(part))} {shlex.quote(str(target) + suffix)}")
    return " && ".join(moves)


def _checked_answer(response: Any, schema: dict[str, Any] | None) -> tuple[str, Any | None]:
    """(text, data) for an imported answer; LLMParseError if it does not match ``schema``."""
    if schema is None:
        if not isinstance(response, str):
            raise LLMParseError("this prompt expects a text answer, not JSON", raw=json.dumps(response))
        return response, None
    if isinstance(response, str):
        return response, parse_structured(response, schema)
    text = json.dumps(response, ensure_ascii=False)
    return text, validate_structured(response, schema, raw=text)


def _usage_row(row: tuple[Any, ...]) -> dict[str, Any]:
    backend, model, calls, hits, errors, tokens_in, tokens_out, cost, latency, estimated = row
    return {"backend": backend, "model": model, "calls": calls, "cache_hits": hits or 0,
            "errors": errors or 0, "input_tokens": tokens_in or 0, "output_tokens": tokens_out or 0,
            "estimated_calls": estimated or 0,
            "cost_usd": round(cost, 6) if cost is not None else None,
            "avg_latency_ms": round(latency, 1) if latency is not None else None}


def _usage_total(rows: list[dict[str, Any]]) -> dict[str, Any]:
    costs = [row["cost_usd"] for row in rows if row["cost_usd"] is not None]
    return {
        "calls": sum(row["calls"] for row in rows),
        "cache_hits": sum(row["cache_hits"] for row in rows),
        "errors": sum(row["errors"] for row in rows),
        "input_tokens": sum(row["input_tokens"] for row in rows),
        "output_tokens": sum(row["output_tokens"] for row in rows),
        "estimated_calls": sum(row["estimated_calls"] for row in rows),
        "cost_usd": round(sum(costs), 6) if costs or not rows else None,
    }


def _add_missing_columns(conn: sqlite3.Connection) -> None:
    """Bring a cache file written by an older sparqlqa up to the current tables."""
    for table, column, declaration in _ADDED_COLUMNS:
        have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if column not in have:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")


def _size(path: Path) -> int:
    total = 0
    for suffix in ("", "-wal", "-shm"):
        part = path.with_name(path.name + suffix)
        if part.exists():
            total += part.stat().st_size
    return total
