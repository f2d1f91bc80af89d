"""Knowledge bases whose store is a remote SPARQL endpoint.

:func:`add_remote_kb` writes a KB generation whose manifest says how to reach the
endpoint (store kind ``"endpoint"``), which profile names its nodes, and the schema
sampled with bounded queries.  It uses the same lock and atomic ``CURRENT`` swap as
``sparqlqa ingest``: a failure (endpoint down, bad profile) leaves any previous KB of
that name exactly as it was.  Questions then run against the endpoint, unchanged.

:func:`open_endpoint` is the throw-away variant for ``ask --endpoint URL``: an
in-memory KB whose sampled schema is cached under ``$SPARQLQA_HOME/cache/endpoints``.
"""

from __future__ import annotations

__all__ = ["add_remote_kb", "endpoint_config", "is_remote", "open_endpoint", "refresh_schema"]

import hashlib
import json
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sparqlqa.errors import ConfigError, EndpointError, KBExists
from sparqlqa.kb.kb_names import validate_kb_name
from sparqlqa.kb.knowledge_base import KnowledgeBase, Manifest, current_generation, kb_root, open_kb, write_generation
from sparqlqa.kb.profile import Profile
from sparqlqa.kb.schema import Schema
from sparqlqa.paths import atomic_write_json, sparqlqa_home
from sparqlqa.query.built_query import BuiltQuery
from sparqlqa.remote.endpoint import EndpointConfig, EndpointStore
from sparqlqa.remote.profiles import load_profile
from sparqlqa.remote.schema_sampling import SampleOptions, sample_schema
from sparqlqa.version import __version__


def is_remote(kb: KnowledgeBase) -> bool:
    """Whether ``kb`` answers from a remote endpoint (:attr:`KnowledgeBase.is_remote`)."""
    return kb.is_remote


def endpoint_config(endpoint: str, options: dict[str, Any], profile: Profile | None = None) -> EndpointConfig:
    """An :class:`EndpointConfig` from a URL and ``kbs add`` options (``None`` values ignored); the
    timeout, when not given, is the profile's ``[endpoint] timeout`` (if it sets one)."""
    given = {k: v for k, v in options.items() if v is not None}
    if "timeout" not in given and profile is not None and profile.endpoint_timeout is not None:
        given["timeout"] = profile.endpoint_timeout
    if "default_graphs" in given:
        given["default_graphs"] = list(given["default_graphs"])
    return EndpointConfig.from_dict({"url": endpoint, **given})


def _store_entry(config: EndpointConfig, options: dict[str, Any]) -> dict[str, Any]:
    """The manifest's ``store`` entry; the default User-Agent is left out so it follows upgrades."""
    entry = config.to_dict()
    if options.get("user_agent") is None:
        entry.pop("user_agent")
    return entry


def _check_reachable(store: EndpointStore) -> None:
    if not store.query(BuiltQuery.ask("ASK { ?s ?p ?o }")).boolean:
        raise EndpointError(store.url, "the endpoint answers but holds no triples",
                            hint="check the URL and default_graphs (the data may sit in a named graph)")


def _manifest(name: str, generation: str, config: dict[str, Any], profile: Profile, schema: Schema,
              sample: SampleOptions, requests: int) -> Manifest:
    return Manifest(
        name=name, generation=generation, store=config, base_iri="",
        sources=[{"endpoint": config["url"], "default_graphs": config.get("default_graphs", [])}],
        counts={"types": len(schema.types), "relations": len(schema.relations), "sampling_queries": requests},
        schema=schema.to_dict(), profile=profile.to_dict(),
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"), sparqlqa_version=__version__,
        extra={"schema_source": "sampled", "sample": asdict(sample)},
    )


def _write_generation(name: str, replace: bool, manifest_for: Any) -> KnowledgeBase:
    """Write a generation whose manifest is ``manifest_for(generation_id)``, atomically."""

    def build(generation: Path) -> None:
        manifest: Manifest = manifest_for(generation.name)
        (generation / "artifacts").mkdir()
        atomic_write_json(generation / "artifacts" / "schema-sample.json",
                          {"schema": manifest.schema, "sample": manifest.extra.get("sample", {})})
        manifest.write(generation)

    return write_generation(name, build, replace=replace)


def add_remote_kb(name: str, endpoint: str, profile: str | Path | Profile = "generic", *, replace: bool = False,
                  sample: SampleOptions | None = None, **options: Any) -> KnowledgeBase:
    """Register the SPARQL endpoint ``endpoint`` as the KB ``name`` (schema sampled, never scanned).

    ``profile``: ``wikidata``, ``freebase``, ``generic``, a user profile name or a TOML path.
    ``options``: :class:`~sparqlqa.remote.endpoint.EndpointConfig` fields (``method``,
    ``timeout``, ``max_retries``, ``backoff``, ``user_agent``, ``max_rows``,
    ``default_graphs``, ``min_interval``, ...); ``None`` values mean the default.
    Raises :class:`~sparqlqa.errors.KBExists` unless ``replace``, and
    :class:`~sparqlqa.errors.EndpointError` when the endpoint cannot be queried.
    """
    validate_kb_name(name)
    chosen = load_profile(profile)
    config = endpoint_config(endpoint, options, chosen)
    entry = _store_entry(config, options)
    opts = sample or SampleOptions()
    if current_generation(kb_root(name)) is not None and not replace:
        raise KBExists(name)  # before any request leaves

    def build(generation: str) -> Manifest:
        store = EndpointStore(config)
        _check_reachable(store)
        schema = sample_schema(store, chosen, opts)
        return _manifest(name, generation, entry, chosen, schema, opts, store.requests_sent)

    return _write_generation(name, replace, build)


def refresh_schema(name: str, sample: SampleOptions | None = None) -> KnowledgeBase:
    """Sample the schema of the remote KB ``name`` again, into a new generation (atomically)."""
    kb = open_kb(name)
    if kb.endpoint_url() is None:
        raise ConfigError(f"knowledge base {name!r} is not a remote KB",
                          hint="re-ingest local KBs with 'sparqlqa ingest ... --replace'")
    entry, profile = dict(kb.manifest.store), kb.profile
    opts = sample or SampleOptions(**kb.manifest.extra.get("sample", {}))

    def build(generation: str) -> Manifest:
        store = EndpointStore.from_config(entry, None)
        schema = sample_schema(store, profile, opts)
        return _manifest(name, generation, entry, profile, schema, opts, store.requests_sent)

    return _write_generation(name, True, build)


def _cache_path(config: EndpointConfig, profile: Profile, sample: SampleOptions) -> Path:
    key = json.dumps([config.url, config.default_graphs, profile.to_dict(), asdict(sample)], sort_keys=True)
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]
    return sparqlqa_home() / "cache" / "endpoints" / f"{digest}.json"


def open_endpoint(endpoint: str, profile: str | Path | Profile = "generic", *, name: str = "endpoint",
                  sample: SampleOptions | None = None, refresh: bool = False, **options: Any) -> KnowledgeBase:
    """An unsaved KB over ``endpoint`` (for ``ask --endpoint URL``); its sampled schema is cached on disk."""
    chosen = load_profile(profile)
    config = endpoint_config(endpoint, options, chosen)
    opts = sample or SampleOptions()
    store = EndpointStore(config)
    cache = _cache_path(config, chosen, opts)
    schema = None
    if cache.is_file() and not refresh:
        try:
            schema = Schema.from_dict(json.loads(cache.read_text("utf-8")))
        except (OSError, ValueError, TypeError):
            schema = None
    if schema is None:
        _check_reachable(store)
        schema = sample_schema(store, chosen, opts)
        atomic_write_json(cache, schema.to_dict())
    kb = KnowledgeBase.in_memory(name, store, schema=schema, profile=chosen)
    kb.manifest.store = _store_entry(config, options)
    return kb
