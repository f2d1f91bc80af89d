"""Node facts and texts: what embeddings, rerank prompts and answers read about a node.

A node's text is its document (``sqa:text`` or the profile's text predicates)
when it has one, else its label plus a short verbalisation of its relations
("Alien directed by Ridley Scott; Alien starred actors Sigourney Weaver"), so
text-less KBs such as MetaQA still embed well.  ``full`` texts (rerank prompts,
answer snippets) always add the relations, and a node's literal attributes
("Alice Smith birth date 1980-04-02").  Keys are answer keys (:mod:`sparqlqa.kb.terms`):
a value's text says which nodes hold it.
"""

from __future__ import annotations

__all__ = ["MAX_TEXT_CHARS", "MAX_VALUES", "NodeBasics", "NodeFacts", "QuerySink", "fetch_facts", "fetch_labels",
           "index_texts", "label_predicates", "node_texts", "run_query", "scan_basics", "verbalize"]

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyoxigraph import Literal, NamedNode

from sparqlqa.kb.knowledge_base import KnowledgeBase
from sparqlqa.kb.naming import display_name, language_rank, name_from_iri
from sparqlqa.kb.records import QueryRecord
from sparqlqa.kb.schema import fold_reversed_facts, humanize, local_name, reversed_relation_labels
from sparqlqa.kb.terms import is_blank_key, term_from_key, term_key
from sparqlqa.kb.vocab import META_CLASSES, RDFS, SQA, prefixed_name
from sparqlqa.language import current_language
from sparqlqa.query.built_query import BuiltQuery
from sparqlqa.query.prefixes import WELL_KNOWN_PREFIXES

VALUES_BATCH = 500
#: relation values listed per relation in a verbalisation, and its length cap
MAX_VALUES = 5
MAX_TEXT_CHARS = 2000
#: records of helper queries: ``sink(QueryResult.history())``
QuerySink = Callable[[QueryRecord], None]


@dataclass
class NodeFacts:
    """What is known about one node: labels, types, texts, relations (as labels)."""

    label: str = ""
    types: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    outgoing: dict[str, list[str]] = field(default_factory=dict)  # relation label -> object labels
    incoming: dict[str, list[str]] = field(default_factory=dict)  # relation label -> subject labels


def _values(keys: Iterable[str]) -> str:
    """A VALUES list of answer keys (:mod:`sparqlqa.kb.terms`): IRIs and values; blank nodes cannot be named."""
    return " ".join(str(term_from_key(k)) for k in keys if not is_blank_key(k))


def run_query(kb: KnowledgeBase, sparql: str, sink: QuerySink | None) -> list[tuple[Any, ...]]:
    result = kb.query(BuiltQuery.select(sparql))
    if sink is not None:
        sink(result.history())
    return result.rows


def label_predicates(kb: KnowledgeBase) -> list[str]:
    return list(kb.schema.label_predicates) or [RDFS.label.value]


class _LabelPicker:
    """The name to show per node: the first label predicate's, then by :func:`language_rank`, then text."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.predicates = label_predicates(kb)
        self.language = kb.profile.language
        asked = current_language()  # the asker's language first (issue 37); English as before unless the
        self.asked = asked if asked != "en" or self.language else None  # profile prefers another language
        self.labels: dict[str, str] = {}
        self.languages: dict[str, str] = {}
        self._rank: dict[str, tuple[int, int, int, str]] = {}

    def offer(self, key: str, label: Any, predicate: Any) -> None:
        if isinstance(label, Literal) and label.value.strip():
            where = self.predicates.index(predicate.value) if predicate is not None else len(self.predicates)
            language = language_rank(label.language, self.language, self.asked)
            # a name in the asker's language wins over the predicate order
            rank = (int(language >= 0), where, language, label.value)
            if key not in self._rank or rank < self._rank[key]:
                self.labels[key], self._rank[key] = label.value, rank
                if label.language:
                    self.languages[key] = label.language
                else:
                    self.languages.pop(key, None)


def _add_type(types: dict[str, list[str]], key: str, kind: Any) -> None:
    if isinstance(kind, NamedNode) and kind.value not in META_CLASSES:
        known = types.setdefault(key, [])
        if kind.value not in known:
            known.append(kind.value)


def fetch_labels(kb: KnowledgeBase, iris: Sequence[str], *, sink: QuerySink | None = None,
                 languages: dict[str, str] | None = None) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Labels and types of ``iris`` (one query per 500 IRIs); each label in the asker's language when the
    KB has one (:func:`sparqlqa.language.asked_in`).  ``languages``: filled with the tag of each tagged label."""
    picker = _LabelPicker(kb)
    types: dict[str, list[str]] = {}
    names = _each_predicate("?s", picker.predicates, "?l", "?lp")
    type_p = NamedNode(kb.schema.type_predicate)
    for start in range(0, len(iris), VALUES_BATCH):
        query = (f"SELECT ?s ?l ?t ?lp WHERE {{ VALUES ?s {{ {_values(iris[start:start + VALUES_BATCH])} }} "
                 f"OPTIONAL {{ {names} }} OPTIONAL {{ ?s {type_p} ?t }} }}")
        for s, label, kind, predicate in run_query(kb, query, sink):
            if s is not None:
                picker.offer(s.value, label, predicate)
                _add_type(types, s.value, kind)
    _name_relations(kb, iris, picker.labels)
    if languages is not None:
        languages.update(picker.languages)
    return picker.labels, types


def _name_relations(kb: KnowledgeBase, iris: Sequence[str], labels: dict[str, str]) -> None:
    """Name the relations among ``iris`` that have no label in the data (evidence edges): by a label an
    ontology gave them, else by the prefixed name the user's files declared (``dbo:birthPlace``), else
    by their label in the schema ("birth place"), never a raw local name."""
    unnamed = [iri for iri in iris if iri not in labels]
    if not unnamed:
        return
    relations = {rel.iri: rel.label for rel in kb.schema.relations}
    relations.setdefault(kb.schema.type_predicate, "type")
    prefixes = {**WELL_KNOWN_PREFIXES, **getattr(kb.manifest, "prefixes", {})}  # not the KB's own rel:
    for iri in unnamed:
        label = relations.get(iri)
        if label is None:
            continue
        stated = label != humanize(local_name(iri))
        labels[iri] = label if stated else prefixed_name(iri, prefixes) or label


@dataclass
class NodeBasics:
    """Labels, types and documents of many nodes at once (:func:`scan_basics`)."""

    labels: dict[str, str] = field(default_factory=dict)
    types: dict[str, list[str]] = field(default_factory=dict)
    texts: dict[str, list[str]] = field(default_factory=dict)


def scan_basics(kb: KnowledgeBase, keep: set[str], *, types: dict[str, list[str]] | None = None) -> NodeBasics:
    """Labels, types and documents of the IRIs ``keep``, read by one scan each of the KB's labels, types and
    documents: for a whole KB's index far cheaper than lookups by ``VALUES`` (benchmarks/RESULTS.md
    "Static embedder"); the same choices as :func:`fetch_labels` and the document lookup.  ``types``:
    the nodes' types (not meta-classes) when already read.  The scans' rows are streamed
    (:meth:`~sparqlqa.kb.store.Store.scan_rows`): what is held is what ``keep`` asks for, not the KB's."""
    picker, basics = _LabelPicker(kb), NodeBasics(types=types if types is not None else {})
    names = _each_predicate("?s", picker.predicates, "?l", "?lp")
    for s, label, predicate in kb.store.scan_rows(BuiltQuery.select(f"SELECT ?s ?l ?lp WHERE {{ {names} }}")):
        if s is not None and s.value in keep:
            picker.offer(s.value, label, predicate)
    basics.labels = picker.labels
    type_query = BuiltQuery.select(f"SELECT ?s ?t WHERE {{ ?s {NamedNode(kb.schema.type_predicate)} ?t }}")
    for s, kind in kb.store.scan_rows(type_query) if types is None else ():
        if s is not None and s.value in keep:
            _add_type(basics.types, s.value, kind)
    if kb.schema.text_predicates:
        documents = _each_predicate("?s", list(kb.schema.text_predicates), "?t")
        text_query = BuiltQuery.select(f"SELECT ?s ?t WHERE {{ {{ {documents} }} FILTER(isLiteral(?t)) }}")
        for s, text in kb.store.scan_rows(text_query):
            if s is not None and text is not None and s.value in keep:
                basics.texts.setdefault(s.value, []).append(text.value)
    return basics


def _each_predicate(subject: str, predicates: Sequence[str], value: str, predicate: str | None = None) -> str:
    """``{ S <p1> V } UNION { S <p2> V } ...`` (binding ``predicate`` to the one that matched): a lookup per
    predicate, where ``S ?p V FILTER(?p IN (...))`` reads every triple of S (a hub's thousands of edges).

    >>> _each_predicate("?s", ["urn:a", "urn:b"], "?l", "?lp")
    '{ ?s <urn:a> ?l BIND(<urn:a> AS ?lp) } UNION { ?s <urn:b> ?l BIND(<urn:b> AS ?lp) }'
    """
    terms = [str(NamedNode(p)) for p in predicates]
    bind = (lambda term: f" BIND({term} AS {predicate})") if predicate else (lambda term: "")
    return " UNION ".join(f"{{ {subject} {term} {value}{bind(term)} }}" for term in terms)


def _relation_label(kb: KnowledgeBase, iri: str) -> str:
    rel = kb.schema.relation(iri)
    return rel.label if rel is not None else humanize(local_name(iri))


def _fetch_relations(kb: KnowledgeBase, iris: Sequence[str], facts: dict[str, NodeFacts],
                     sink: QuerySink | None) -> None:
    predicates = label_predicates(kb)
    skip = f"FILTER(?p != {NamedNode(kb.schema.type_predicate)})"
    values = _values(iris)
    names = f"OPTIONAL {{ {_each_predicate('?x', predicates, '?xl', '?lp')} }}"
    attributes = ", ".join(str(NamedNode(r.iri)) for r in kb.schema.relations if r.kind == "literal")
    objects = f"isIRI(?x) || (isLiteral(?x) && ?p IN ({attributes}))" if attributes else "isIRI(?x)"
    out_q = (f"SELECT ?s ?p ?x ?xl ?lp WHERE {{ VALUES ?s {{ {values} }} ?s ?p ?x FILTER({objects}) {skip} "
             f"{names} }}")
    in_q = (f"SELECT ?o ?p ?x ?xl ?lp WHERE {{ VALUES ?o {{ {values} }} ?x ?p ?o FILTER(isIRI(?x)) {skip} "
            f"{names} }}")
    language = kb.profile.language
    relation_labels: dict[str, str] = {}
    for query, attr in ((out_q, "outgoing"), (in_q, "incoming")):
        edges: dict[tuple[str, str, str], tuple[tuple[int, int, str], str]] = {}
        for node, pred, other, other_label, label_p in run_query(kb, query, sink):
            key = term_key(node)
            if key is None or key not in facts or pred is None or other is None:
                continue
            name = (len(predicates), 0, other.value if isinstance(other, Literal) else name_from_iri(other.value))
            if isinstance(other_label, Literal) and other_label.value.strip() and label_p is not None:
                name = (predicates.index(label_p.value), language_rank(other_label.language, language),
                        other_label.value)
            edge = (key, pred.value, other.value)
            if edge not in edges or name < edges[edge][0]:
                edges[edge] = (name, name[2])
        for (key, pred_iri, _other), (_rank, name_text) in edges.items():
            if pred_iri not in relation_labels:
                relation_labels[pred_iri] = _relation_label(kb, pred_iri)
            bucket = getattr(facts[key], attr).setdefault(relation_labels[pred_iri], [])
            if name_text not in bucket:
                bucket.append(name_text)


def _fetch_texts(kb: KnowledgeBase, iris: Sequence[str], facts: dict[str, NodeFacts],
                 sink: QuerySink | None) -> None:
    predicates = list(kb.schema.text_predicates)
    if not predicates:
        return
    wanted = _each_predicate("?s", predicates, "?t")  # not a second VALUES: two VALUES joined plan badly
    query = f"SELECT ?s ?t WHERE {{ VALUES ?s {{ {_values(iris)} }} {{ {wanted} }} FILTER(isLiteral(?t)) }}"
    for s, text in run_query(kb, query, sink):
        key = term_key(s)
        if key is not None and text is not None and key in facts:
            facts[key].texts.append(text.value)


def fetch_facts(kb: KnowledgeBase, iris: Sequence[str], *, relations: bool = True,
                documented_relations: bool = True, basics: NodeBasics | None = None,
                sink: QuerySink | None = None) -> dict[str, NodeFacts]:
    """Labels, types, texts and (optionally) relations of ``iris``; ``documented_relations=False``:
    relations only of the nodes without a document (what an index text uses); ``basics``: labels,
    types and documents already read (:func:`scan_basics`)."""
    iris = list(dict.fromkeys(iris))
    facts = {iri: NodeFacts() for iri in iris}
    labels, types = (basics.labels, basics.types) if basics is not None else fetch_labels(kb, iris, sink=sink)
    for iri in iris:
        facts[iri].label = labels.get(iri) or display_name(iri)
        facts[iri].types = list(types.get(iri, []))
        if basics is not None:
            facts[iri].texts = list(basics.texts.get(iri, []))
    for start in range(0, len(iris) if basics is None else 0, VALUES_BATCH):
        _fetch_texts(kb, iris[start:start + VALUES_BATCH], facts, sink)
    if relations:
        wanted = iris if documented_relations else [i for i in iris if not any(t.strip() for t in facts[i].texts)]
        for start in range(0, len(wanted), VALUES_BATCH):
            _fetch_relations(kb, wanted[start:start + VALUES_BATCH], facts, sink)
    return facts


def verbalize(facts: NodeFacts, schema_type_label: Callable[[str], str], *, max_values: int = MAX_VALUES,
              with_text: bool = True, with_relations: bool = True, max_chars: int = MAX_TEXT_CHARS) -> str:
    """One node as text: label (type), its document, and a sentence per relation."""
    kinds = [schema_type_label(t) for t in facts.types if t != SQA.Entity.value]
    head = f"{facts.label} ({', '.join(kinds)})" if kinds else facts.label
    parts = [head]
    if with_text:
        parts.extend(text for text in facts.texts if text.strip())
    if with_relations:
        for relation, names in sorted(facts.outgoing.items()):
            parts.append(f"{facts.label} {relation} {_listing(names, max_values)}")
        for relation, names in sorted(facts.incoming.items()):
            parts.append(f"{_listing(names, max_values)} {relation} {facts.label}")
    text = ". ".join(p.strip().rstrip(".") for p in parts if p.strip()) + "."
    return text if len(text) <= max_chars else text[: max_chars - 1].rstrip() + "…"


def _listing(names: list[str], limit: int) -> str:
    names = sorted(names, key=str.casefold)
    shown = ", ".join(names[:limit])
    return f"{shown} and {len(names) - limit} more" if len(names) > limit else shown


def node_texts(kb: KnowledgeBase, iris: Sequence[str], *, mode: str = "index",
               sink: QuerySink | None = None, max_chars: int = MAX_TEXT_CHARS,
               max_values: int = MAX_VALUES) -> dict[str, str]:
    """Texts of ``iris``.  ``index``: the document, else label + relations; ``full``: both.
    ``max_values``: values listed per relation (the rerank prompt lists more and cuts by characters)."""
    facts = fetch_facts(kb, iris, relations=True, sink=sink)
    reversed_labels = reversed_relation_labels(kb.schema) if mode == "full" else {}
    texts = {}
    for iri, fact in facts.items():
        fold_reversed_facts(fact.outgoing, fact.incoming, reversed_labels)  # ``full``: each fact said once
        relations = mode == "full" or not any(t.strip() for t in fact.texts)
        texts[iri] = verbalize(fact, kb.schema.type_label, with_relations=relations, max_chars=max_chars,
                               max_values=max_values)
    return texts


def index_texts(kb: KnowledgeBase, iris: Sequence[str], *, basics: NodeBasics | None = None,
                sink: QuerySink | None = None) -> dict[str, str]:
    """What the node index embeds: ``node_texts(mode="index")``, reading relations only for nodes without
    a document, and labels, types and documents from ``basics`` when given."""
    facts = fetch_facts(kb, iris, documented_relations=False, basics=basics, sink=sink)
    return {iri: verbalize(fact, kb.schema.type_label, with_relations=not any(t.strip() for t in fact.texts))
            for iri, fact in facts.items()}
