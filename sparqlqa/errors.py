"""One error tree for sparqlqa.

Every error a user can cause or fix derives from :class:`SparqlqaError` and
carries a ``hint`` saying what to do.  The CLI turns these into clean exits
(exit status :attr:`SparqlqaError.exit_code`) with no traceback.

>>> err = KBNotFound("movies")
>>> str(err)
"no knowledge base named 'movies'"
>>> err.hint
"list them with 'sparqlqa kbs' or create one with 'sparqlqa ingest FILE --kb movies'"
"""

from __future__ import annotations

__all__ = ["ConfigError", "DatasetError", "EndpointError", "GroupError", "GroupMemberNotFound", "IngestError",
           "InvalidKBName", "InvalidText", "KBBusy", "KBDamaged", "KBError", "KBExists", "KBNotFound", "LLMAuthError",
           "LLMBadRequest", "LLMCacheError", "LLMConnectionError", "LLMError", "LLMOverloaded", "LLMParseError",
           "LLMRateLimited", "LLMTimeout", "LLMUnavailable", "MissingExtraError", "NodeIndexDamaged", "NodeIndexError",
           "NodeIndexMismatch", "NotInCache", "QueryError", "QueryTimeout", "QueryTooLarge", "ServiceRefused",
           "SparqlSyntaxError", "SparqlqaError", "StorageError", "StoreUnavailable", "UnknownNameError",
           "UpdateRefused", "os_error_hint"]

import errno
import os
from collections.abc import Mapping
from os import PathLike
from typing import Any


class SparqlqaError(Exception):
    """Base of every error sparqlqa raises on purpose."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled whole (class, message, hint and every attribute), without calling ``__init__`` again: the
        subclasses' keyword arguments are not in ``args``.  A worker process sends its error this way
        (:func:`sparqlqa.query.query_pool.read_untrusted`)."""
        return (_rebuilt, (type(self), self.args, self.__dict__))

    def full_message(self) -> str:
        """The message and, when there is one, the hint on a second line."""
        if self.hint:
            return f"{self.message}\n  hint: {self.hint}"
        return self.message


def _rebuilt(cls: type[SparqlqaError], args: tuple[Any, ...], state: Mapping[str, object]) -> SparqlqaError:
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error


# --- configuration, names, extras -------------------------------------------------


class ConfigError(SparqlqaError):
    """A setting, option or environment variable is wrong."""

    exit_code = 2


class UnknownNameError(ConfigError):
    """A backend, format, strategy or dataset name is not registered."""

    def __init__(self, kind: str, name: str, known: list[str]) -> None:
        choices = ", ".join(sorted(known)) or "(none registered)"
        super().__init__(f"unknown {kind} {name!r}", hint=f"choose one of: {choices}")
        self.kind = kind
        self.name = name
        self.known = known


class MissingExtraError(SparqlqaError):
    """An optional dependency is not installed."""

    def __init__(self, package: str, feature: str, install: str) -> None:
        super().__init__(
            f"{feature} needs the Python package {package!r}, which is not installed",
            hint=f"install it with: {install}",
        )
        self.package = package


class InvalidText(ConfigError):
    """Text from outside (a question, a query, a name, a JSON body) that sparqlqa will not take: not UTF-8,
    a lone surrogate, a NUL or control character, or too long (see :mod:`sparqlqa.text_input`).
    ``field`` names where it came from; ``position`` is the 1-based character (or byte) of the first bad one."""

    def __init__(self, field: str, problem: str, *, position: int | None = None, hint: str | None = None) -> None:
        super().__init__(f"{field} {problem}", hint=hint)
        self.field = field
        self.position = position


# --- knowledge bases ----------------------------------------------------------------


class KBError(SparqlqaError):
    """Something is wrong with a knowledge base."""


class KBNotFound(KBError):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"no knowledge base named {name!r}",
            hint=f"list them with 'sparqlqa kbs' or create one with 'sparqlqa ingest FILE --kb {name}'",
        )
        self.name = name


class GroupMemberNotFound(KBNotFound):
    """A KB group (``films+people``, or a saved group) names a member that is no knowledge base."""

    def __init__(self, group: str, member: str) -> None:
        KBError.__init__(
            self, f"knowledge base group {group!r} names {member!r}, which is no knowledge base",
            hint=f"list the KBs with 'sparqlqa kbs', create it with 'sparqlqa ingest FILE --kb {member}', "
            "or leave it out of the group",
        )
        self.name = member
        self.group = group


class GroupError(KBError):
    """A KB group cannot be made, saved or used as asked (too few members, a name taken, a member it breaks)."""


class KBExists(KBError):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"a knowledge base named {name!r} already exists",
            hint="pass --replace to rebuild it (the old one stays intact until the new one is complete)",
        )
        self.name = name


class KBBusy(KBError):
    """The store is locked by another process."""


class InvalidKBName(KBError):
    pass


class StoreUnavailable(KBError):
    """A local store cannot be opened: ``path`` and the reason (opening a KB turns it into
    :class:`KBDamaged` or :class:`KBBusy`, which name the KB)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"cannot open the store at {path}: {reason}",
                         hint="the store may be missing or damaged: rebuild it (sparqlqa ingest ... --replace)")
        self.path = path
        self.reason = reason


class KBDamaged(KBError):
    """A KB's folder is there but unusable (no ``CURRENT``, a missing generation, an unreadable
    manifest, a missing store): it can be removed or rebuilt, never silently skipped."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(
            f"knowledge base {name!r} is damaged: {problem}",
            hint=f"remove it with 'sparqlqa kbs remove {name}', or rebuild it with "
            f"'sparqlqa ingest FILE --kb {name} --replace'",
        )
        self.name = name
        self.problem = problem


# --- files and folders ----------------------------------------------------------------


class StorageError(SparqlqaError):
    """A file or folder sparqlqa reads or writes cannot be used: ``path`` and the OS's ``reason``.

    >>> err = StorageError.from_os_error(OSError(errno.ENOSPC, "No space left on device"), "/data/out.json",
    ...                                  doing="write")
    >>> str(err)
    'cannot write /data/out.json: No space left on device'
    >>> err.hint
    'free disk space on the drive holding /data (or choose a folder on another drive), then run the command again'
    """

    def __init__(self, message: str, *, path: str | None, reason: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.path = path
        self.reason = reason

    @classmethod
    def from_os_error(cls, exc: OSError, path: str | os.PathLike[str] | None = None, *, doing: str = "use",
                      hint: str | None = None) -> StorageError:
        """The error for ``exc`` raised while trying to ``doing`` ``path`` (default: the OS error's own
        file name); ``hint`` replaces the one chosen by the error number, except for a full disk."""
        culprit = None if exc.filename is None else os.fsdecode(exc.filename)
        where = os.fspath(path) if path is not None else culprit
        reason = exc.strerror or str(exc) or type(exc).__name__
        if culprit is not None and where is not None and culprit != where:
            reason += f" ({culprit})"
        message = f"cannot {doing} {where}: {reason}" if where else f"cannot {doing} a file: {reason}"
        if hint is None or exc.errno in FULL_DISK:
            hint = os_error_hint(exc, where)
        return cls(message, path=where, reason=reason, hint=hint)


#: error numbers of a full disk or quota
FULL_DISK = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))


def os_error_hint(exc: OSError, path: str | None) -> str:
    """What to do about ``exc`` (by its error number)."""
    code = exc.errno
    culprit = os.fsdecode(exc.filename) if exc.filename is not None else path
    if code in FULL_DISK:
        folder = os.path.dirname(path.rstrip("/")) if path else "it"
        return (f"free disk space on the drive holding {folder or path} (or choose a folder on another drive), "
                "then run the command again")
    if code in (errno.EACCES, errno.EPERM):
        return "choose a path you may use, or change the permissions of that file or folder"
    if code == errno.EROFS:
        return "that file system is read-only: choose a folder on a writable drive"
    if code in (errno.ENOTDIR, errno.EEXIST):
        return f"{culprit} is a file where a folder is needed: choose another path, or move that file away"
    if code == errno.EISDIR:
        return f"{culprit} is a folder where a file is needed: choose another path"
    if code == errno.ENOENT:
        return "check the path: a folder on it does not exist and cannot be created there"
    if code in (errno.EMFILE, errno.ENFILE):
        return "too many files are open: raise the limit (ulimit -n) or close other programs"
    return "check the path, its permissions and the free disk space, then try again"
class NodeIndexError(KBError):
    """A KB's node vector index cannot be written (its folder is not writable, the disk is full)."""


class NodeIndexDamaged(NodeIndexError):
    """A file of a node index is unreadable or disagrees with the others.

    The index is derived data: :func:`sparqlqa.vectors.index.build_index` catches this, warns and rebuilds
    (only the ANN search graph when ``graph_only``), so a user sees it only when a fresh rebuild is
    damaged again.  ``problem`` names the file and what is wrong with it.
    """

    def __init__(self, folder: str | PathLike[str], problem: str, *, graph_only: bool = False) -> None:
        super().__init__(f"the node index in {folder} is damaged: {problem}",
                         hint=f"it is derived data: check the disk holding {folder}, then run "
                              "'sparqlqa index KB --rebuild'")
        self.folder = str(folder)
        self.problem = problem
        self.graph_only = graph_only


class NodeIndexMismatch(NodeIndexError):
    """A node index was built with another embedder than the one it is asked to serve (another model, another
    dimension, or the same name over another table: a static embedder distilled again).  Searching it would
    compare vectors of two models, so it is refused, never silently rebuilt: the hint says how to rebuild it.
    """

    def __init__(self, problem: str, *, kb: str = "KB", spec: str = "EMBEDDER") -> None:
        super().__init__(f"the node index of {kb} does not fit the embedder {spec}: {problem}",
                         hint=f"an index is searched only with the embedder that built it: rebuild it for this one "
                              f"with 'sparqlqa index {kb} --embedder {spec} --rebuild', or use the embedder "
                              "it was built with")
        self.problem = problem


# --- ingestion ----------------------------------------------------------------------


class IngestError(SparqlqaError):
    """Input data could not be ingested.  ``path`` and ``line`` locate the problem."""

    def __init__(
        self, message: str, *, path: str | None = None, line: int | None = None, hint: str | None = None
    ) -> None:
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message, hint=hint)
        self.path = path
        self.line = line


# --- SPARQL and stores ----------------------------------------------------------------


class QueryError(SparqlqaError):
    """A SPARQL query is malformed or failed to run."""


class SparqlSyntaxError(QueryError):
    """A query the SPARQL parser rejects: the message shows the line with a caret under ``line``:``column``
    (1-based, in the query as the user wrote it); the hint names the likely mistake
    (:mod:`sparqlqa.query.query_errors`)."""

    def __init__(self, message: str, *, line: int, column: int, problem: str, hint: str | None = None,
                 parser_message: str = "") -> None:
        super().__init__(message, hint=hint)
        self.line = line
        self.column = column
        self.problem = problem
        self.parser_message = parser_message  # the parser's own words, position included

    def location(self) -> dict[str, int | str]:
        """``{"line", "column", "problem"}`` for JSON error bodies."""
        return {"line": self.line, "column": self.column, "problem": self.problem}


class UpdateRefused(QueryError):
    """Only read queries (SELECT, ASK, CONSTRUCT, DESCRIBE) may reach a store."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"refused to send a SPARQL update ({what}): sparqlqa only runs read queries",
            hint="use SELECT, ASK, CONSTRUCT or DESCRIBE; to change a KB, re-ingest it",
        )


class ServiceRefused(QueryError):
    """A query calls ``SERVICE`` on a host nobody allowed (or whose host cannot be checked):
    sparqlqa fetches no URL a query names unless told to (see :mod:`sparqlqa.query.service_guard`)."""

    def __init__(self, endpoint: str | None, host: str | None, reason: str, *, hint: str | None = None) -> None:
        what = f"SERVICE {endpoint}" if endpoint else "the query"
        allow = host or "HOST"
        super().__init__(
            f"refused to run {what}: {reason}",
            hint=hint or f"SERVICE calls other endpoints only when their host is allowed: "
            f"'sparqlqa sparql KB QUERY --allow-service {allow}', allow_service = [\"{allow}\"] in the KB's "
            f"profile, or 'sparqlqa serve/mcp --allow-service {allow}' when the server starts",
        )
        self.endpoint = endpoint
        self.host = host


class QueryTimeout(QueryError):
    """A query ran past its time limit and was stopped (its worker killed: no work goes on)."""

    def __init__(self, timeout_s: float, *, waited: bool = False) -> None:
        what = ("no query worker became free" if waited
                else "the query did not finish") + f" within the time limit of {timeout_s:g} s; it was stopped"
        super().__init__(what, hint="narrow the query (LIMIT, more specific patterns, fewer unconnected "
                         "patterns), or raise the limit: 'sparqlqa sparql ... --timeout SECONDS', "
                         "'sparqlqa serve/mcp --timeout SECONDS'")
        self.timeout_s = timeout_s


class QueryTooLarge(QueryError):
    """A query's result passed the row limit, or its work the memory limit (``limit`` is ``"rows"`` or
    ``"memory"``); it was stopped while its rows streamed, so nothing past the limit was kept."""

    def __init__(self, limit: str, value: int) -> None:
        if limit == "rows":
            message = f"the query returned more than {value:,} rows (the row limit); it was stopped there"
            hint = "add a LIMIT to the query, or raise the limit: 'sparqlqa sparql ... --max-rows N'"
        else:
            message = f"the query needed more than {value:,} MB of memory (the memory limit); it was stopped"
            hint = ("narrow the query (LIMIT, fewer unconnected patterns, no ORDER BY over everything), or raise "
                    "the limit: 'sparqlqa sparql ... --max-memory MB', 'sparqlqa serve/mcp --query-memory MB'")
        super().__init__(message, hint=hint)
        self.limit = limit
        self.value = value


class EndpointError(SparqlqaError):
    """A remote SPARQL endpoint failed or misbehaved."""

    def __init__(self, endpoint: str, message: str, *, hint: str | None = None) -> None:
        super().__init__(f"SPARQL endpoint {endpoint}: {message}", hint=hint)
        self.endpoint = endpoint


# --- LLMs ------------------------------------------------------------------------------


class LLMError(SparqlqaError):
    """An LLM call failed."""


class LLMAuthError(LLMError):
    pass


class LLMUnavailable(LLMError):
    """The LLM could not answer now (rate limit, overload, a server error, timeout, no connection): a later call may."""


class LLMRateLimited(LLMUnavailable):
    pass


class LLMOverloaded(LLMUnavailable):
    pass


class LLMBadRequest(LLMError):
    pass


class LLMTimeout(LLMUnavailable):
    pass


class LLMConnectionError(LLMUnavailable):
    pass


class LLMParseError(LLMError):
    """An LLM answer could not be parsed.  ``raw`` keeps the text that came back."""

    def __init__(self, message: str, *, raw: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.raw = raw


class LLMCacheError(StorageError):
    """The LLM response cache (SQLite) is damaged, locked or unreadable.  It holds paid answers:
    sparqlqa never deletes or overwrites it; the hint says how to move it aside."""


class NotInCache(LLMError):
    """``--llm-cache only`` and the prompt is not cached; it was recorded as pending."""

    def __init__(self, key: str) -> None:
        super().__init__(
            f"LLM response {key[:12]} is not in the cache (--llm-cache only)",
            hint="export the pending prompts with 'sparqlqa llm export-pending FILE.jsonl', "
            "answer them, then 'sparqlqa llm import FILE.jsonl'",
        )
        self.key = key


# --- evaluation ------------------------------------------------------------------------


class DatasetError(SparqlqaError):
    """A benchmark or question file is malformed or missing."""
