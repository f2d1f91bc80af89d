"""Store profiles as data files: how a store names things (labels, aliases, text, types).

Built-in profiles live in ``sparqlqa/data/profiles/{wikidata,freebase,generic}.toml``;
a user copies one, edits it and passes its path, or drops it in
``$SPARQLQA_HOME/profiles/NAME.toml`` to use it by name.

A profile file (TOML)::

    name = "wikidata"
    language = "en"                      # label language; plain literals always match too
    name_search = "exact"                # "exact" | "bif:contains" (Virtuoso) | "mwapi" (WDQS)
    search_limit = 50
    [prefixes]
    wd = "http://www.wikidata.org/entity/"
    [predicates]
    label = ["rdfs:label"]               # the first is the display label
    alias = ["skos:altLabel"]
    text = ["schema:description"]
    type = "wdt:P31"
    relation_entity = "wikibase:directClaim"   # optional: property entity -> relation IRI
    relation_prefixes = ["wdt:"]         # optional: only predicates under these are relations
    exclude = ["schema:version"]         # never relations
    exclude_types = ["wikibase:Item"]    # never node types
    allow_service = ["query.wikidata.org"]   # optional: hosts a query's SERVICE may call (HOST or HOST:PORT)
    [endpoint]                           # optional: how to talk to the endpoint
    timeout = 60                         # seconds one query may take, retries included (--timeout overrides)
    [relations]                          # optional: known relations (IRI = label)
    "wdt:P57" = "director"
    [types]                              # optional: known node types (IRI = label)
    "wd:Q5" = "human"

>>> profile = load_profile("wikidata")
>>> profile.type_predicate
'http://www.wikidata.org/prop/direct/P31'
>>> profile.relations["http://www.wikidata.org/prop/direct/P57"]
'director'
"""

from __future__ import annotations

__all__ = ["NAME_SEARCHES", "builtin_profile_names", "expand", "list_profiles", "load_profile",
           "parse_profile", "profile_file"]

import sys
from importlib import resources
from pathlib import Path
from typing import Any

from sparqlqa.errors import ConfigError, UnknownNameError
from sparqlqa.kb.profile import Profile
from sparqlqa.kb.vocab import PREFIXES
from sparqlqa.paths import sparqlqa_home

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: the engine name searches a profile may ask for
NAME_SEARCHES = ("exact", "bif:contains", "mwapi")


def builtin_profile_names() -> list[str]:
    """Names of the profiles shipped with sparqlqa."""
    folder = resources.files("sparqlqa") / "data" / "profiles"
    return sorted(p.name[: -len(".toml")] for p in folder.iterdir() if p.name.endswith(".toml"))


def _user_dir() -> Path:
    return sparqlqa_home() / "profiles"


def list_profiles() -> list[str]:
    """Every profile name usable with ``--profile NAME`` (built-in and user)."""
    users = _user_dir()
    mine = [p.stem for p in users.glob("*.toml")] if users.is_dir() else []
    return sorted({*builtin_profile_names(), *mine})


def profile_file(name_or_path: str | Path) -> Path:
    """The file of a profile: a path as given, ``$SPARQLQA_HOME/profiles/NAME.toml``, or built-in."""
    text = str(name_or_path)
    candidate = Path(text).expanduser()
    if isinstance(name_or_path, Path) or "/" in text or text.endswith(".toml") or candidate.is_file():
        if not candidate.is_file():
            raise ConfigError(f"no profile file at {candidate}",
                              hint="pass a profile name (" + ", ".join(list_profiles()) + ") or a .toml path")
        return candidate
    user = _user_dir() / f"{text}.toml"
    if user.is_file():
        return user
    builtin = resources.files("sparqlqa") / "data" / "profiles" / f"{text}.toml"
    if builtin.is_file():
        return Path(str(builtin))
    raise UnknownNameError("profile", text, list_profiles())


def load_profile(name_or_path: str | Path | Profile) -> Profile:
    """A :class:`Profile` by name (built-in or user) or from a TOML file path."""
    if isinstance(name_or_path, Profile):
        return name_or_path
    path = profile_file(name_or_path)
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read profile {path}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"profile {path} is not valid TOML: {exc}", hint="fix the file") from exc
    return parse_profile(data, source=str(path))


def expand(name: str, prefixes: dict[str, str], *, source: str = "profile") -> str:
    """A prefixed name (``wdt:P31``), ``<IRI>`` or full IRI → the full IRI (rdf, rdfs, owl, xsd, skos,
    schema and sqa are always known).

    >>> expand("rdfs:label", {})
    'http://www.w3.org/2000/01/rdf-schema#label'
    >>> expand("<http://e/x>", {})
    'http://e/x'
    """
    text = name.strip()
    if text.startswith("<") and text.endswith(">"):
        return text[1:-1]
    if "://" in text or text.startswith("urn:"):
        return text
    prefix, colon, local = text.partition(":")
    known = {**PREFIXES, **prefixes}
    if colon and prefix in known:
        return known[prefix] + local
    raise ConfigError(f"{source}: cannot expand {name!r}",
                      hint="use a full IRI or declare its prefix under [prefixes]")


def _names(value: Any, key: str, prefixes: dict[str, str], source: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{source}: {key} must be a name or a list of names")
    return tuple(expand(v, prefixes, source=source) for v in value)


def _labels(table: Any, key: str, prefixes: dict[str, str], source: str) -> dict[str, str]:
    if table is None:
        return {}
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise ConfigError(f"{source}: [{key}] must map names to labels (\"wdt:P57\" = \"director\")")
    return {expand(k, prefixes, source=source): v for k, v in table.items()}


def _options(data: dict[str, Any], source: str) -> dict[str, Any]:
    """The top-level scalar settings, checked."""
    search = data.get("name_search", "exact")
    if search not in NAME_SEARCHES:
        raise ConfigError(f"{source}: unknown name_search {search!r}", hint="use one of: " + ", ".join(NAME_SEARCHES))
    limit = data.get("search_limit", 50)
    if not isinstance(limit, int) or not 1 <= limit <= 10_000:
        raise ConfigError(f"{source}: search_limit must be an integer from 1 to 10000")
    language = data.get("language")
    if language is not None and not isinstance(language, str):
        raise ConfigError(f"{source}: language must be a language tag such as \"en\"")
    return {"name": str(data.get("name") or Path(source).stem), "description": str(data.get("description", "")),
            "language": language or None, "name_search": search, "search_limit": limit}


def parse_profile(data: dict[str, Any], *, source: str = "profile") -> Profile:
    """Build a :class:`Profile` from the parsed TOML of a profile file."""
    declared = data.get("prefixes") or {}
    if not isinstance(declared, dict):
        raise ConfigError(f"{source}: [prefixes] must map prefixes to IRIs")
    prefixes = {**PREFIXES, **{str(k): str(v) for k, v in declared.items()}}
    predicates = data.get("predicates") or {}
    if not predicates.get("label") or not isinstance(predicates.get("type", ""), str):
        raise ConfigError(f"{source}: [predicates] needs label = [...] and type = \"...\"")
    entity = predicates.get("relation_entity")
    return Profile(
        **_options(data, source),
        label_predicates=_names(predicates["label"], "label", prefixes, source),
        alias_predicates=_names(predicates.get("alias", []), "alias", prefixes, source),
        text_predicates=_names(predicates.get("text", []), "text", prefixes, source),
        type_predicate=expand(predicates.get("type", "rdf:type"), prefixes, source=source),
        prefixes=dict(declared),
        relations=_labels(data.get("relations"), "relations", prefixes, source),
        types=_labels(data.get("types"), "types", prefixes, source),
        exclude_predicates=_names(predicates.get("exclude", []), "exclude", prefixes, source),
        exclude_types=_names(predicates.get("exclude_types", []), "exclude_types", prefixes, source),
        relation_entity_predicate=expand(entity, prefixes, source=source) if entity else None,
        relation_prefixes=_names(predicates.get("relation_prefixes", []), "relation_prefixes", prefixes, source),
        allow_service=_hosts(data.get("allow_service", []), source),
        endpoint_timeout=_endpoint_timeout(data.get("endpoint"), source),
    )


#: the settings an ``[endpoint]`` table may hold
ENDPOINT_SETTINGS = ("timeout",)


def _endpoint_timeout(table: Any, source: str) -> float | None:
    """``[endpoint] timeout``: seconds per endpoint query (``None`` when not set), checked."""
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: [endpoint] must be a table", hint="[endpoint]\ntimeout = 60")
    unknown = sorted(set(table) - set(ENDPOINT_SETTINGS))
    if unknown:
        raise ConfigError(f"{source}: unknown [endpoint] setting(s): {', '.join(unknown)}",
                          hint="known: " + ", ".join(ENDPOINT_SETTINGS))
    value = table.get("timeout")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ConfigError(f"{source}: [endpoint] timeout must be a positive number of seconds, not {value!r}",
                          hint="[endpoint]\ntimeout = 60")
    return float(value)


def _hosts(value: Any, source: str) -> tuple[str, ...]:
    """``allow_service``: the hosts a SERVICE may call, checked (``HOST`` or ``HOST:PORT``)."""
    from sparqlqa.query.service_guard import allowance

    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{source}: allow_service must be a list of host names", hint='allow_service = ["host"]')
    return tuple(sorted(allowance(value, source=f"{source}: allow_service")))
