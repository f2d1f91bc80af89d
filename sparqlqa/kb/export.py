"""A KB back out as RDF: quads streamed from the Oxigraph store into a file, never all in memory.

``sparqlqa export KB`` and :meth:`KnowledgeBase.to_rdflib` both read the store through
:func:`_export_quads`.  What ingest adds beside the user's files (sparqlqa's core vocabulary,
``--ontology`` files, a STaRK dataset's ontology) is listed, triple by triple, in the generation's
``added.nt`` when it is added; ``source_only`` leaves exactly those out (a triple a source file also
holds is kept).

>>> from pyoxigraph import Quad
>>> from sparqlqa.kb.store import OxigraphStore
>>> store = OxigraphStore.in_memory()
>>> store.oxstore.add(Quad(NamedNode("http://e/a"), NamedNode("http://e/p"), Literal("x")))
>>> import io
>>> out = io.BytesIO()
>>> write_rdf(store.oxstore, out, "turtle", prefixes={"e": "http://e/"}).triples
1
>>> print(out.getvalue().decode(), end="")
@prefix e: <http://e/> .
e:a e:p "x" .
"""

from __future__ import annotations

__all__ = ["ADDED_FILE", "EXPORT_FORMATS", "ExportReport", "export_prefixes", "ingest_additions", "oxigraph_of",
           "rdflib_graph", "rdflib_term", "write_rdf"]

from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad, RdfFormat, Triple, parse, serialize
from pyoxigraph import Store as OxStore

from sparqlqa.errors import ConfigError, KBError, UnknownNameError
from sparqlqa.kb.store import OxigraphStore, Store, Term
from sparqlqa.kb.vocab import PREFIXES, SQA_BASE, XSD_STRING
from sparqlqa.query.built_query import BuiltQuery

if TYPE_CHECKING:
    import rdflib

#: the file in a KB generation listing the triples ingest added beside the sources (N-Triples)
ADDED_FILE = "added.nt"
#: ``--format`` names of ``sparqlqa export``
EXPORT_FORMATS: dict[str, RdfFormat] = {
    "turtle": RdfFormat.TURTLE,
    "nt": RdfFormat.N_TRIPLES,
    "nq": RdfFormat.N_QUADS,
    "trig": RdfFormat.TRIG,
    "jsonld": RdfFormat.JSON_LD,
}
#: ``--graph default``: the default graph only (where ingest puts triples of N-Triples and Turtle files)
DEFAULT_GRAPH = "default"


class ExportSource(Protocol):
    """What export reads of a KB (a :class:`~sparqlqa.kb.knowledge_base.KnowledgeBase`)."""

    directory: Path | None

    @property
    def name(self) -> str: ...

    @property
    def store(self) -> Store: ...


@dataclass
class ExportReport:
    """What one export wrote."""

    triples: int
    format: str
    graph: str | None
    source_only: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _export_format(name: str) -> RdfFormat:
    try:
        return EXPORT_FORMATS[name.lower()]
    except KeyError:
        raise UnknownNameError("export format", name, list(EXPORT_FORMATS)) from None


def ingest_additions(kb: ExportSource) -> frozenset[Triple]:
    """The triples ingest added to ``kb`` beside its sources (none for an in-memory KB)."""
    if kb.directory is None:
        return frozenset()
    path = kb.directory / ADDED_FILE
    if not path.is_file():
        raise KBError(f"knowledge base {kb.name!r} was built before sparqlqa recorded what ingest adds, so "
                      "--source-only cannot tell the source's triples from ours",
                      hint=f"rebuild it with 'sparqlqa ingest FILE --kb {kb.name} --replace', or export "
                      "without --source-only")
    try:
        return frozenset(quad.triple for quad in parse(path=str(path), format=RdfFormat.N_TRIPLES))
    except (OSError, SyntaxError) as exc:
        raise KBError(f"cannot read {path}: {exc}", hint=f"rebuild the KB with 'sparqlqa ingest FILE --kb "
                      f"{kb.name} --replace'") from exc


def export_prefixes(own: dict[str, str], *, source_only: bool = False) -> dict[str, str]:
    """The KB's own prefixes, then the well-known ones whose name and IRI the KB does not use already.

    >>> export_prefixes({"dbo": "http://dbpedia.org/ontology/", "s": "http://schema.org/"})["dbo"]
    'http://dbpedia.org/ontology/'
    >>> "schema" in export_prefixes({"s": "http://schema.org/"})
    False
    """
    prefixes = dict(own)
    taken = set(own.values())
    for name, iri in PREFIXES.items():
        if name not in prefixes and iri not in taken and not (source_only and iri == SQA_BASE):
            prefixes[name] = iri
    return prefixes


def _graph_name(store: OxStore, graph: str | None) -> NamedNode | DefaultGraph | None:
    if graph is None:
        return None
    if graph == DEFAULT_GRAPH:
        return DefaultGraph()
    try:
        name = NamedNode(graph)
    except ValueError as exc:
        raise ConfigError(f"--graph {graph!r} is not an IRI: {exc}",
                          hint=f"give a graph's full IRI, or '{DEFAULT_GRAPH}' for the default graph") from None
    if not store.contains_named_graph(name):
        known = [g.value for g in store.named_graphs() if isinstance(g, NamedNode)][:10]
        raise ConfigError(f"the KB has no graph named <{graph}>",
                          hint="its named graphs: " + (", ".join(known) if known else
                                                       f"none (everything is in the '{DEFAULT_GRAPH}' graph)"))
    return name


def _export_quads(store: OxStore, *, graph: str | None = None,
                 skip: frozenset[Triple] = frozenset()) -> Iterator[Quad]:
    """The store's quads (of ``graph`` only when given), lazily; default-graph triples in ``skip`` left out."""
    subjects = frozenset(triple.subject for triple in skip)  # a cheap first test: few subjects have additions
    for quad in store.quads_for_pattern(None, None, None, _graph_name(store, graph)):
        if (subjects and quad.subject in subjects and isinstance(quad.graph_name, DefaultGraph)
                and quad.triple in skip):
            continue
        yield quad


class _Counted:
    """Counts what passes through (the serializer pulls the items one at a time)."""

    def __init__(self, items: Iterable[Any]) -> None:
        self.items, self.count = items, 0

    def __iter__(self) -> Iterator[Any]:
        for item in self.items:
            self.count += 1
            yield item


def write_rdf(store: OxStore, output: IO[bytes], fmt: str, *, graph: str | None = None,
              prefixes: dict[str, str] | None = None, skip: frozenset[Triple] = frozenset()) -> ExportReport:
    """Serialise the store's quads into ``output`` as they are read (memory stays flat whatever the size).

    A format without named graphs (Turtle, N-Triples) gets the triples of every graph merged,
    unless ``graph`` picks one.
    """
    syntax = _export_format(fmt)
    quads = _export_quads(store, graph=graph, skip=skip)
    items = _Counted(quads if syntax.supports_datasets else (quad.triple for quad in quads))
    serialize(items, output, syntax, prefixes=prefixes if syntax in (RdfFormat.TURTLE, RdfFormat.TRIG) else None)
    return ExportReport(triples=items.count, format=fmt.lower(), graph=graph, source_only=bool(skip))


def oxigraph_of(kb: ExportSource) -> OxStore:
    """The Oxigraph store of a local KB; a remote one cannot be exported from here."""
    store = kb.store
    if not isinstance(store, OxigraphStore):
        raise KBError(f"knowledge base {kb.name!r} is a remote endpoint ({store.describe()}): export reads a "
                      "local store", hint=f"run a CONSTRUCT query: sparqlqa sparql {kb.name} "
                      "'CONSTRUCT WHERE { ?s ?p ?o }' --format nt")
    return store.oxstore


def rdflib_term(term: Term) -> Any:
    """A pyoxigraph term as the equivalent rdflib term."""
    import rdflib

    if isinstance(term, NamedNode):
        return rdflib.URIRef(term.value)
    if isinstance(term, BlankNode):
        return rdflib.BNode(term.value)
    if isinstance(term, Literal):
        if term.language:
            return rdflib.Literal(term.value, lang=term.language)
        if term.datatype.value == XSD_STRING:  # RDF 1.1: a plain literal is an xsd:string; rdflib parses it untyped
            return rdflib.Literal(term.value)
        return rdflib.Literal(term.value, datatype=rdflib.URIRef(term.datatype.value))
    raise TypeError(f"rdflib has no equivalent of {term!r}")


def rdflib_graph(kb: ExportSource, *, source_only: bool = False,
                 prefixes: dict[str, str] | None = None) -> rdflib.Graph:
    """Every triple of ``kb`` (all graphs merged) in a new rdflib ``Graph``, its prefixes bound."""
    import rdflib

    graph = rdflib.Graph()
    for name, iri in (prefixes or {}).items():
        graph.bind(name, rdflib.URIRef(iri), replace=True)
    if isinstance(kb.store, OxigraphStore):
        skip = ingest_additions(kb) if source_only else frozenset()
        triples: Iterable[Triple] = (quad.triple for quad in _export_quads(kb.store.oxstore, skip=skip))
    else:  # a remote endpoint: one CONSTRUCT (ingest added nothing there)
        triples = kb.store.query(BuiltQuery.construct("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }")).triples
    for triple in triples:
        graph.add((rdflib_term(triple.subject), rdflib_term(triple.predicate), rdflib_term(triple.object)))
    return graph
