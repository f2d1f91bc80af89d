"""Answer keys: how a node or a value travels through the pipeline as one string.

Candidates, rankings, evidence and answers identify what they hold by a string
key.  A node's key is its IRI; a **value** (a literal: a date, a number, a
postal code) is keyed by its N-Triples form, which is also valid SPARQL; an
unnamed intermediate node (a blank node, e.g. an address record) by ``_:id``.
An IRI never starts with ``"`` or ``_:``, so the three never collide.

>>> from pyoxigraph import Literal, NamedNode
>>> from sparqlqa.kb.vocab import XSD
>>> key = term_key(Literal("1980-04-02", datatype=XSD.date))
>>> key
'"1980-04-02"^^<http://www.w3.org/2001/XMLSchema#date>'
>>> is_value_key(key), value_text(key), value_datatype(key)
(True, '1980-04-02', 'http://www.w3.org/2001/XMLSchema#date')
>>> term_from_key(key) == Literal("1980-04-02", datatype=XSD.date)
True
>>> term_key(NamedNode("http://x/a")), is_node_key("http://x/a")
('http://x/a', True)
"""

from __future__ import annotations

__all__ = ["is_blank_key", "is_node_key", "is_value_key", "node_keys", "term_from_key", "term_key",
           "value_datatype", "value_text"]

from functools import lru_cache
from typing import Any

from pyoxigraph import BlankNode, Literal, NamedNode, RdfFormat, parse

from sparqlqa.kb.vocab import TEXT_DATATYPES

#: datatypes every literal without one has (``value_datatype`` reports None for them)
_PLAIN = TEXT_DATATYPES


def term_key(term: Any) -> str | None:
    """The key of an RDF term (``None`` for anything else, e.g. an RDF-star triple)."""
    if isinstance(term, NamedNode):
        return term.value
    if isinstance(term, Literal):
        return str(term)
    if isinstance(term, BlankNode):
        return f"_:{term.value}"
    return None


def is_value_key(key: str) -> bool:
    """Whether ``key`` stands for a literal value."""
    return key.startswith('"')


def is_blank_key(key: str) -> bool:
    return key.startswith("_:")


def is_node_key(key: str) -> bool:
    """Whether ``key`` is an IRI (a node that can be named in SPARQL and looked up)."""
    return not is_value_key(key) and not is_blank_key(key)


def node_keys(keys: list[str]) -> list[str]:
    """The IRIs among ``keys`` (order kept)."""
    return [k for k in keys if is_node_key(k)]


@lru_cache(maxsize=4096)
def term_from_key(key: str) -> NamedNode | Literal | BlankNode:
    """The term a key stands for (raises ``ValueError`` for a malformed key)."""
    if is_blank_key(key):
        return BlankNode(key[2:])
    if not is_value_key(key):
        return NamedNode(key)
    try:
        quad = next(iter(parse(f"<urn:s> <urn:p> {key} .\n", format=RdfFormat.N_TRIPLES)))
    except (SyntaxError, StopIteration) as exc:
        raise ValueError(f"not a literal key: {key!r}") from exc
    literal = quad.object
    if not isinstance(literal, Literal):
        raise ValueError(f"not a literal key: {key!r}")
    return literal


def value_text(key: str) -> str:
    """The lexical form of a value key (``"1.5"^^xsd:decimal`` → ``1.5``)."""
    term = term_from_key(key)
    return term.value if isinstance(term, Literal) else key


def value_datatype(key: str) -> str | None:
    """The datatype IRI of a value key, ``None`` for plain and language-tagged strings."""
    term = term_from_key(key)
    if not isinstance(term, Literal) or term.datatype.value in _PLAIN:
        return None
    return term.datatype.value
