"""Knowledge bases: a named store + a manifest, kept under ``$SPARQLQA_HOME/kbs``.

Layout of one KB (``generation`` changes on every successful re-ingest, so
derived artefacts such as label indexes and embeddings never go stale)::

    kbs/NAME/CURRENT              the current generation's id (replaced atomically)
    kbs/NAME/GEN/manifest.json    sources, counts, base IRI, schema, profile, ...
    kbs/NAME/GEN/store/           the Oxigraph store (local KBs)
    kbs/NAME/GEN/artifacts/       label index, embeddings, ...
"""

from __future__ import annotations

__all__ = ["RETIRED", "BrokenKB", "KBScan", "KnowledgeBase", "Manifest", "acquire_lease", "current_generation",
           "group_openers", "kb_exists", "kb_folder", "kb_lock", "kb_root", "list_kbs", "open_kb", "remove_kb",
           "retire_generation", "scan_kbs", "sweep_retired", "write_generation"]

import fcntl
import json
import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sparqlqa.errors import (
    KBBusy,
    KBDamaged,
    KBError,
    KBExists,
    KBNotFound,
    StorageError,
    StoreUnavailable,
)
from sparqlqa.kb.kb_names import GROUP_SEPARATOR as GROUP_SEPARATOR
from sparqlqa.kb.kb_names import canonical_kb_name as canonical_kb_name
from sparqlqa.kb.kb_names import validate_kb_name as validate_kb_name
from sparqlqa.kb.profile import DEFAULT_PROFILE, Profile
from sparqlqa.kb.schema import Schema
from sparqlqa.kb.store import QueryResult, Store, stores
from sparqlqa.paths import atomic_write_json, atomic_write_text, kbs_dir, make_folder
from sparqlqa.query.built_query import BuiltQuery
from sparqlqa.query.limits import QueryLimits, unbounded
from sparqlqa.registry import Registry

if TYPE_CHECKING:
    import rdflib

@dataclass
class Manifest:
    """What a KB is made of.  Saved as ``manifest.json`` next to its store."""

    name: str
    generation: str
    store: dict[str, Any] = field(default_factory=lambda: {"kind": "oxigraph"})
    base_iri: str = ""
    sources: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    schema: dict[str, Any] = field(default_factory=dict)
    profile: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""
    sparqlqa_version: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    #: the prefixes the user's source files declare (Turtle, TriG, N3), name → namespace IRI
    prefixes: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Manifest:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})

    @classmethod
    def read(cls, path: Path) -> Manifest:
        try:
            return cls.from_dict(json.loads(path.read_text("utf-8")))
        except (OSError, ValueError, TypeError) as exc:
            raise KBError(f"cannot read KB manifest {path}: {exc}",
                          hint="re-create the KB with 'sparqlqa ingest ... --replace'") from exc

    def write(self, directory: Path) -> None:
        atomic_write_json(directory / "manifest.json", self.to_dict())


T = TypeVar("T")


class KnowledgeBase:
    """A named store with its schema and profile.  Open one with :func:`open_kb`.

    >>> from sparqlqa.kb.store import OxigraphStore
    >>> kb = KnowledgeBase.in_memory("demo", OxigraphStore.in_memory())
    >>> kb.query("ASK { ?s ?p ?o }").boolean
    False
    """

    def __init__(self, manifest: Manifest, directory: Path | None, store: Store | None = None) -> None:
        self.manifest = manifest
        self.directory = directory
        self._store = store
        self._lease: int | None = None
        self._memo: dict[Hashable, Any] = {}
        self._memo_lock = threading.Lock()

    def remember(self, key: Hashable, build: Callable[[], T], *, rebuild: bool = False) -> T:
        """``build()`` once for this opened KB: what the stages derive from it (label and node indexes,
        offline statistics, relation vectors) lives and dies with this object, not the process.

        Concurrent first calls (``sparqlqa serve`` threads) may both build; the first result is kept.
        ``build`` runs outside any query limits (:func:`~sparqlqa.query.limits.unbounded`): derived data covers
        every node, whatever request happens to need it first.

        >>> from sparqlqa.kb.store import OxigraphStore
        >>> kb = KnowledgeBase.in_memory("demo", OxigraphStore.in_memory())
        >>> kb.remember("answer", lambda: 42), kb.remember("answer", lambda: 0)
        (42, 42)
        """
        if not rebuild:
            with self._memo_lock:
                if key in self._memo:
                    return self._memo[key]
        with unbounded():
            value = build()
        with self._memo_lock:
            if rebuild:
                self._memo[key] = value
            return self._memo.setdefault(key, value)

    @classmethod
    def in_memory(cls, name: str, store: Store, *, schema: Schema | None = None,
                  profile: Profile = DEFAULT_PROFILE, base_iri: str = "") -> KnowledgeBase:
        """A KB that lives only in this process (tests, rdflib graphs)."""
        if schema is None:
            from sparqlqa.kb.schema import compute_schema

            schema = compute_schema(store, profile)
        manifest = Manifest(name=name, generation="memory", store={"kind": store.kind},
                            base_iri=base_iri, schema=schema.to_dict(), profile=profile.to_dict())
        store.allow_service = store.allow_service | frozenset(profile.allow_service)
        return cls(manifest, None, store)

    @property
    def name(self) -> str:
        return self.manifest.name

    @cached_property
    def schema(self) -> Schema:
        return Schema.from_dict(self.manifest.schema)

    @cached_property
    def profile(self) -> Profile:
        return Profile.from_dict(self.manifest.profile) if self.manifest.profile else DEFAULT_PROFILE

    @property
    def is_remote(self) -> bool:
        """Whether the KB is a remote SPARQL endpoint (no local store, label index or node index).  Code
        outside the KB classes asks what it needs instead: :meth:`can_scan`, :meth:`endpoint_url`,
        :meth:`member_kbs`, :meth:`remote_members`, :meth:`provenance`."""
        return self.manifest.store.get("kind", "oxigraph") == "endpoint"

    def can_scan(self) -> bool:
        """Whether sparqlqa may read this KB whole: build its label and node indexes, scan it for unnamed
        nodes and ``owl:sameAs`` groups.  A remote endpoint is only asked bounded queries (its names are
        looked up on it); a local store, a KB group's merged store included, may be scanned."""
        return not self.is_remote

    def endpoint_url(self) -> str | None:
        """The URL of the SPARQL endpoint this KB answers from; None for a local store (a group too)."""
        return (str(self.manifest.store.get("url", "")) or None) if self.is_remote else None

    def member_kbs(self) -> list[KnowledgeBase]:
        """The KBs this one joins (a KB group's members, opened once, closed with it); none for one KB."""
        return []

    def remote_members(self) -> list[KnowledgeBase]:
        """The members this KB reaches through their own endpoints (a KB group's remote members); none for
        one KB."""
        return []

    def provenance(self, triples: Sequence[tuple[str, str, str]]) -> list[list[str]] | None:
        """For each ``(s, p, o)``, the member KBs that state it; None for a KB that joins no others (every
        triple it holds is its own)."""
        return None

    @property
    def store(self) -> Store:
        if self._store is None:
            if self.directory is not None and self._lease is None:
                self._take_lease(self.directory)
            kind = self.manifest.store.get("kind", "oxigraph")
            store_cls = stores.get(kind)
            try:
                self._store = store_cls.from_config(self.manifest.store, self.directory)
            except StoreUnavailable as exc:
                raise self._store_error(exc) from exc
            self._store.allow_service = frozenset(self.profile.allow_service)  # SERVICE hosts the profile allows
        return self._store

    def _store_error(self, exc: StoreUnavailable) -> KBError:
        """Why the store did not open, for this KB: a writer at work, a missing folder, or the OS's reason."""
        if _write_in_progress(self.name):
            return KBBusy(f"knowledge base {self.name!r} cannot be opened while another sparqlqa process "
                          f"writes it ({exc.message})", hint="wait for that process to finish, then try again")
        problem = _store_problem(self.manifest, self.directory) if self.directory is not None else None
        if problem is not None:
            return KBDamaged(self.name, problem)
        return KBError(f"cannot open the store of knowledge base {self.name!r} at {exc.path}: {exc.reason}",
                       hint="if the reason is not a permission or a limit of open files, the store is damaged: "
                       f"rebuild it with 'sparqlqa ingest FILE --kb {self.name} --replace'")

    def query(self, sparql: str | BuiltQuery, *, limits: QueryLimits | None = None) -> QueryResult:
        """Run a read query on the store (bounded by ``limits`` or the :func:`~sparqlqa.query.limits.bounded` scope)."""
        return self.store.query(sparql, limits=limits)

    def to_rdflib(self, *, source_only: bool = False) -> rdflib.Graph:
        """Every triple of this KB in a new rdflib ``Graph`` (named graphs merged), with the prefixes its
        Turtle/TriG/N3 sources declared (and the well-known ones) bound.

        ``source_only=True`` leaves out what ingest added beside the source files (sparqlqa's core
        vocabulary, ``--ontology`` files): a KB ingested from one RDF file then gives a graph isomorphic
        to that file's.  For large KBs prefer ``sparqlqa export``, which streams to a file.

        >>> from sparqlqa.kb.store import OxigraphStore
        >>> store = OxigraphStore.in_memory()
        >>> _ = store.oxstore.update("INSERT DATA { <http://e/a> <http://e/p> 'x' }")
        >>> len(KnowledgeBase.in_memory("demo", store).to_rdflib())
        1
        """
        from sparqlqa.kb.export import export_prefixes, rdflib_graph

        prefixes = export_prefixes(self.manifest.prefixes, source_only=source_only)
        return rdflib_graph(self, source_only=source_only, prefixes=prefixes)

    def artifacts_dir(self, kind: str) -> Path | None:
        """Folder for derived files of ``kind`` (e.g. ``labels``); ``None`` for in-memory KBs."""
        if self.directory is None:
            return None
        return make_folder(self.directory / "artifacts" / kind, what="the KB's artifacts folder")

    def _take_lease(self, directory: Path) -> None:
        """Hold this generation's reader lease; if a writer retired it meanwhile, move to the current one."""
        for _ in range(LEASE_TRIES):
            lease = acquire_lease(directory)
            if lease is not None:
                self._lease = lease
                return
            generation = _generation_or_raise(self.name, directory.parent)
            directory, self.directory = generation, generation
            self.manifest = Manifest.read(generation / "manifest.json")
            for cached in ("schema", "profile"):
                self.__dict__.pop(cached, None)
        raise KBBusy(f"knowledge base {self.name!r} keeps changing while being opened", hint="try again")

    def close(self) -> None:
        """Release the store and the generation's lease; the last reader of a replaced generation deletes it."""
        if self._store is not None:
            self._store.close()
            self._store = None
        if self._lease is not None:
            if self._lease >= 0:
                os.close(self._lease)
            self._lease = None
            if self.directory is not None and (self.directory / RETIRED).exists():
                retire_generation(self.directory)

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<KnowledgeBase {self.name!r} {self.manifest.store.get('kind')}>"


#: a reader's lease file in each generation (shared ``flock`` while its store is open)
LEASE = ".lease"
#: marks a replaced generation a writer could not delete (a reader held it): whoever finds it unleased
#: later (that reader closing, or any :func:`open_kb`) deletes it
RETIRED = ".retired"
LEASE_TRIES = 50


def acquire_lease(generation: Path) -> int | None:
    """A shared lock on ``generation`` (a file descriptor; -1 where locking is impossible), or
    ``None`` when a writer has retired it.  Writers never delete a generation a reader holds."""
    for _ in range(LEASE_TRIES):
        try:
            fd = os.open(generation / LEASE, os.O_RDONLY | os.O_CREAT, 0o644)
        except FileNotFoundError:
            return None
        except OSError:  # a read-only KB folder: nobody can retire it either
            return -1
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # a writer is retiring it right now
            os.close(fd)
            time.sleep(0.01)
            continue
        if (generation / "manifest.json").is_file():
            return fd
        os.close(fd)
        return None
    return None


def retire_generation(generation: Path) -> None:
    """Delete an old ``generation`` unless a reader holds its lease; then mark it :data:`RETIRED`, and
    the last reader's :meth:`KnowledgeBase.close` (or the next :func:`open_kb`) deletes it."""
    if generation.name.startswith("."):  # already retired by a writer that was killed
        shutil.rmtree(generation, ignore_errors=True)
        return
    try:
        fd = os.open(generation / LEASE, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        shutil.rmtree(generation, ignore_errors=True)
        return
    trash = generation.with_name(f".retired-{generation.name}")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.rename(generation, trash)
    except BlockingIOError:  # in use by a reader: marked, deleted once unleased
        _mark_retired(generation)
        return
    except OSError:
        return
    finally:
        os.close(fd)
    shutil.rmtree(trash, ignore_errors=True)


def _mark_retired(generation: Path) -> None:
    try:
        (generation / RETIRED).touch()
    except OSError:  # a read-only KB folder: the next writer tries again
        pass


def sweep_retired(root: Path) -> None:
    """Delete the generations of the KB folder ``root`` marked :data:`RETIRED` that no reader holds any
    more (a reader killed before its ``close``); never one being built (those carry no mark)."""
    try:
        marked = [child for child in root.iterdir() if (child / RETIRED).exists()]
    except OSError:
        return
    for generation in marked:
        retire_generation(generation)


def kb_root(name: str) -> Path:
    return kbs_dir() / validate_kb_name(name)


#: a writer may switch ``CURRENT`` between reading it and looking at the generation it names: read again
CURRENT_TRIES = 3


def _locate_generation(root: Path) -> Path | str | None:
    """The folder of the KB's current generation (it has a ``manifest.json``); a sentence saying what
    is wrong when the KB folder is there but damaged; ``None`` when there is no KB folder."""
    if not root.is_dir():
        return None
    previous: str | None = None
    problem = ""
    for _ in range(CURRENT_TRIES):
        name, problem = _read_current(root)
        if name is not None:
            generation = root / name
            if (generation / "manifest.json").is_file():
                return generation
            problem = (f"its CURRENT file names the generation folder {generation}, which has no manifest.json"
                       if generation.is_dir() else
                       f"its CURRENT file names the generation folder {generation}, which is missing")
        if name == previous:
            break
        previous = name
    return problem


def _read_current(root: Path) -> tuple[str | None, str]:
    """(the generation ``CURRENT`` names, or None; what is wrong when None)."""
    path = root / "CURRENT"
    try:
        name = path.read_text("utf-8").strip()
    except FileNotFoundError:
        return None, f"it has no CURRENT file ({path})"
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}"
    if not name or "/" in name or name in (".", "..") or name.startswith("."):
        return None, f"its CURRENT file ({path}) names no generation folder"
    return name, ""


def current_generation(root: Path) -> Path | None:
    """The folder of the KB's current generation, or ``None`` when there is none (or it is damaged:
    see :func:`_locate_generation`)."""
    found = _locate_generation(root)
    return found if isinstance(found, Path) else None


def _generation_or_raise(name: str, root: Path) -> Path:
    found = _locate_generation(root)
    if found is None:
        raise KBNotFound(name)
    if isinstance(found, str):
        raise KBDamaged(name, found)
    return found


def kb_exists(name: str) -> bool:
    return current_generation(kb_root(name)) is not None


#: how a name that is no single KB opens: a KB group (``films+people``, or a saved group's name), built
#: by :mod:`sparqlqa.kb.group`; an opener returns ``None`` when ``name`` is no group either
group_openers: Registry[Callable[[str], KnowledgeBase | None]] = Registry("kb group", ("sparqlqa.kb.group",))


def open_kb(name: str) -> KnowledgeBase:
    """Open the KB called ``name`` (read-only store, opened on first query); :class:`KBNotFound` when
    there is none, :class:`KBDamaged` when its folder is there but unusable.  A group of KBs
    (``films+people``, or a saved group's name) opens as one KB (:mod:`sparqlqa.kb.group`).  ``name`` is
    read in its canonical spelling (:func:`canonical_kb_name`: ``" people + films"`` opens ``films+people``)."""
    name = canonical_kb_name(name)
    if GROUP_SEPARATOR in name or not kb_root(name).is_dir():
        group = group_openers.get("group")(name)
        if group is not None:
            return group
    root = kb_root(name)
    sweep_retired(root)
    generation = _generation_or_raise(name, root)
    return KnowledgeBase(_read_manifest(name, generation), generation)


def _read_manifest(name: str, generation: Path) -> Manifest:
    try:
        return Manifest.read(generation / "manifest.json")
    except KBError as exc:
        raise KBDamaged(name, exc.message) from exc


def _store_problem(manifest: Manifest, generation: Path) -> str | None:
    """What is wrong with a local KB's store folder (only whether it is there: opening it costs more)."""
    if manifest.store.get("kind", "oxigraph") != "oxigraph":
        return None
    store = generation / "store"
    return None if store.is_dir() else f"its store folder {store} is missing"


@dataclass
class BrokenKB:
    """A KB folder that cannot be used: what is wrong and what to do (``sparqlqa kbs`` lists them)."""

    name: str
    path: Path
    problem: str
    hint: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "path": str(self.path), "problem": self.problem, "hint": self.hint}


@dataclass
class KBScan:
    """Every KB folder: the usable KBs' manifests and the broken ones, each sorted by name."""

    kbs: list[Manifest] = field(default_factory=list)
    broken: list[BrokenKB] = field(default_factory=list)


def scan_kbs() -> KBScan:
    """All KBs, healthy and broken; one broken KB never hides the others."""
    scan = KBScan()
    for root in sorted(kbs_dir().iterdir()):
        if root.name.startswith(".") or not root.is_dir():
            continue
        try:
            generation = _generation_or_raise(root.name, root)
            manifest = _read_manifest(root.name, generation)
            problem = _store_problem(manifest, generation)
            if problem is not None:
                raise KBDamaged(root.name, problem)
        except KBDamaged as exc:
            scan.broken.append(BrokenKB(root.name, root, exc.problem, exc.hint or ""))
            continue
        scan.kbs.append(manifest)
    return scan


def list_kbs() -> list[Manifest]:
    """Manifests of every usable KB, sorted by name (:func:`scan_kbs` also says which are broken)."""
    return scan_kbs().kbs


def kb_folder(name: str) -> Path:
    """The folder of KB ``name``, healthy or broken; :class:`KBNotFound` when there is none."""
    root = kb_root(name)
    if not root.is_dir():
        raise KBNotFound(name)
    return root


def remove_kb(name: str) -> None:
    """Delete KB ``name``, even a broken one (not while another process writes it: :class:`KBBusy`)."""
    root = kb_folder(name)
    with kb_lock(name):
        trash = root.with_name(f".removing-{root.name}")
        shutil.rmtree(trash, ignore_errors=True)
        try:
            root.rename(trash)
        except OSError as exc:
            raise StorageError.from_os_error(exc, root, doing="remove") from None
        shutil.rmtree(trash, ignore_errors=True)


def _write_in_progress(name: str) -> bool:
    """Whether another process holds KB ``name``'s write lock (probed with a shared lock, released at once;
    only on an error path, as a writer starting at that very instant would find the KB busy)."""
    try:
        fd = os.open(kbs_dir() / f".lock-{name}", os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False


@contextmanager
def kb_lock(name: str) -> Iterator[None]:
    """Hold the write lock of KB ``name`` (one writer at a time; readers are never blocked)."""
    lock_path = kbs_dir() / f".lock-{name}"
    try:
        handle = lock_path.open("w")
    except OSError as exc:
        raise StorageError.from_os_error(exc, lock_path, doing="create the lock file") from None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise KBBusy(f"knowledge base {name!r} is being written by another process",
                         hint="wait for it to finish") from None
        yield


def _swap_in(root: Path, staging_root: Path | None, generation: Path) -> None:
    """Make ``generation`` current.  New KB: rename the staging root into place."""
    if staging_root is not None:
        atomic_write_text(staging_root / "CURRENT", generation.name + "\n")
        try:
            os.rename(staging_root, root)
        except OSError:
            raise KBExists(root.name) from None
        return
    atomic_write_text(root / "CURRENT", generation.name + "\n")
    for child in root.iterdir():  # the old generation and any left by a killed writer or kept by a reader
        if child.is_dir() and child != generation:
            retire_generation(child)


def write_generation(name: str, build: Callable[[Path], Any], *, replace: bool = False) -> KnowledgeBase:
    """Build a new generation of KB ``name`` with ``build(folder)`` and make it current atomically.

    ``build`` must write ``manifest.json`` (and the store, if any) into ``folder``.  On any
    failure, or a kill, the previous KB of that name is left exactly as it was.
    """
    validate_kb_name(name)
    with kb_lock(name):
        root = kb_root(name)
        if _locate_generation(root) is not None and not replace:  # a damaged one too: --replace rebuilds it
            raise KBExists(name)
        for stale in kbs_dir().glob(f".building-{name}-*"):  # left by a killed writer (we hold the lock)
            shutil.rmtree(stale, ignore_errors=True)
        staging_root = None if root.exists() else kbs_dir() / f".building-{name}-{uuid.uuid4().hex[:8]}"
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S-") + uuid.uuid4().hex[:6]
        generation = (staging_root or root) / stamp
        make_folder(generation, what="the new generation folder")
        try:
            build(generation)
            _swap_in(root, staging_root, generation)
        except BaseException:
            shutil.rmtree(staging_root or generation, ignore_errors=True)
            raise
    return open_kb(name)
