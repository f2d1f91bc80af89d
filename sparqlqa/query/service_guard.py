r"""Refuse SPARQL ``SERVICE`` calls to hosts nobody allowed (no server-side request forgery).

Oxigraph runs ``SERVICE <http://host/...> { ... }`` by fetching that URL, and pyoxigraph 0.5
has no option to turn federation off (``Store.query`` takes no service handler), so every read
query is checked here before it runs (:meth:`sparqlqa.kb.store.Store.query` calls
:func:`check_service`).  The SERVICE calls come from the query's one reading by a SPARQL 1.1
parser (:mod:`sparqlqa.query.sparql_reading`, which refuses what it cannot read with certainty), in
every position: subqueries, OPTIONAL, UNION, GRAPH, MINUS, EXISTS in a FILTER or BIND.  A SERVICE to
a host missing from the allowance raises :class:`~sparqlqa.errors.ServiceRefused`; ``SERVICE ?var``
is always refused (its host is known only while the query runs), and so is an endpoint whose IRI
needs the query's BASE to resolve or whose prefix is not declared (write the IRI in full).

>>> from sparqlqa.query.sparql_reading import read_query
>>> check_service(read_query("SELECT * { SERVICE <http://ex.org:8890/sparql> { ?s ?p ?o } }"), {"ex.org"})
>>> check_service(read_query("ASK { SERVICE <http://169.254.169.254/x> { ?s ?p ?o } }"), set())
Traceback (most recent call last):
...
sparqlqa.errors.ServiceRefused: refused to run SERVICE <http://169.254.169.254/x>: host 169.254.169.254 is not allowed
"""

from __future__ import annotations

__all__ = ["allowance", "check_service", "is_allowed"]

import re
from collections.abc import Collection, Iterable
from urllib.parse import urlsplit

from sparqlqa.errors import ConfigError, ServiceRefused
from sparqlqa.query.sparql_reading import QueryReading, ServiceCall

# -- which hosts may be called ------------------------------------------------------------------

_HOST = re.compile(r"(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.\-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::(?P<port>[0-9]{1,5}))?")


def _allowed_host(entry: str, *, source: str = "--allow-service") -> str:
    """``entry`` (``HOST`` or ``HOST:PORT``) as stored in an allowance: lower case, checked.

    >>> _allowed_host("Query.Wikidata.org"), _allowed_host("127.0.0.1:8890"), _allowed_host("[::1]:3030")
    ('query.wikidata.org', '127.0.0.1:8890', '[::1]:3030')
    """
    text = entry.strip()
    if not _HOST.fullmatch(text):
        shown = urlsplit(text).netloc if "://" in text else ""
        raise ConfigError(f"{source}: {entry!r} is not a host name (HOST or HOST:PORT)",
                          hint=f"give the endpoint's host, e.g. {shown or 'query.wikidata.org'}, not a URL")
    return text.lower()


def allowance(entries: Iterable[str], *, source: str = "--allow-service") -> frozenset[str]:
    """The checked hosts of ``entries`` (see :func:`_allowed_host`)."""
    return frozenset(_allowed_host(entry, source=source) for entry in entries)


def _endpoint_host(iri: str) -> tuple[str, int] | None:
    """``(host, port)`` of an http(s) endpoint IRI; ``None`` for another scheme, user info or an odd host.

    >>> _endpoint_host("https://Query.Wikidata.org/sparql"), _endpoint_host("http://u@evil.org/")
    (('query.wikidata.org', 443), None)
    """
    from sparqlqa.net.transport import DEFAULT_PORTS  # only where a SERVICE is: an ask without one never loads net

    parts = urlsplit(iri)
    scheme = parts.scheme.lower()
    match = _HOST.fullmatch(parts.netloc)
    if scheme not in DEFAULT_PORTS or match is None:
        return None
    port = int(match["port"]) if match["port"] else DEFAULT_PORTS[scheme]
    return match["host"].lower(), port


def is_allowed(iri: str | None, allowed: Collection[str]) -> bool:
    """Whether SERVICE may call ``iri``: its host is in ``allowed`` (with its port, when that entry has one)."""
    where = _endpoint_host(iri) if iri else None
    if where is None:
        return False
    host, port = where
    return host in allowed or f"{host}:{port}" in allowed


def check_service(reading: QueryReading, allowed: Collection[str] = (), *,
                  engine_services: Collection[str] = ()) -> None:
    """:class:`ServiceRefused` when the query ``reading`` calls a SERVICE whose host is not in ``allowed``.

    ``engine_services``: IRIs of services the remote engine runs itself (Wikidata's
    ``wikibase:mwapi``), exempt by their exact IRI; only for queries sparqlqa builds (see
    :meth:`sparqlqa.kb.store.Store.query`), never for a user's query.
    """
    for call in reading.services:
        if is_allowed(call.iri, allowed) or (call.iri is not None and call.iri in engine_services):
            continue
        _refuse(call)


def _refuse(call: ServiceCall) -> None:
    from sparqlqa.net.transport import DEFAULT_PORTS  # only where a SERVICE is: an ask without one never loads net

    if call.written.startswith(("?", "$")):
        raise ServiceRefused(call.written, None, f"its endpoint is the variable {call.written}, whose host "
                             "cannot be checked before the query runs",
                             hint="write the endpoint's IRI in the query (SERVICE <http://host/sparql>) "
                             "and allow its host (--allow-service HOST)")
    host = _endpoint_host(call.iri) if call.iri else None
    if call.iri is None or host is None:
        raise ServiceRefused(call.written, None, "cannot check its host: only http(s) endpoints with a plain "
                             "host name, written in full (no BASE) or with a declared prefix, may be allowed",
                             hint="write SERVICE <http://host/path> { ... } with the endpoint's whole IRI "
                             "and allow its host (--allow-service HOST)")
    name, port = host
    shown = name if port == DEFAULT_PORTS[urlsplit(call.iri).scheme.lower()] else f"{name}:{port}"
    raise ServiceRefused(f"<{call.iri}>", shown, f"host {shown} is not allowed")
