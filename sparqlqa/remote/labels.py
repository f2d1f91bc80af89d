"""Name → node lookups against a remote endpoint: linking without a persisted full label index.

A store with a hundred million labels cannot be copied into a local index, so
:class:`RemoteLabelLookup` implements linking's :class:`~sparqlqa.kb.labels.NodeLookup`
with small queries instead:

* :meth:`~RemoteLabelLookup.exact`: one query with ``VALUES`` over a few case
  variants of the name (plain and in the profile's language), on every engine;
* :meth:`~RemoteLabelLookup.fuzzy` / :meth:`~RemoteLabelLookup.containing`: the
  engine's own name search when the profile names one (``bif:contains`` on
  Virtuoso, ``mwapi`` EntitySearch on the Wikidata Query Service), scored with
  rapidfuzz; exact matches only otherwise;
* :meth:`~RemoteLabelLookup.prime`: every word n-gram of a question in one query, so
  :meth:`~RemoteLabelLookup.normalized_keys` covers the names the question mentions
  (mention detection by the offline strategy).

Every query is built from term objects (``str(Literal(text))``), never by pasting text.
Linking picks this class for KBs whose store kind is ``"endpoint"``: :func:`lookup_for_kb`.
"""

from __future__ import annotations

__all__ = ["GroupLookup", "RemoteLabelLookup", "bif_contains_expression", "lookup_for_kb", "name_variants"]

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from pyoxigraph import Literal, NamedNode

from sparqlqa.english import FREE_TEXT_STOPWORDS
from sparqlqa.kb.labels import CONTAINMENT_MIN_SCORE, FUZZY_CUTOFF, LabelIndex, NodeLookup, NodeMatch, normalize_label
from sparqlqa.kb.profile import Profile
from sparqlqa.kb.store import Store, Term
from sparqlqa.kb.vocab import META_CLASSES
from sparqlqa.language import current_language
from sparqlqa.query.built_query import BuiltQuery

if TYPE_CHECKING:
    from sparqlqa.kb.knowledge_base import KnowledgeBase

MAX_NGRAM = 6
#: name variants per :meth:`RemoteLabelLookup.prime` query (each sent plain and language-tagged)
PRIME_CHUNK = 200
WIKIBASE = "http://wikiba.se/ontology#"
BIGDATA = "http://www.bigdata.com/rdf#"
MWAPI = "https://www.mediawiki.org/ontology#API/"
#: the Wikidata Query Service's own name search: a SERVICE it runs in-house (it calls no endpoint we name),
#: allowed in the queries this module builds, never in a user's
ENGINE_SERVICES = frozenset({WIKIBASE + "mwapi"})


def lookup_for_kb(kb: KnowledgeBase) -> NodeLookup:
    """The KB's name lookup: queries for endpoint KBs, the persisted :class:`LabelIndex` otherwise; a KB
    group with remote members: its label index, then its remote members (:class:`GroupLookup`)."""
    if not kb.can_scan():
        return RemoteLabelLookup.for_kb(kb)
    remote = kb.remote_members()
    if remote:
        return GroupLookup(LabelIndex.for_kb(kb), [RemoteLabelLookup.for_kb(member) for member in remote])
    return LabelIndex.for_kb(kb)


class GroupLookup(NodeLookup):
    """A KB group's names: its local members' label index first; a name it does not know is looked up on
    each remote member (their queries, their limits), so a node only the endpoint holds can be linked."""

    def __init__(self, local: NodeLookup, remote: Sequence[NodeLookup]) -> None:
        self.local = local
        self.remote = list(remote)

    def exact(self, text: str, type_iri: str | None = None) -> list[NodeMatch]:
        found = self.local.exact(text, type_iri)
        for lookup in self.remote if not found else []:
            found = found + lookup.exact(text, type_iri)
        return found

    def fuzzy(self, text: str, type_iri: str | None = None, cutoff: float = FUZZY_CUTOFF,
              limit: int = 5) -> list[NodeMatch]:
        found = self.local.fuzzy(text, type_iri, cutoff, limit)
        for lookup in self.remote if not found else []:
            found = found + lookup.fuzzy(text, type_iri, cutoff, limit)
        return found[:limit]

    def containing(self, text: str, type_iri: str | None = None, limit: int = 5) -> list[NodeMatch]:
        found = self.local.containing(text, type_iri, limit)
        for lookup in self.remote if not found else []:
            found = found + lookup.containing(text, type_iri, limit)
        return found[:limit]

    def nearest(self, text: str, embedder: Any, type_iri: str | None = None, limit: int = 5) -> list[NodeMatch]:
        return self.local.nearest(text, embedder, type_iri, limit)  # the endpoint's nodes have no vectors

    def types_of(self, iri: str) -> list[str]:
        found = self.local.types_of(iri)
        for lookup in self.remote if not found else []:
            found = found or lookup.types_of(iri)
        return found

    def remote_labels(self, iris: Sequence[str]) -> dict[str, str]:
        """Labels of ``iris`` (nodes the local members do not name) from the remote members."""
        found: dict[str, str] = {}
        for lookup in self.remote:
            if isinstance(lookup, RemoteLabelLookup):
                found.update(lookup.labels_of([iri for iri in iris if iri not in found]))
        return found


def name_variants(text: str) -> list[str]:
    """Spellings worth an exact lookup: as written, lower case, title case, first letter up.

    >>> name_variants("ridley SCOTT")
    ['ridley SCOTT', 'ridley scott', 'Ridley Scott', 'Ridley SCOTT']
    """
    clean = " ".join(text.split())
    if not clean:
        return []
    first_up = clean[0].upper() + clean[1:]
    return list(dict.fromkeys([clean, clean.lower(), clean.title(), first_up]))


def bif_contains_expression(text: str, *, operator: str = "AND", max_words: int = 8) -> str | None:
    """A Virtuoso ``bif:contains`` expression over the words of ``text`` (None: nothing to search).

    Only letters and digits survive, each word is double-quoted, so the user's text can
    never change the expression's syntax; the expression is sent as a SPARQL Literal.
    ``operator`` is ``AND`` (every word) or ``OR`` (any word).

    >>> bif_contains_expression('The "Top" Hat!')
    '"top" AND "hat"'
    >>> bif_contains_expression("Top Hatt", operator="OR")
    '"top" OR "hatt"'
    >>> bif_contains_expression("of the") is None
    True
    """
    if operator not in ("AND", "OR"):
        raise ValueError(f"operator must be AND or OR, not {operator!r}")
    words = [w.replace("_", "") for w in re.findall(r"\w+", text.casefold())]
    words = [w for w in dict.fromkeys(words) if len(w) > 1 and w not in FREE_TEXT_STOPWORDS][:max_words]
    return f" {operator} ".join(f'"{w}"' for w in words) or None


def _iri(term: Term | None) -> str | None:
    return term.value if isinstance(term, NamedNode) else None


class RemoteLabelLookup(NodeLookup):
    """Linking lookups answered by an endpoint (label/alias predicates and language from a profile)."""

    def __init__(self, store: Store, profile: Profile, *, skip: Iterable[str] = ()) -> None:
        self.store = store
        self.profile = profile
        self.limit = max(1, int(profile.search_limit))
        self._skip = set(skip) | set(META_CLASSES)
        self._skip_types = set(profile.exclude_types) | set(META_CLASSES)
        self._labels_in: dict[str | None, dict[str, str]] = {}  # by the asker's language (issue 37)
        self._types: dict[str, list[str]] = {}
        self._keys: dict[str, list[str]] = {}  # normalised name → IRIs, for everything looked up
        self._searches: dict[tuple[str, str | None, str], list[tuple[str, str]]] = {}
        self.notes: list[str] = []

    @property
    def _labels(self) -> dict[str, str]:
        """Display labels looked up so far, for the asker's language."""
        return self._labels_in.setdefault(self._asked(), {})

    def _asked(self) -> str | None:
        """The asker's language when it is not the profile's (its names are looked up as well, first)."""
        asked = current_language()
        profile = (self.profile.language or "").lower().split("-")[0]
        return asked if asked and asked != profile else None

    @classmethod
    def for_kb(cls, kb: KnowledgeBase) -> RemoteLabelLookup:
        """One lookup per open KB (its caches live as long as the KB object)."""
        def build() -> RemoteLabelLookup:
            skip = {t.iri for t in kb.schema.types} | {r.iri for r in kb.schema.relations}
            return cls(kb.store, kb.profile, skip=skip)

        return kb.remember("remote label lookup", build)

    # -- query building ---------------------------------------------------------------------

    def _name_predicates(self) -> str:
        predicates = dict.fromkeys([*self.profile.label_predicates, *self.profile.alias_predicates])
        return " ".join(str(NamedNode(p)) for p in predicates)

    def _literals(self, texts: Iterable[str]) -> list[Literal]:
        languages = [tag for tag in (self.profile.language, self._asked()) if tag]
        found: list[Literal] = []
        for text in texts:
            found.append(Literal(text))
            found.extend(Literal(text, language=tag) for tag in languages)
        return found

    def _type_pattern(self, type_iri: str | None) -> str:
        if type_iri is None:
            return ""
        return f"?node {NamedNode(self.profile.type_predicate)} {NamedNode(type_iri)} ."

    def _select_names(self, names: Sequence[Literal], type_iri: str | None, limit: int) -> list[tuple[str, str]]:
        """(node IRI, matched name) for nodes whose label or alias is one of ``names``."""
        values = " ".join(str(n) for n in names)
        query = (f"SELECT DISTINCT ?node ?name WHERE {{ VALUES ?name {{ {values} }} "
                 f"VALUES ?p {{ {self._name_predicates()} }} ?node ?p ?name . "
                 f"{self._type_pattern(type_iri)} FILTER(isIRI(?node)) }} LIMIT {limit}")
        rows = self.store.select(BuiltQuery.select(query)).rows
        return [(node.value, name.value) for node, name in rows
                if isinstance(node, NamedNode) and isinstance(name, Literal)]

    # -- the NodeLookup interface ------------------------------------------------------------

    def exact(self, text: str, type_iri: str | None = None) -> list[NodeMatch]:
        """Nodes whose label or alias equals ``text`` up to case and punctuation."""
        key = normalize_label(text)
        variants = name_variants(text)
        if not variants:
            return []
        pairs = self._select_names(self._literals(variants), type_iri, self.limit)
        iris = [iri for iri, name in pairs if normalize_label(name) == key]
        self._remember(key, iris)
        return self._matches(((iri, 1.0) for iri in iris), "exact")

    def fuzzy(self, text: str, type_iri: str | None = None, cutoff: float = FUZZY_CUTOFF,
              limit: int = 5) -> list[NodeMatch]:
        """Names at least ``cutoff`` similar to ``text``, from the engine's name search (any word)."""
        return self._scored(text, type_iri, cutoff, limit, "OR")

    def containing(self, text: str, type_iri: str | None = None, limit: int = 5) -> list[NodeMatch]:
        """Names containing every word of ``text`` (engine name search; [] without one)."""
        return self._scored(text, type_iri, CONTAINMENT_MIN_SCORE, limit, "AND")

    def types_of(self, iri: str) -> list[str]:
        if iri not in self._types:
            self._describe([iri])
        return list(self._types.get(iri, []))

    def label_of(self, iri: str) -> str | None:
        if iri not in self._labels:
            self._describe([iri])
        return self._labels.get(iri)

    def labels_of(self, iris: Sequence[str]) -> dict[str, str]:
        """The display labels of ``iris`` the endpoint has (one query per 100 not looked up yet)."""
        self._describe([iri for iri in dict.fromkeys(iris) if iri not in self._labels])
        return {iri: self._labels[iri] for iri in iris if iri in self._labels}

    def normalized_keys(self) -> Iterable[str]:
        """The normalised names looked up so far that matched a node (a remote store cannot list all)."""
        return [key for key, iris in self._keys.items() if iris]

    def nodes_for_key(self, key: str) -> list[str]:
        return list(self._keys.get(key, []))

    def prime(self, text: str, *, max_words: int = MAX_NGRAM) -> dict[str, list[str]]:
        """Look up every word n-gram of ``text`` at once; ``{normalised name: IRIs}`` of those found."""
        words = [w.strip(".,;:!?()[]\"'") for w in text.split()]
        words = [w for w in words if w]
        grams = [" ".join(words[i:j]) for i in range(len(words))
                 for j in range(i + 1, min(len(words), i + max_words) + 1)]
        variants = list(dict.fromkeys(v for gram in grams for v in name_variants(gram)))
        found: dict[str, list[str]] = {}
        for start in range(0, len(variants), PRIME_CHUNK):
            chunk = self._literals(variants[start : start + PRIME_CHUNK])
            for iri, name in self._select_names(chunk, None, self.limit * 10):
                found.setdefault(normalize_label(name), []).append(iri)
        for key, iris in found.items():
            self._remember(key, iris)
        return {key: self.nodes_for_key(key) for key in found}

    # -- internals ---------------------------------------------------------------------------

    def _remember(self, key: str, iris: Iterable[str]) -> None:
        known = self._keys.setdefault(key, [])
        known.extend(iri for iri in iris if iri not in known and iri not in self._skip)

    def _scored(self, text: str, type_iri: str | None, cutoff: float, limit: int,
                operator: str) -> list[NodeMatch]:
        from rapidfuzz import fuzz

        key = normalize_label(text)
        best: dict[str, float] = {}
        for iri, name in self._search(text, type_iri, operator):
            score = fuzz.ratio(key, normalize_label(name)) / 100
            if score >= cutoff:
                best[iri] = max(score, best.get(iri, 0.0))
        ranked = sorted(best.items(), key=lambda pair: (-pair[1], pair[0]))
        return self._matches(ranked, "fuzzy")[:limit]

    def _search(self, text: str, type_iri: str | None, operator: str) -> list[tuple[str, str]]:
        """(IRI, name) rows from the engine's name search, cached per text, type and operator."""
        cache_key = (normalize_label(text), type_iri, f"{operator}@{self._asked() or ''}")
        if cache_key not in self._searches:
            mode = self.profile.name_search
            query = (self._bif_query(text, type_iri, operator) if mode == "bif:contains"
                     else self._mwapi_query(text, type_iri) if mode == "mwapi" else None)
            rows = []
            if query is not None:
                found = self.store.select(BuiltQuery.select(query, services=ENGINE_SERVICES if mode == "mwapi" else ()),
                                         engine_services=ENGINE_SERVICES if mode == "mwapi" else ())
                rows = [(node.value, name.value) for node, name in found.rows
                        if isinstance(node, NamedNode) and isinstance(name, Literal)]
            self._searches[cache_key] = rows
        return self._searches[cache_key]

    def _bif_query(self, text: str, type_iri: str | None, operator: str) -> str | None:
        expression = bif_contains_expression(text, operator=operator)
        if expression is None:
            return None
        lang = self._language_filter("?name")
        return (f"SELECT DISTINCT ?node ?name WHERE {{ VALUES ?p {{ {self._name_predicates()} }} "
                f"?node ?p ?name . ?name <bif:contains> {Literal(expression)} . "
                f"{self._type_pattern(type_iri)} FILTER(isIRI(?node)) {lang} }} LIMIT {self.limit}")

    def _mwapi_query(self, text: str, type_iri: str | None) -> str | None:
        if not text.strip():
            return None
        w, bd, api = WIKIBASE, BIGDATA, MWAPI
        language = Literal(self._asked() or self.profile.language or "en")  # Wikidata falls back to English
        service = (f"SERVICE {NamedNode(w + 'mwapi')} {{ {NamedNode(bd + 'serviceParam')} "
                   f"{NamedNode(w + 'endpoint')} {Literal('www.wikidata.org')} ; "
                   f"{NamedNode(w + 'api')} {Literal('EntitySearch')} ; "
                   f"{NamedNode(api + 'search')} {Literal(' '.join(text.split()))} ; "
                   f"{NamedNode(api + 'language')} {language} . "
                   f"?node {NamedNode(w + 'apiOutputItem')} {NamedNode(api + 'item')} . }}")
        label = NamedNode(self.profile.label_predicates[0])
        return (f"SELECT DISTINCT ?node ?name WHERE {{ {service} ?node {label} ?name . "
                f"{self._type_pattern(type_iri)} {self._language_filter('?name')} }} LIMIT {self.limit}")

    def _language_filter(self, variable: str) -> str:
        tests = [f"lang({variable}) = {Literal('')}"]
        for tag in (self.profile.language, self._asked()):  # the asker's language as well (issue 37)
            if tag:
                tests.append(f"langMatches(lang({variable}), {Literal(tag)})")
        return f"FILTER({' || '.join(tests)})"

    def _describe(self, iris: Sequence[str]) -> None:
        """Fetch display labels and types of ``iris`` (one query per 100)."""
        label_ps = list(self.profile.label_predicates)
        rank = {p: i for i, p in enumerate(label_ps)}
        type_p = NamedNode(self.profile.type_predicate)
        for start in range(0, len(iris), 100):
            chunk = list(iris[start : start + 100])
            values = " ".join(str(NamedNode(i)) for i in chunk)
            preds = " ".join(str(NamedNode(p)) for p in label_ps)
            query = (f"SELECT ?node ?p ?v WHERE {{ VALUES ?node {{ {values} }} "
                     f"{{ VALUES ?p {{ {preds} }} ?node ?p ?v {self._language_filter('?v')} }} "
                     f"UNION {{ ?node {type_p} ?v BIND({type_p} AS ?p) }} }} LIMIT {len(chunk) * 200}")
            names: dict[str, list[tuple[int, int, str]]] = {}
            for iri in chunk:
                self._types.setdefault(iri, [])
            for node, p, v in self.store.select(BuiltQuery.select(query)).rows:
                self._absorb(node, p, v, rank, names)
            for iri, found in names.items():
                self._labels[iri] = sorted(found)[0][2]

    def _absorb(self, node: Any, p: Any, v: Any, rank: dict[str, int],
                names: dict[str, list[tuple[int, int, str]]]) -> None:
        iri, predicate = _iri(node), _iri(p)
        if iri is None or predicate is None or v is None:
            return
        if predicate == self.profile.type_predicate and isinstance(v, NamedNode):
            if v.value not in self._types[iri]:
                self._types[iri].append(v.value)
        elif isinstance(v, Literal):
            asked = self._asked()
            preferred = -1 if asked and (v.language or "").lower().split("-")[0] == asked else \
                0 if v.language and self.profile.language else 1
            names.setdefault(iri, []).append((rank.get(predicate, len(rank)), preferred, v.value))

    def _matches(self, scored: Iterable[tuple[str, float]], method: str) -> list[NodeMatch]:
        """NodeMatches with display labels, schema and meta nodes left out, best first."""
        best: dict[str, float] = {}
        for iri, score in scored:
            if iri not in self._skip:
                best[iri] = max(score, best.get(iri, 0.0))
        missing = [iri for iri in best if iri not in self._labels or iri not in self._types]
        if missing:
            self._describe(missing)
        kept = [(iri, s) for iri, s in best.items() if not set(self._types.get(iri, [])) & self._skip_types]
        kept.sort(key=lambda pair: (-pair[1], self._labels.get(pair[0], ""), pair[0]))
        return [NodeMatch(iri, self._labels.get(iri, iri), s, method) for iri, s in kept]

