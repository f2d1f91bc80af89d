"""Tell a SPARQL read query from an update before anything is sent.

The decision is the query's one reading by a SPARQL 1.1 parser (:mod:`sparqlqa.query.sparql_reading`):
an update keyword inside a string or a comment cannot trip it, one outside cannot slip through, and
a text that parser cannot read with certainty is refused.

>>> query_form("PREFIX ex: <http://e/> SELECT * WHERE { ?s ?p 'INSERT DATA' }")
'SELECT'
>>> query_form("ASK { ?s ?p ?o }")
'ASK'
>>> query_form("DELETE WHERE { ?s ?p ?o }")
Traceback (most recent call last):
...
sparqlqa.errors.UpdateRefused: refused to send a SPARQL update (DELETE): sparqlqa only runs read queries
"""

from __future__ import annotations

__all__ = ["READ_FORMS", "projected_variables", "query_form"]

from sparqlqa.query.sparql_reading import READ_FORMS, read_query


def query_form(query: str) -> str:
    """``SELECT``, ``ASK``, ``CONSTRUCT`` or ``DESCRIBE``; :class:`~sparqlqa.errors.UpdateRefused` for updates."""
    return read_query(query).form


def projected_variables(query: str) -> list[str] | None:
    """The variable names a SELECT projects, in order; ``None`` for ``SELECT *`` or another form.

    >>> projected_variables("PREFIX e: <http://e/> SELECT DISTINCT ?s (COUNT(?o) AS ?n) WHERE { ?s ?p ?o }")
    ['s', 'n']
    >>> projected_variables("SELECT * { ?s ?p ?o }") is None
    True
    """
    variables = read_query(query).variables
    return None if variables is None else list(variables)
