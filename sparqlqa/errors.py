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

from os import PathLike


class SparqlqaError(Exception):
    """Base of every error sparqlqa raises on purpose."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message

    def full_message(self) -> str:
        """The message and, when there is one, the hint on a second line."""
        if self.hint:
            return f"{self.message}\n  hint: {self.hint}"
        return self.message


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


class NodeIndexError(KBError):
    """A KB's node vector index cannot be written (its folder is not writable, the disk is full)."""


class NodeIndexDamaged(NodeIndexError):
    """A file of a node index is unreadable or disagrees with the others.

    The index is derived data: :func:`sparqlqa.vectors.build_index` catches this, warns and rebuilds
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


class UpdateRefused(QueryError):
    """Only read queries (SELECT, ASK, CONSTRUCT, DESCRIBE) may reach a store."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"refused to send a SPARQL update ({what}): sparqlqa only runs read queries",
            hint="use SELECT, ASK, CONSTRUCT or DESCRIBE; to change a KB, re-ingest it",
        )


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


class LLMRateLimited(LLMError):
    pass


class LLMOverloaded(LLMError):
    pass


class LLMBadRequest(LLMError):
    pass


class LLMTimeout(LLMError):
    pass


class LLMConnectionError(LLMError):
    pass


class LLMParseError(LLMError):
    """An LLM answer could not be parsed.  ``raw`` keeps the text that came back."""

    def __init__(self, message: str, *, raw: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.raw = raw


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
