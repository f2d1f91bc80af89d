"""Names the LLM wrote that the KB does not hold, linked to real nodes before the query runs.

An LLM writing SPARQL from a schema listing does not know the KB's nodes: it writes names as string
literals (``?f rdfs:label "Inceptoin"``, ``?f dbo:director "Christopher Nolan"``) and guesses IRIs
(``dbr:Nolan``).  :func:`ground` finds each constant of the query's triple patterns that matches
nothing in the KB and links it with the linker every strategy uses
(:func:`sparqlqa.stages.linking.link_one`: exact, alias, fuzzy, containment, type-aware, embeddings last):

* a literal in a name position (a label or alias predicate) becomes the linked node's own stored name,
  under a name predicate the node has, so the pattern now binds that node;
* a literal where a node belongs (the object of an object relation, or of a relation the schema does
  not know) becomes the linked node;
* a subject or object IRI that no triple mentions becomes the linked node (its local name is the text
  linked); a relation or type IRI the KB lacks becomes the relation or type the schema names so;
* a string a FILTER compares with a variable a name predicate binds (``?b rdfs:label ?n .
  FILTER(?n IN ("Copper Season"))``) is linked like a literal in a name position: it becomes the node's
  stored name (``"Copper Season"@en``), or that name's lexical form where ``STR(?n)`` is compared;
* a text a value relation does not store as written (``?s ex:country "france"``, or a FILTER or VALUES
  comparing it with a variable that relation binds) becomes the stored value that reads the same (up to
  case or language tag) or is its misspelling: in a graph mapped from tables names are such values;
* a name stored only on an alias of an ``owl:sameAs`` group (:mod:`sparqlqa.kb.identity`) becomes the
  canonical node's stored name, since the group's facts point at the canonical node.

Every substitution is recorded (:class:`Substitution`); the query itself is rewritten by
:func:`sparqlqa.strategies.text2sparql.query.substitute` from pyoxigraph terms.
"""

from __future__ import annotations

__all__ = ["Grounding", "Substitution", "ground", "unmatched", "written_term"]

import re
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pyoxigraph import Literal, NamedNode

from sparqlqa.kb.identity import identity_of
from sparqlqa.kb.labels import resolve_type
from sparqlqa.kb.naming import name_from_iri
from sparqlqa.kb.node_text import label_predicates
from sparqlqa.kb.vocab import FOAF, RDF, RDFS, SCHEMA, SCHEMA_HTTPS, SKOS
from sparqlqa.query.built_query import BuiltQuery
from sparqlqa.stages.linking import link_one
from sparqlqa.stages.triplets import resolve_relation
from sparqlqa.strategies.text2sparql.query import ReadQuery, TermKey, iri_key, literal_key

if TYPE_CHECKING:
    from sparqlqa.embed.embedders import Embedder
    from sparqlqa.kb.knowledge_base import KnowledgeBase
    from sparqlqa.kb.labels import NodeLookup, NodeMatch

#: predicates that name a node in any vocabulary (besides the KB's own label and alias predicates)
NAME_PREDICATES = frozenset({RDFS.label.value, FOAF.name.value, SKOS.prefLabel.value, SKOS.altLabel.value,
                             SCHEMA.name.value, SCHEMA_HTTPS.name.value})

#: how close (rapidfuzz ratio) a name the linker does not match must be to a KB name to count as its
#: misspelling ("Inceptoin" → "Inception": 0.89); the linker itself wants 0.95
TYPO_CUTOFF = 0.85
#: a trailing qualifier in a guessed name ("Christopher_Nolan_(director)"), tried without it
_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")


@dataclass
class Substitution:
    """One constant replaced before the query ran: as written, where it stood, what replaced it."""

    written: str
    position: str  # "name" | "node" | "relation" | "type" | "value"
    iri: str
    label: str
    method: str
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "score": round(self.score, 4)}

    def note(self) -> str:
        return f"text2sparql: linked {self.written!r} ({self.position}) to {self.label!r} <{self.iri}> ({self.method})"


@dataclass
class Grounding:
    """What to replace (by the constant's key), the records, and the nodes the question names."""

    replacements: dict[TermKey, NamedNode | Literal] = field(default_factory=dict)
    predicates: dict[TermKey, NamedNode] = field(default_factory=dict)
    substitutions: list[Substitution] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    topic: set[str] = field(default_factory=set)


class _Grounder:
    def __init__(self, kb: KnowledgeBase, lookup: NodeLookup, embedder: Embedder | None) -> None:
        self.kb, self.lookup, self.embedder = kb, lookup, embedder
        schema = kb.schema
        self.names = set(label_predicates(kb)) | set(schema.alias_predicates) | NAME_PREDICATES
        self.type_p = {schema.type_predicate, RDF.type.value}
        self.relations = {rel.iri: rel for rel in schema.relations}
        self.result = Grounding()
        self.types: dict[str, str] = {}
        self.identity = identity_of(kb)

    def exists(self, pattern: str) -> bool:
        return bool(self.kb.query(BuiltQuery.ask(f"ASK {{ {pattern} }}")).boolean)

    def link(self, text: str, type_iri: str | None) -> NodeMatch | None:
        """The linker's best node; else the closest name within :data:`TYPO_CUTOFF` (a misspelling); the
        canonical node of its ``owl:sameAs`` group, which the group's facts point at."""
        matches: list[NodeMatch] = []
        for written in dict.fromkeys((text, _QUALIFIER.sub("", text).strip() or text)):
            matches = self.by_name(written, type_iri)
            if matches:
                break
        if not matches and self.embedder is not None:
            matches = link_one(self.lookup, text, type_iri, top=1, embedder=self.embedder)[0]
        if not matches:
            self.result.notes.append(f"text2sparql: no KB node matches {text!r}; left as written")
        return replace(matches[0], iri=self.identity.canonical(matches[0].iri)) if matches else None

    def by_name(self, text: str, type_iri: str | None) -> list[NodeMatch]:
        """Names only (no embeddings): the linker, then the closest name within :data:`TYPO_CUTOFF`."""
        matches = link_one(self.lookup, text, type_iri, top=1, embedder=None)[0]
        for restrict in dict.fromkeys((type_iri, None)) if not matches else ():
            matches = self.lookup.fuzzy(text, restrict, cutoff=TYPO_CUTOFF, limit=1)
            if matches:
                break
        return matches

    def record(self, written: str, position: str, match: NodeMatch | None = None, *, iri: str = "",
               label: str = "", method: str = "schema", score: float = 1.0) -> None:
        found = Substitution(written, position, match.iri if match else iri, match.label if match else label,
                             match.method if match else method, match.score if match else score)
        self.result.substitutions.append(found)
        self.result.notes.append(found.note())

    def pattern(self, s: Any, p: Any, o: Any) -> None:
        from rdflib import Literal as RLiteral
        from rdflib import URIRef

        if isinstance(p, URIRef) and str(p) not in self.type_p and str(p) not in self.names:
            self.relation(str(p))
        if isinstance(s, URIRef):
            self.node(str(s), None)
        if isinstance(o, URIRef):
            if isinstance(p, URIRef) and str(p) in self.type_p:
                self.type_(str(o))
            else:
                rel = self.relations.get(str(p)) if isinstance(p, URIRef) else None
                self.node(str(o), rel.range if rel else None)
        elif isinstance(o, RLiteral) and isinstance(p, URIRef):
            self.literal(s, str(p), o)

    def relation(self, iri: str) -> None:
        key = iri_key(iri)
        if key in self.result.replacements or iri in self.relations or self.exists(f"?s {NamedNode(iri)} ?o"):
            return
        found = resolve_relation(self.kb.schema, name_from_iri(iri))
        if found is not None and found.iri != iri:
            self.result.replacements[key] = NamedNode(found.iri)
            self.record(iri, "relation", iri=found.iri, label=found.label)

    def type_(self, iri: str) -> None:
        key = iri_key(iri)
        if key in self.result.replacements or any(info.iri == iri for info in self.kb.schema.types):
            return
        if self.exists(f"?s ?p {NamedNode(iri)}"):
            return
        found = resolve_type(self.kb.schema, name_from_iri(iri))
        if found is not None and found != iri:
            self.result.replacements[key] = NamedNode(found)
            self.record(iri, "type", iri=found, label=self.kb.schema.type_label(found))

    def node(self, iri: str, type_iri: str | None) -> None:
        key = iri_key(iri)
        if key in self.result.replacements:
            return
        term = NamedNode(iri)
        if self.exists(f"{{ {term} ?p ?o }} UNION {{ ?s ?p {term} }}"):
            self.result.topic.add(iri)
            return
        match = self.link(name_from_iri(iri), type_iri)
        if match is not None:
            self.result.replacements[key] = NamedNode(match.iri)
            self.result.topic.add(match.iri)
            self.record(iri, "node", match)

    def literal(self, subject: Any, predicate: str, value: Any) -> None:
        key = literal_key(value)
        term = _oxigraph_literal(value)
        if key in self.result.replacements:
            return
        if self.exists(f"?s {NamedNode(predicate)} {term}"):
            if predicate in self.names:  # the nodes so named are the question's own
                lookup = BuiltQuery.select(f"SELECT DISTINCT ?s WHERE {{ ?s {NamedNode(predicate)} {term} }} LIMIT 5")
                rows = self.kb.query(lookup).rows
                named = [row[0].value for row in rows if isinstance(row[0], NamedNode)]
                self.result.topic.update(named)
                self.alias_name(key, str(value), predicate, named)
            return
        if predicate in self.names:
            self.name(key, str(value), predicate, self.types.get(str(subject)))
            return
        rel = self.relations.get(predicate)
        if rel is not None and rel.kind == "literal":
            self.value(key, value, predicate)  # a text the relation stores otherwise; a date or number: none
            return
        match = self.link(str(value), rel.range if rel else None)
        if match is not None:
            self.result.replacements[key] = NamedNode(match.iri)
            self.result.topic.add(match.iri)
            self.record(str(value), "node", match)

    def name(self, key: TermKey, text: str, predicate: str, type_iri: str | None, *, lexical: bool = False) -> None:
        """A name that matches no stored name: the linked node's own name, under a predicate it has (its
        lexical form alone when ``lexical``: what ``STR(?name)`` is compared with)."""
        match = self.link(text, type_iri)
        if match is None:
            return
        stored = _stored_name(self.kb, match.iri, [predicate, *sorted(self.names - {predicate})])
        if stored is None:
            self.result.notes.append(f"text2sparql: {text!r} links to <{match.iri}>, which has no stored name")
            return
        used, literal = stored
        self.result.topic.add(match.iri)
        if lexical:
            literal = Literal(literal.value)
            if literal_key(literal) == key:
                return  # the stored name's lexical form, as written: nothing to replace
        self.result.replacements[key] = literal
        if used != predicate and not lexical:
            self.result.predicates[key] = NamedNode(used)
        self.record(text, "name", match)

    def alias_name(self, key: TermKey, text: str, predicate: str, named: list[str]) -> None:
        """A stored name only aliases of one ``owl:sameAs`` group have: the canonical node's stored name."""
        canonical = {self.identity.canonical(iri) for iri in named}
        if not self.identity or len(canonical) != 1 or canonical & set(named):
            return
        [iri] = canonical
        stored = _stored_name(self.kb, iri, [predicate, *sorted(self.names - {predicate})])
        if stored is None or literal_key(stored[1]) == key:
            return
        used, literal = stored
        self.result.replacements[key] = literal
        if used != predicate:
            self.result.predicates[key] = NamedNode(used)
        self.result.topic.add(iri)
        self.record(text, "name", iri=iri, label=literal.value, method="sameAs")

    def value(self, key: TermKey, value: Any, predicate: str, *, lexical: bool = False) -> None:
        """A text a value relation does not store as written: the value it stores that reads the same
        (another language tag or case) or is its misspelling (:data:`TYPO_CUTOFF`); left alone otherwise."""
        if key[3] or key in self.result.replacements:
            return  # a typed literal (a number, a date): nothing to link
        stored = closest_value(str(value), stored_values(self.kb, predicate))
        if stored is None:
            return
        found = Literal(stored.value) if lexical else stored
        if literal_key(found) == key:
            return
        self.result.replacements[key] = found
        self.record(str(value), "value", iri=predicate, label=stored.value, method="stored value",
                    score=1.0 if stored.value.casefold() == str(value).casefold() else TYPO_CUTOFF)

    def compared(self, variable: Any, value: Any, lexical: bool, binding: dict[str, tuple[Any, str]]) -> None:
        """A string a FILTER compares with ``variable``: linked as a name when a name predicate binds it, as
        a stored value when a value relation does."""
        bound = binding.get(str(variable))
        if bound is None:
            return
        subject, predicate = bound
        key = literal_key(value)
        if key in self.result.replacements:
            return
        if predicate not in self.names:
            term = Literal(str(value)) if lexical else _oxigraph_literal(value)
            if self.exists(f"?s {NamedNode(predicate)} {term}"):
                return
            self.value(key, value, predicate, lexical=lexical)
        elif not lexical:
            self.literal(subject, predicate, value)
        else:
            self.name(key, str(value), predicate, self.types.get(str(subject)), lexical=True)


#: the most distinct values of one relation a written text is compared with
VALUE_CHOICES = 5000


def stored_values(kb: KnowledgeBase, predicate: str) -> list[Literal]:
    """The distinct text values ``predicate`` stores (at most :data:`VALUE_CHOICES`), read once per opened KB."""
    def build() -> list[Literal]:
        rows = kb.query(BuiltQuery.select(f"SELECT DISTINCT ?v WHERE {{ ?s {NamedNode(predicate)} ?v . "
                                          f"FILTER(isLiteral(?v)) }} LIMIT {VALUE_CHOICES}")).rows
        return [row[0] for row in rows if isinstance(row[0], Literal) and not literal_key(row[0])[3]]

    found: list[Literal] = kb.remember(("text2sparql-stored-values", predicate), build)
    return found


def closest_value(text: str, values: list[Literal]) -> Literal | None:
    """The stored value that reads as ``text`` (up to case), else the one closest to it within
    :data:`TYPO_CUTOFF` (rapidfuzz ratio); ``None`` when none is.

    >>> closest_value("france", [Literal("France"), Literal("Frankfurt")]).value
    'France'
    >>> closest_value("Joe Sharpe", [Literal("Joe Sharp")]).value, closest_value("Spain", [Literal("France")])
    ('Joe Sharp', None)
    """
    from rapidfuzz import fuzz, process

    wanted = text.casefold().strip()
    same = [v for v in values if v.value.casefold().strip() == wanted]
    if same:
        return same[0]
    best = process.extractOne(wanted, [v.value.casefold() for v in values], scorer=fuzz.ratio,
                              score_cutoff=TYPO_CUTOFF * 100)
    return values[best[2]] if best is not None else None


def _oxigraph_literal(value: Any) -> Literal:
    if getattr(value, "language", None):
        return Literal(str(value), language=value.language)
    if getattr(value, "datatype", None) is not None:
        return Literal(str(value), datatype=NamedNode(str(value.datatype)))
    return Literal(str(value))


def _stored_name(kb: KnowledgeBase, iri: str, predicates: list[str]) -> tuple[str, Literal] | None:
    """The first name ``iri`` has under ``predicates`` (in that order), as stored."""
    for predicate in predicates:
        rows = kb.query(BuiltQuery.select(f"SELECT ?l WHERE {{ {NamedNode(iri)} {NamedNode(predicate)} ?l . "
                                          "FILTER(isLiteral(?l)) } LIMIT 1")).rows
        if rows and isinstance(rows[0][0], Literal):
            return predicate, rows[0][0]
    return None


def ground(kb: KnowledgeBase, query: ReadQuery, *, embedder: Embedder | None = None,
           lookup: NodeLookup | None = None) -> Grounding:
    """Link the constants of ``query`` the KB does not hold (see the module docstring)."""
    from rdflib import URIRef, Variable

    from sparqlqa.remote.labels import lookup_for_kb

    grounder = _Grounder(kb, lookup or lookup_for_kb(kb), embedder)
    for s, p, o in query.patterns:
        if isinstance(s, Variable) and isinstance(p, URIRef) and str(p) in grounder.type_p and isinstance(o, URIRef):
            grounder.types.setdefault(str(s), str(o))
    for s, p, o in query.patterns:
        grounder.pattern(s, p, o)
    values = {iri for iri, rel in grounder.relations.items() if rel.kind == "literal"}
    binding = {str(o): (s, str(p)) for s, p, o in query.patterns
               if isinstance(o, Variable) and isinstance(p, URIRef) and str(p) in values}
    binding.update({str(o): (s, str(p)) for s, p, o in query.patterns
                    if isinstance(o, Variable) and isinstance(p, URIRef) and str(p) in grounder.names})
    for variable, value, lexical in query.compared:
        grounder.compared(variable, value, lexical, binding)
    return grounder.result


def unmatched(kb: KnowledgeBase, query: ReadQuery, grounding: Grounding, *, limit: int = 3) -> list[str]:
    """The query's triple patterns (after the substitutions) that match no triple of the KB on their own,
    written as they ran: what the repair prompt points at when the query returned no rows."""
    from rdflib import URIRef, Variable

    found: list[str] = []
    for pattern in dict.fromkeys(query.patterns):
        if not all(isinstance(term, (URIRef, Variable)) or hasattr(term, "language") for term in pattern):
            continue  # a property path or a blank node: not checked on its own
        text = " ".join(written_term(term, grounding) for term in pattern)
        if not kb.query(f"ASK {{ {text} }}").boolean:
            found.append(text)
        if len(found) >= limit:
            break
    return found


def written_term(term: Any, grounding: Grounding) -> str:
    """A pattern's term as SPARQL, built from terms (the substitution where there is one)."""
    from rdflib import URIRef, Variable

    if isinstance(term, Variable):
        return f"?{term}"
    key = iri_key(str(term)) if isinstance(term, URIRef) else literal_key(term)
    replaced = grounding.replacements.get(key)
    if replaced is not None:
        return str(replaced)
    return str(NamedNode(str(term)) if isinstance(term, URIRef) else _oxigraph_literal(term))
