"""Remote SPARQL endpoints as knowledge bases: store, profiles, sampled schema, name lookup.

* :mod:`sparqlqa.remote.endpoint`: :class:`EndpointStore`, the ``"endpoint"`` store kind (one deadline per
  query, retries included; :func:`~sparqlqa.remote.endpoint.timeout_override` for a block), over
  :mod:`sparqlqa.net` (the one HTTP transport and retry loop);
* :mod:`sparqlqa.remote.results`: SPARQL JSON / boolean / RDF answers → results, malformed ones described;
* :mod:`sparqlqa.remote.profiles`: :func:`load_profile` (``wikidata``, ``freebase``, ``generic`` or a path);
* :mod:`sparqlqa.remote.schema_sampling`: :func:`sample_schema`, bounded queries only;
* :mod:`sparqlqa.remote.labels`: :class:`RemoteLabelLookup`, name → node queries for linking;
* :mod:`sparqlqa.remote.remote_kb`: :func:`add_remote_kb`, a KB whose store is an endpoint.

Names are imported lazily so ``import sparqlqa.remote`` stays cheap.
"""

from __future__ import annotations

from typing import Any

from sparqlqa.registry import lazy_attribute

_EXPORTS = {
    "EndpointStore": "sparqlqa.remote.endpoint",
    "EndpointConfig": "sparqlqa.remote.endpoint",
    "timeout_override": "sparqlqa.remote.endpoint",
    "load_profile": "sparqlqa.remote.profiles",
    "list_profiles": "sparqlqa.remote.profiles",
    "sample_schema": "sparqlqa.remote.schema_sampling",
    "RemoteLabelLookup": "sparqlqa.remote.labels",
    "lookup_for_kb": "sparqlqa.remote.labels",
    "add_remote_kb": "sparqlqa.remote.remote_kb",
    "open_endpoint": "sparqlqa.remote.remote_kb",
    "is_remote": "sparqlqa.remote.remote_kb",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _EXPORTS, name)
