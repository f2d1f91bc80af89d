"""What the HTTP API and the MCP tools share: request checks, warm KBs, allowed LLMs.

A :class:`Service` opens each KB once and warms it (label index, a finished node vector index, the
embedder's session) under that KB's own lock, so concurrent first requests do not build
an index twice; afterwards requests run concurrently: Oxigraph stores answer reads from
many threads and an ONNX Runtime session's ``run`` is thread-safe.  A KB re-ingested while
serving is reopened (and warmed) on its next request; the old generation is closed when its last
request ends, and closing it deletes its folder (a retired generation goes with its last reader).
A KB is known by its canonical name (``movies+tiny`` for ``tiny + movies``), and at most
``--max-open-kbs`` are held open, the least recently used closed first (:mod:`sparqlqa.serve.open_kbs`).

Every query a request runs (``sparql``, and each query of the QA pipeline behind ``ask``) is
bounded by :meth:`Service.limits`: the request's deadline (``--timeout``), a row limit and a memory
limit (``--query-memory``).  On a KB on disk the query runs in a worker process that is killed at
the bound (:mod:`sparqlqa.query.query_pool`), so a runaway query frees its CPU, memory and thread
when the client gets its 504 — the server keeps answering.

Clients never name an arbitrary LLM: ``llm`` must be one of the specs the server was
started with (``--llm``), so a request cannot make the server call a URL of its choosing.

>>> service = Service(ServeSettings(kbs=("movies",)))
>>> service.check_kb("films")
Traceback (most recent call last):
...
sparqlqa.serve.service.NotServed: knowledge base 'films' is not served here
"""

from __future__ import annotations

__all__ = ["MAX_ROWS", "OVERDUE_GRACE_S", "NotServed", "ServeSettings", "Service", "status_of"]

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from sparqlqa.errors import ConfigError, KBError, KBNotFound, QueryError, QueryTimeout, QueryTooLarge, SparqlqaError
from sparqlqa.query.built_query import BuiltQuery
from sparqlqa.query.limits import DEFAULT_MAX_MEMORY_MB, DEFAULT_MAX_ROWS, QueryLimits, bounded, unbounded
from sparqlqa.serve.open_kbs import DEFAULT_MAX_OPEN_KBS, OpenKBs
from sparqlqa.stages.modes import RerankMode, TopicMode

if TYPE_CHECKING:
    from sparqlqa.kb.knowledge_base import KnowledgeBase
    from sparqlqa.llm import LLM
    from sparqlqa.stages.answer import Answer

#: the largest ``k`` a request may ask for
MAX_K = 100
#: the most result rows (or triples) ``sparql`` sends back; ``truncated`` says when there were more
#: (the query stops reading rows there)
MAX_ROWS = 10_000
#: the longest question accepted (characters)
MAX_QUESTION_CHARS = 2000
#: a request still at work this long past its time limit makes ``/healthz`` answer 503
OVERDUE_GRACE_S = 10.0
ASK_FIELDS = frozenset({"kb", "question", "strategy", "llm", "k", "rerank", "exact", "topic", "lang"})


class NotServed(KBNotFound):
    """The KB exists (or not) but this server was started for other KBs."""

    def __init__(self, name: str, served: tuple[str, ...], listing: str = "GET /api/kbs") -> None:
        KBError.__init__(self, f"knowledge base {name!r} is not served here",
                         hint=f"served: {', '.join(served)} ({listing} lists them)")
        self.name = name


@dataclass(frozen=True)
class ServeSettings:
    """How a served process answers (the ``serve``/``mcp`` options)."""

    #: KB names served; empty: every KB of ``$SPARQLQA_HOME``, looked up per request
    kbs: tuple[str, ...] = ()
    #: LLM specs a request may choose (``llm``); the first is the default.  Empty: the environment's
    llms: tuple[str, ...] = ()
    strategy: str | None = None
    embedder: str | None = None
    #: seconds one request may take before the client gets 504 (HTTP) or a tool error (MCP)
    timeout_s: float = 120.0
    #: largest request body (bytes) before 413
    max_body: int = 64 * 1024
    #: threads answering blocking requests (ask, sparql, schema) at once
    workers: int = 4
    #: hosts a query's SERVICE may call (``--allow-service``); KB profiles' allowances do not apply here
    allow_service: tuple[str, ...] = ()
    #: memory (MB) one query's worker may add while it runs (``--query-memory``)
    query_memory_mb: int = DEFAULT_MAX_MEMORY_MB
    #: how a client of this front end lists the KBs, for hints ("the kbs tool" over MCP)
    kbs_listing: str = "GET /api/kbs"
    #: KBs (and their query workers) held open at once; the least recently used is closed past it
    max_open_kbs: int = DEFAULT_MAX_OPEN_KBS


class Service:
    """Warm KBs and LLMs for one process, and the operations the front ends expose."""

    def __init__(self, settings: ServeSettings) -> None:
        from sparqlqa.kb.kb_names import canonical_kb_name

        self.settings = replace(settings, kbs=tuple(dict.fromkeys(canonical_kb_name(n) for n in settings.kbs)))
        self._open = OpenKBs(settings.max_open_kbs)
        self._guard = threading.Lock()
        self._llms: dict[str, LLM] = {}
        #: threads at work on a request, and since when (``time.monotonic()``)
        self.busy: dict[int, float] = {}

    # -- KBs --------------------------------------------------------------------------------------

    def check_kb(self, name: Any) -> str:
        """``name`` in its canonical spelling (``" tiny + movies"`` is ``movies+tiny``: one open KB, one set of
        query workers, whatever the spelling) as a served KB name; else :class:`NotServed`,
        :class:`~sparqlqa.errors.InvalidKBName` (a malformed name) or :class:`ConfigError`."""
        from sparqlqa.kb.kb_names import canonical_kb_name

        if not isinstance(name, str) or not name.strip():
            raise ConfigError("'kb' must be a knowledge base name", hint=f"{self.settings.kbs_listing} lists them")
        name = canonical_kb_name(name)
        if self.settings.kbs and name not in self.settings.kbs:
            raise NotServed(name, self.settings.kbs, self.settings.kbs_listing)
        return name

    def kb(self, name: Any) -> KnowledgeBase:
        """The open, warmed KB ``name`` (reopened when it was re-ingested meanwhile)."""
        with self.using(name) as kb:
            return kb

    @contextmanager
    def using(self, name: Any) -> Iterator[KnowledgeBase]:
        """The warm KB ``name`` for one request, from the bounded set of open KBs (:mod:`~sparqlqa.serve.open_kbs`).
        A generation replaced meanwhile, or a KB evicted, is closed once no request uses it any more: its
        reader lease is released, its query workers stop and a retired folder is deleted."""
        name = self.check_kb(name)
        with self._open.using(name, lambda: _generation_stamp(name), lambda: self._open_warm(name)) as kb:
            yield kb

    def _open_warm(self, name: str) -> KnowledgeBase:
        """Open and warm ``name``: its indexes are built over every node, outside the request's query limits;
        a KB that fails to warm is closed again (no lease or query worker left behind)."""
        from sparqlqa.kb.knowledge_base import open_kb

        kb = open_kb(name)
        try:
            with unbounded():
                self._warm_kb(kb)
        except BaseException:
            kb.close()
            raise
        return kb

    def close(self) -> None:
        """Close the open KBs (one a request still uses: when it ends)."""
        self._open.close()

    def _warm_kb(self, kb: KnowledgeBase) -> None:
        """Label index, the offline tables, the embedder's session; the node index only when it is at hand
        (finished, damaged: repaired, or tiny) or the served strategy answers from it alone (``vss``):
        otherwise requests answer as a first ``ask`` does (the SPARQL candidates embedded, no fill-in) until
        ``sparqlqa index`` or :meth:`build_indexes_behind` has built it (issue 36)."""
        from sparqlqa.embed.embedders import get_embedder
        from sparqlqa.kb.labels import LabelIndex
        from sparqlqa.kb.store import OxigraphStore
        from sparqlqa.vectors.index import built_index, embed_query, ensure_index

        kb.store.allow_service = frozenset(self.settings.allow_service)  # only what the server was started with
        if isinstance(kb.store, OxigraphStore):
            kb.store.query_workers = self.settings.workers  # one query worker per request thread
            # starts a query worker now, not on a request
            kb.query(BuiltQuery.ask("ASK { ?s ?p ?o }"), limits=self.limits())
        embedder = get_embedder(self.settings.embedder)
        if kb.can_scan():  # a remote endpoint has neither index (its names are looked up remotely)
            LabelIndex.for_kb(kb)
            if self.needs_index():
                ensure_index(kb, embedder)
            else:
                built_index(kb, embedder)
            _warm_offline(kb, self.settings.embedder)
        embed_query(embedder, "warm up")

    def needs_index(self) -> bool:
        """Whether the served strategy answers from the node index alone (``vss``): its KBs' indexes are
        built when they open; other strategies' are not waited for."""
        from sparqlqa.strategies.base import strategies

        chosen = self.settings.strategy
        return chosen is not None and strategies.get(chosen).needs_index

    def build_indexes_behind(self, names: list[str], *, on_done: Callable[[str, str], None] | None = None
                             ) -> threading.Thread:
        """Build (or resume) the node index of each KB of ``names`` in a background thread, one at a time,
        each on a KB opened for it (the served one may be closed meanwhile); a request meanwhile answers
        without it, and with it once it is finished.  ``on_done(name, outcome)``: after each (``"built"`` or
        the error's text; an error ends that KB's build, not the server).  A build cut short by the end of
        the process resumes on the next (the index is written in chunks)."""
        thread = threading.Thread(target=self._build_indexes, args=(list(names), on_done), daemon=True,
                                  name="sparqlqa-index-build")
        thread.start()
        return thread

    def _build_indexes(self, names: list[str], on_done: Callable[[str, str], None] | None) -> None:
        from sparqlqa.embed.embedders import get_embedder
        from sparqlqa.kb.knowledge_base import open_kb
        from sparqlqa.vectors.index import ensure_index

        embedder = get_embedder(self.settings.embedder)
        for name in names:
            try:
                with open_kb(name) as kb, unbounded():
                    ensure_index(kb, embedder)
                outcome = "built"
            except (SparqlqaError, OSError) as exc:
                outcome = str(exc)
            if on_done is not None:
                on_done(name, outcome)

    def limits(self) -> QueryLimits:
        """The bounds of every query a request runs: ``--timeout``, :data:`DEFAULT_MAX_ROWS`, ``--query-memory``."""
        return QueryLimits(timeout_s=self.settings.timeout_s, max_rows=DEFAULT_MAX_ROWS,
                           max_memory_mb=self.settings.query_memory_mb)

    def bounded_work(self, work: Callable[[], Any], deadline: float) -> Callable[[], Any]:
        """``work`` as run by a front end: its queries share the request's ``deadline`` (``time.monotonic()``:
        arrival + ``--timeout``, even when the work waited for a thread), and :attr:`busy` counts it."""

        def run() -> Any:
            with self._guard:
                self.busy[threading.get_ident()] = time.monotonic()
            try:
                with bounded(self.limits(), deadline=deadline):
                    return work()
            finally:
                with self._guard:
                    self.busy.pop(threading.get_ident(), None)

        return run

    def overdue(self, grace_s: float = OVERDUE_GRACE_S) -> int:
        """Requests still at work ``grace_s`` past their time limit (work that could not be stopped)."""
        limit = time.monotonic() - self.settings.timeout_s - grace_s
        with self._guard:
            return sum(1 for started in self.busy.values() if started < limit)

    def warm(self) -> list[str]:
        """Open and warm the served KBs now (before accepting requests), as many as may be open at once
        (``--max-open-kbs``; the others on their first request); their names."""
        names = (list(self.settings.kbs) or [m.name for m in _manifests()])[:self.settings.max_open_kbs]
        for name in names:
            self.kb(name)
        return names

    def kbs(self) -> list[dict[str, Any]]:
        """The served KBs: name, store kind, counts, creation time; then the KB groups (saved, or served
        by a ``+``-joined name): name, ``"store": "group"``, members."""
        from sparqlqa.kb.groups import SEPARATOR, broken_members, load_groups

        served = set(self.settings.kbs)
        listed = [{"name": m.name, "store": m.store.get("kind"), "counts": m.counts, "created_at": m.created_at}
                  for m in _manifests() if not served or m.name in served]
        groups = {**load_groups(), **{n: n.split(SEPARATOR) for n in self.settings.kbs if SEPARATOR in n}}
        listed += [{"name": name, "store": "group", "members": members} for name, members in sorted(groups.items())
                   if (not served or name in served) and not broken_members(members)]
        return listed

    def schema(self, name: Any) -> dict[str, Any]:
        with self.using(name) as kb:
            return {"kb": kb.name, **kb.schema.to_dict()}

    # -- queries -----------------------------------------------------------------------------------

    def sparql(self, payload: Any) -> dict[str, Any]:
        """Run a read query: ``{kb, query}`` → form, variables, SPARQL JSON results, elapsed ms."""
        import json

        from sparqlqa.errors import SparqlSyntaxError
        from sparqlqa.kb.results_format import to_json
        from sparqlqa.kb.vocab import kb_prefixes
        from sparqlqa.query.sparql_guard import query_form
        from sparqlqa.query.sparql_reading import query_with_prefixes

        body = _object(payload, {"kb", "query"})
        query = body.get("query")
        if not isinstance(query, str) or not query.strip():
            raise QueryError("'query' must be a SPARQL query", hint="e.g. SELECT * WHERE { ?s ?p ?o } LIMIT 10")
        try:
            query_form(query)  # refuses updates before the KB is even opened
        except SparqlSyntaxError:
            pass  # said below, with the KB's prefixes declared
        limits = replace(self.limits(), max_rows=MAX_ROWS, truncate=True)
        with self.using(body.get("kb")) as kb:
            result = query_with_prefixes(lambda text: kb.query(text, limits=limits), query, kb_prefixes(kb))
        size = len(result.rows) if result.form == "SELECT" else len(result.triples)
        return {"kb": kb.name, "form": result.form, "query": result.query,
                "elapsed_ms": round(result.elapsed_ms, 3), "results": json.loads(to_json(result)),
                "rows": size, "truncated": result.truncated}

    def ask(self, payload: Any) -> Answer:
        """Answer ``{kb, question, strategy?, llm?, k?, rerank?, exact?, topic?, lang?}`` with the warm KB
        (``exact``: true = only answers that satisfied the query; ``topic``: auto, exclude or keep;
        ``lang``: the question's language, default detected)."""
        from sparqlqa.strategies.ask import ask

        body = _object(payload, ASK_FIELDS)
        question = body.get("question")
        if not isinstance(question, str) or not question.strip():
            raise ConfigError("'question' must be a non-empty string", hint="ask something, e.g. 'who directed Alien'")
        if len(question) > MAX_QUESTION_CHARS:
            raise ConfigError(f"the question is {len(question):,} characters long; at most {MAX_QUESTION_CHARS:,}")
        k = body.get("k", 20)
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
            raise ConfigError(f"'k' must be a whole number from 1 to {MAX_K}")
        strategy = _optional_str(body, "strategy") or self.settings.strategy
        rerank = _optional_str(body, "rerank") or RerankMode.LISTWISE
        exact = body.get("exact", False)
        if not isinstance(exact, bool):
            raise ConfigError("'exact' must be true or false")
        topic = _optional_str(body, "topic") or TopicMode.AUTO
        llm = self.llm(_optional_str(body, "llm"))
        with self.using(body.get("kb")) as kb, bounded(self.limits()):
            return ask(kb, question, strategy=strategy, llm=llm if llm is not None else "offline", k=k,
                       rerank=rerank, embedder=self.settings.embedder,  # "offline": not $SPARQLQA_LLM again
                       exact=exact, topic=topic, lang=_optional_str(body, "lang"))

    # -- LLMs --------------------------------------------------------------------------------------

    def llm(self, spec: str | None) -> LLM | None:
        """The shared LLM object for ``spec`` (one of the allowed ones), ``None`` for offline."""
        from sparqlqa.llm import get_llm, resolve_llm_spec

        allowed = self.settings.llms
        if spec is not None and spec.strip().lower() in ("offline", "none"):
            return None
        if spec is None:
            spec = allowed[0] if allowed else resolve_llm_spec(None)
            if spec is None or spec.strip().lower() == "offline":
                return None
        elif spec not in allowed:
            raise ConfigError(f"LLM {spec!r} is not enabled on this server",
                              hint=f"choose one of: {', '.join([*allowed, 'offline'])} "
                              "(the server's --llm options)")
        with self._guard:
            if spec not in self._llms:
                self._llms[spec] = get_llm(spec)
            return self._llms[spec]


def _generation_stamp(name: str) -> str:
    """Which generation KB ``name`` is now: a group's fingerprint of its members' generations, a KB's
    current generation folder; :class:`KBNotFound` when there is none."""
    from sparqlqa.kb.group import current_group
    from sparqlqa.kb.knowledge_base import current_generation, kb_root

    group = current_group(name)
    if group is not None:
        return f"group:{group}"
    current = current_generation(kb_root(name))
    if current is None:
        raise KBNotFound(name)
    return str(current)


def _warm_offline(kb: KnowledgeBase, embedder: str | None) -> None:
    """One offline question, so the offline strategy's per-KB tables are built before the first request."""
    from sparqlqa.strategies.ask import ask
    from sparqlqa.strategies.base import strategies

    if "offline" in strategies:
        ask(kb, "which one", strategy="offline", rerank="none", k=1, embedder=embedder)


def _manifests() -> list[Any]:
    from sparqlqa.kb.knowledge_base import list_kbs

    return list_kbs()


def _object(payload: Any, fields: frozenset[str] | set[str]) -> dict[str, Any]:
    """``payload`` as a JSON object with only known fields, or a :class:`ConfigError`."""
    if not isinstance(payload, dict):
        raise ConfigError("the request body must be a JSON object",
                          hint=f"fields: {', '.join(sorted(fields))}")
    unknown = sorted(set(payload) - set(fields))
    if unknown:
        raise ConfigError(f"unknown field(s): {', '.join(map(str, unknown))}",
                          hint=f"fields: {', '.join(sorted(fields))}")
    return payload


def _optional_str(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(f"'{key}' must be a string")
    return value.strip() or None


def status_of(exc: SparqlqaError) -> int:
    """The HTTP status of one of our errors: 404 unknown KB, 403 SERVICE refused, 504 a query stopped at its
    deadline, 413 one stopped at its row or memory limit, 502 upstream (LLM, endpoint), else 400."""
    from sparqlqa.errors import EndpointError, LLMError, MissingExtraError, ServiceRefused

    if isinstance(exc, KBNotFound):
        return 404
    if isinstance(exc, QueryTimeout):
        return 504
    if isinstance(exc, QueryTooLarge):
        return 413
    if isinstance(exc, ServiceRefused):
        return 403
    if isinstance(exc, (EndpointError, LLMError)):
        return 502
    if isinstance(exc, MissingExtraError):
        return 501
    return 400
