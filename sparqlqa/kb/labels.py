"""Names → nodes: the persisted label index of a KB, and the lookup interface linking uses.

The :class:`LabelIndex` is built once per KB generation with one SELECT over the
KB's label, alias and type predicates and saved in ``kb.artifacts_dir("labels")``;
linking a question never scans the store.  Lookups, best first:

1. exact match of the normalised label or alias (:func:`normalize_label`),
2. fuzzy match (rapidfuzz ``ratio``, cutoff 0.95 like the reference code),
3. labels that contain every word of the constant ("green" → "light green"),
4. nearest labels by embedding, only when nothing above matched.

Each step is restricted to the stated node type when the type is known.

>>> normalize_label("  Sci-Fi_Movies! ")
'sci fi movies'
>>> normalize_label("O’Brien's  Café")
'obriens cafe'
"""

from __future__ import annotations

__all__ = ["CONTAINMENT_MIN_SCORE", "EMBEDDING_MIN_SCORE", "FUZZY_CUTOFF", "INDEX_VERSION", "TYPE_MISMATCH_PENALTY",
           "LabelIndex", "NodeLookup", "NodeMatch", "normalize_label", "resolve_type"]

import json
import re
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pyoxigraph import Literal, NamedNode

from sparqlqa.kb.identity import Identity, identity_of
from sparqlqa.kb.naming import language_rank, name_from_iri, unnamed_nodes
from sparqlqa.kb.schema import Schema, local_name
from sparqlqa.kb.vocab import META_CLASSES
from sparqlqa.paths import atomic_write_bytes
from sparqlqa.query.built_query import BuiltQuery

if TYPE_CHECKING:
    from sparqlqa.embed.embedders import Embedder
    from sparqlqa.kb.knowledge_base import KnowledgeBase

#: the reference implementation's difflib cutoff, reused for rapidfuzz ``ratio``
FUZZY_CUTOFF = 0.95
#: labels that merely contain the constant's words must be at least this similar
CONTAINMENT_MIN_SCORE = 0.5
#: embedding neighbours below this cosine similarity are not links
EMBEDDING_MIN_SCORE = 0.35
#: a match found only after ignoring the stated node type is scaled by this
TYPE_MISMATCH_PENALTY = 0.9
INDEX_FORMAT = "sparqlqa-label-index"
INDEX_VERSION = 3  # 2: names preferred by language; unnamed nodes named after their IRI; 3: owl:sameAs
#: aliases' names link to their canonical node, merged types' IRIs are their type's

_APOSTROPHES = re.compile(r"['\u2018\u2019\u02bc`\u00b4]")
_NON_WORD = re.compile(r"[\W_]+")


def _is_latin(char: str) -> bool:
    code = ord(char)
    return code < 0x250 or 0x1E00 <= code <= 0x1EFF


def _strip_latin_accents(text: str) -> str:
    """Drop combining marks that sit on Latin letters (é → e); other scripts are kept intact."""
    decomposed = unicodedata.normalize("NFD", text)
    kept: list[str] = []
    for char in decomposed:
        if unicodedata.category(char) == "Mn" and kept and _is_latin(kept[-1]):
            continue
        kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept))


def normalize_label(text: str) -> str:
    """Casefold, drop apostrophes and Latin accents, punctuation/underscores → spaces, squeeze spaces.

    >>> normalize_label("Harrison  FORD.")
    'harrison ford'
    >>> normalize_label("light_green")
    'light green'
    >>> normalize_label("?!")  # nothing but punctuation: kept rather than emptied
    '?!'
    """
    if text.isascii():  # fast path: most labels
        folded = text.lower().replace("'", "").replace("`", "")
        words = _NON_WORD.sub(" ", folded).split()
        return " ".join(words) if words else " ".join(folded.split())
    folded = _strip_latin_accents(unicodedata.normalize("NFKC", text)).casefold()
    folded = _APOSTROPHES.sub("", folded)
    if folded.isascii():
        words = _NON_WORD.sub(" ", folded).split()
    else:  # letters, digits and combining marks (Devanagari vowel signs) are word characters
        words = "".join(c if unicodedata.category(c)[0] in "LNM" else " " for c in folded).split()
    return " ".join(words) if words else " ".join(folded.split())


@dataclass
class NodeMatch:
    """One KB node a constant may denote."""

    iri: str
    label: str
    score: float
    method: str  # "exact" | "fuzzy" | "embedding"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class NodeLookup(ABC):
    """Name → node lookups that linking needs.  :class:`LabelIndex` answers from a local index;
    a remote endpoint may implement the same methods with queries of its own."""

    @abstractmethod
    def exact(self, text: str, type_iri: str | None = None) -> list[NodeMatch]:
        """Nodes whose normalised label or alias equals the normalised ``text``."""

    @abstractmethod
    def fuzzy(self, text: str, type_iri: str | None = None, cutoff: float = FUZZY_CUTOFF,
              limit: int = 5) -> list[NodeMatch]:
        """Nodes whose normalised label is at least ``cutoff`` similar to ``text``."""

    @abstractmethod
    def types_of(self, iri: str) -> list[str]:
        """The type IRIs of a node ([] when unknown)."""

    def containing(self, text: str, type_iri: str | None = None, limit: int = 5) -> list[NodeMatch]:
        """Nodes whose label contains every word of ``text`` (optional)."""
        return []

    def nearest(self, text: str, embedder: Embedder, type_iri: str | None = None,
                limit: int = 5) -> list[NodeMatch]:
        """Nodes whose label embedding is nearest to ``text`` (optional)."""
        return []


@dataclass
class _IndexData:
    """The persisted columns of a label index (one entry per label or alias)."""

    iris: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  # display label per node
    type_iris: list[str] = field(default_factory=list)
    node_types: list[list[int]] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)  # normalised text per entry
    entry_node: list[int] = field(default_factory=list)


class LabelIndex(NodeLookup):
    """Labels and aliases of every node of a KB, normalised, with node types.

    >>> from sparqlqa.kb.store import OxigraphStore
    >>> from sparqlqa.kb.knowledge_base import KnowledgeBase
    >>> store = OxigraphStore.in_memory()
    >>> store.oxstore.update('INSERT DATA { <http://x/g> <http://www.w3.org/2000/01/rdf-schema#label> '
    ...                      '"Light Green" }')
    >>> index = LabelIndex.for_kb(KnowledgeBase.in_memory("colours", store))
    >>> [(m.label, m.method) for m in index.exact("light-green")]
    [('Light Green', 'exact')]
    >>> [(m.label, round(m.score, 2)) for m in index.containing("green")]
    [('Light Green', 0.62)]
    """

    def __init__(self, data: _IndexData, *, directory: Path | None = None) -> None:
        self._data = data
        self.directory = directory
        self._node_of = {iri: i for i, iri in enumerate(data.iris)}
        self._type_of = {iri: i for i, iri in enumerate(data.type_iris)}
        self._exact: dict[str, list[int]] = {}
        for entry, key in enumerate(data.keys):
            self._exact.setdefault(key, []).append(entry)
        self._typed_entries: dict[int | None, list[int]] = {}
        self._postings: dict[str, list[int]] | None = None
        self._vectors: dict[str, np.ndarray] = {}

    # -- building, loading, caching -------------------------------------------------------

    @classmethod
    def for_kb(cls, kb: KnowledgeBase) -> LabelIndex:
        """The KB's index: remembered by the opened KB, else from disk, else built (and saved) now."""
        return kb.remember("label index", lambda: cls._load_or_build(kb))

    @classmethod
    def _load_or_build(cls, kb: KnowledgeBase) -> LabelIndex:
        directory = kb.artifacts_dir("labels")
        if directory is None:
            return cls.build(kb)
        loaded = cls.load(directory)
        if loaded is None:
            loaded = cls.build(kb)
            loaded.save(directory)
        return loaded

    @classmethod
    def build(cls, kb: KnowledgeBase) -> LabelIndex:
        """One SELECT over the label, alias and type predicates of ``kb``."""
        schema, profile = kb.schema, kb.profile
        label_ps = list(schema.label_predicates or profile.label_predicates)
        alias_ps = [p for p in (schema.alias_predicates or profile.alias_predicates) if p not in label_ps]
        type_p = schema.type_predicate or profile.type_predicate
        values = " ".join(str(NamedNode(p)) for p in [*label_ps, *alias_ps, type_p])
        query = f"SELECT ?s ?p ?o WHERE {{ VALUES ?p {{ {values} }} ?s ?p ?o . FILTER(isIRI(?s)) }}"
        rows = kb.query(BuiltQuery.select(query)).rows
        named = {row[0].value for row in rows if isinstance(row[0], NamedNode) and isinstance(row[1], NamedNode)
                 and row[1].value != type_p and _keep_literal(row[2], profile.language)}
        identity = identity_of(kb)
        unnamed = [*unnamed_nodes(kb, named), *(alias for alias in identity.aliases if alias not in named)]
        derived = [(NamedNode(iri), _DERIVED_NAME, Literal(name_from_iri(iri))) for iri in dict.fromkeys(unnamed)]
        return cls(_collect(_as_one([*rows, *derived], schema, identity), [*label_ps, _DERIVED_NAME.value], type_p,
                            _schema_iris(schema), profile.language))

    def save(self, directory: Path) -> None:
        """Write ``index.json`` atomically (compact JSON: no pickle, loads fast)."""
        # the columns as they are: ``asdict`` would deep-copy every element (2-3 s of a 400K-triple KB's first ask)
        columns = {name: getattr(self._data, name) for name in _IndexData.__dataclass_fields__}
        payload = {"format": INDEX_FORMAT, "version": INDEX_VERSION, **columns}
        atomic_write_bytes(directory / "index.json",
                           json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        self.directory = directory

    @classmethod
    def load(cls, directory: Path) -> LabelIndex | None:
        """The index saved in ``directory``, or ``None`` when missing, unreadable or outdated."""
        try:
            payload = json.loads((directory / "index.json").read_bytes())
        except (OSError, ValueError):
            return None
        if not isinstance(payload, dict) or payload.get("format") != INDEX_FORMAT \
                or payload.get("version") != INDEX_VERSION:
            return None
        try:
            data = _IndexData(**{k: payload[k] for k in _IndexData.__dataclass_fields__})
        except (KeyError, TypeError):
            return None
        return cls(data, directory=directory)

    # -- lookups -----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._data.iris)

    def label_of(self, iri: str) -> str | None:
        node = self._node_of.get(iri)
        return None if node is None else self._data.labels[node]

    def types_of(self, iri: str) -> list[str]:
        node = self._node_of.get(iri)
        if node is None:
            return []
        return [self._data.type_iris[t] for t in self._data.node_types[node]]

    def normalized_keys(self) -> Iterable[str]:
        """Every distinct normalised label and alias (for mention detection)."""
        return self._exact.keys()

    def nodes_for_key(self, key: str) -> list[str]:
        """IRIs of the nodes whose normalised label/alias is exactly ``key``."""
        nodes = (self._data.entry_node[e] for e in self._exact.get(key, ()))
        return list(dict.fromkeys(self._data.iris[n] for n in nodes))

    def exact(self, text: str, type_iri: str | None = None) -> list[NodeMatch]:
        entries = self._exact.get(normalize_label(text), [])
        return self._matches(((e, 1.0) for e in entries), type_iri, "exact", limit=None)

    def fuzzy(self, text: str, type_iri: str | None = None, cutoff: float = FUZZY_CUTOFF,
              limit: int = 5) -> list[NodeMatch]:
        from rapidfuzz import fuzz, process

        entries = None if type_iri is None else self._typed(type_iri)
        keys = self._data.keys if entries is None else [self._data.keys[e] for e in entries]
        found = process.extract(normalize_label(text), keys, scorer=fuzz.ratio, processor=None,
                                score_cutoff=cutoff * 100, limit=limit * 3)
        scored = ((i if entries is None else entries[i], score / 100) for _, score, i in found)
        return self._matches(scored, None, "fuzzy", limit)

    def containing(self, text: str, type_iri: str | None = None, limit: int = 5) -> list[NodeMatch]:
        from rapidfuzz import fuzz

        words = normalize_label(text).split()
        postings = self._word_postings()
        lists = sorted((postings.get(w, []) for w in dict.fromkeys(words)), key=len)
        if not lists or not lists[0]:
            return []
        common = set(lists[0]).intersection(*lists[1:])
        key = " ".join(words)
        scored = sorted(((e, fuzz.ratio(key, self._data.keys[e]) / 100) for e in common),
                        key=lambda pair: (-pair[1], pair[0]))
        scored = [(e, s) for e, s in scored if s >= CONTAINMENT_MIN_SCORE]
        return self._matches(iter(scored), type_iri, "fuzzy", limit)

    def ending_with(self, word: str, limit: int = 5) -> list[str]:
        """The nodes with a label or alias of several words whose last word is ``word`` (a bare surname,
        "Nolan" → "Christopher Nolan"), in entry order; [] when more than ``limit`` nodes have it."""
        key = normalize_label(word)
        entries = [e for e in self._word_postings().get(key, []) if self._data.keys[e].rsplit(" ", 1)[-1] == key
                   and " " in self._data.keys[e]]
        nodes = list(dict.fromkeys(self._data.entry_node[e] for e in entries))
        return [self._data.iris[n] for n in nodes] if len(nodes) <= limit else []

    def nearest(self, text: str, embedder: Embedder, type_iri: str | None = None,
                limit: int = 5) -> list[NodeMatch]:
        if not self._data.iris:
            return []
        matrix = self._label_vectors(embedder)
        scores = matrix @ embedder.embed([text])[0]
        if type_iri is not None:
            wanted = self._type_of.get(type_iri)
            mask = np.array([wanted in types for types in self._data.node_types], dtype=bool)
            scores = np.where(mask, scores, -np.inf)
        order = np.argsort(-scores, kind="stable")[:limit]
        return [NodeMatch(self._data.iris[n], self._data.labels[n], float(scores[n]), "embedding")
                for n in order if np.isfinite(scores[n])]

    # -- internals ------------------------------------------------------------------------------

    def _typed(self, type_iri: str) -> list[int]:
        """Entry numbers of the nodes of ``type_iri`` (computed once per type)."""
        wanted = self._type_of.get(type_iri)
        if wanted is None:
            return []
        if wanted not in self._typed_entries:
            self._typed_entries[wanted] = [e for e, n in enumerate(self._data.entry_node)
                                           if wanted in self._data.node_types[n]]
        return self._typed_entries[wanted]

    def _matches(self, scored: Iterable[tuple[int, float]], type_iri: str | None, method: str,
                 limit: int | None) -> list[NodeMatch]:
        wanted = None if type_iri is None else self._type_of.get(type_iri, -1)
        best: dict[int, float] = {}
        for entry, score in scored:
            node = self._data.entry_node[entry]
            if wanted is not None and wanted not in self._data.node_types[node]:
                continue
            best[node] = max(score, best.get(node, 0.0))
        ranked = sorted(best.items(), key=lambda pair: (-pair[1], pair[0]))[:limit]
        return [NodeMatch(self._data.iris[n], self._data.labels[n], s, method) for n, s in ranked]

    def _word_postings(self) -> dict[str, list[int]]:
        if self._postings is None:
            postings: dict[str, list[int]] = {}
            for entry, key in enumerate(self._data.keys):
                for word in set(key.split()):
                    postings.setdefault(word, []).append(entry)
            self._postings = postings
        return self._postings

    def _label_vectors(self, embedder: Embedder) -> np.ndarray:
        """Embeddings of the display labels, cached in memory and in ``vectors-MODEL.npy``."""
        model = embedder.model_id
        if model in self._vectors:
            return self._vectors[model]
        path = self.directory / f"vectors-{model}.npy" if self.directory else None
        matrix = None
        if path is not None and path.is_file():
            loaded = np.load(path, allow_pickle=False)
            matrix = loaded if loaded.shape[0] == len(self._data.iris) else None
        if matrix is None:
            matrix = embedder.embed(self._data.labels)
            if path is not None:
                atomic_write_bytes(path, _npy_bytes(matrix))
        self._vectors[model] = matrix
        return matrix




def _npy_bytes(matrix: np.ndarray) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, matrix, allow_pickle=False)
    return buffer.getvalue()


def _as_one(rows: list[tuple[Any, ...]], schema: Schema, identity: Identity) -> list[tuple[Any, ...]]:
    """``rows`` with each ``owl:sameAs`` alias's names and types given to its canonical node, and each merged
    type's other IRIs (``foaf:Person``) written as its type's IRI (``dbo:Person``)."""
    types = {other: info.iri for info in schema.types for other in info.also}
    if not identity and not types:
        return rows
    type_p = schema.type_predicate

    def one(row: tuple[Any, ...]) -> tuple[Any, ...]:
        s, p, o = row
        if isinstance(s, NamedNode) and s.value in identity.aliases:
            s = NamedNode(identity.aliases[s.value])
        if isinstance(o, NamedNode) and p is not None and p.value == type_p and o.value in types:
            o = NamedNode(types[o.value])
        return (s, p, o)

    return [one(row) for row in rows]


def _schema_iris(schema: Schema) -> set[str]:
    return schema.type_iris | {r.iri for r in schema.relations} | set(META_CLASSES)


#: stands for "named after its IRI" in :func:`_collect` (never queried: no such triples exist)
_DERIVED_NAME = NamedNode("https://sparqlqa.dev/ns#nameFromIri")


def _keep_literal(term: Any, language: str | None) -> bool:
    if not isinstance(term, Literal) or not term.value.strip():
        return False
    if language is None:
        return True
    lang = term.language
    return language is None or not lang or lang.lower().split("-")[0] == language.lower().split("-")[0]


def _collect(rows: Sequence[tuple[Any, ...]], label_ps: list[str], type_p: str, skip: set[str],
             language: str | None) -> _IndexData:
    """Turn (subject, predicate, object) rows into index columns; schema nodes are left out."""
    names: dict[str, list[tuple[int, int, str]]] = {}
    types: dict[str, list[str]] = {}
    rank = {p: i for i, p in enumerate(label_ps)}
    for s, p, o in rows:
        if s is None or p is None or o is None:
            continue
        predicate = p.value
        if predicate == type_p:
            if isinstance(o, NamedNode):
                types.setdefault(s.value, []).append(o.value)
        elif _keep_literal(o, language):
            names.setdefault(s.value, []).append((rank.get(predicate, len(rank)), language_rank(o.language, language),
                                                  o.value))
    for iri in skip:
        names.pop(iri, None)
    data = _IndexData()
    type_number: dict[str, int] = {}
    for iri in sorted(names):
        node_types = types.get(iri, [])
        if any(t in META_CLASSES for t in node_types):
            continue
        node = len(data.iris)
        entries = sorted(set(names[iri]))
        data.iris.append(iri)
        data.labels.append(entries[0][2])
        data.node_types.append([type_number.setdefault(t, len(type_number))
                                for t in dict.fromkeys(node_types)])
        for key in dict.fromkeys(normalize_label(text) for _, _, text in entries):
            data.keys.append(key)
            data.entry_node.append(node)
    data.type_iris = list(type_number)
    return data


# -- linking -------------------------------------------------------------------------------------


def resolve_type(schema: Schema, name: str | None) -> str | None:
    """A node type written by a user or an LLM → its IRI (by IRI, local name or label, loosely).

    >>> from sparqlqa.kb.schema import TypeInfo
    >>> schema = Schema(types=[TypeInfo("http://x/GeneProtein", "gene/protein", 3)])
    >>> resolve_type(schema, "Gene Protein"), resolve_type(schema, "disease")
    ('http://x/GeneProtein', None)
    """
    if not name or not name.strip():
        return None
    found = schema.type(name)
    if found is not None:
        return found.iri
    wanted = normalize_label(name).replace(" ", "")
    for info in schema.types:
        forms = (info.label, local_name(info.iri), info.iri)
        if wanted in {normalize_label(f).replace(" ", "") for f in forms}:
            return info.iri
    return None
