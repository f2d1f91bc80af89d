"""Store profiles as TOML data files: built-ins, user copies, errors, and local dumps ingested with one."""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path

import pytest

from sparqlqa.errors import ConfigError, UnknownNameError
from sparqlqa.kb.profile import Profile
from sparqlqa.remote.profiles import builtin_profile_names, expand, list_profiles, load_profile, profile_file

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
WD = "http://www.wikidata.org/"
NS = "http://rdf.freebase.com/ns/"


def test_builtin_profiles_say_how_each_store_names_things() -> None:
    assert builtin_profile_names() == ["freebase", "generic", "wikidata"]
    wikidata, freebase, generic = (load_profile(n) for n in ("wikidata", "freebase", "generic"))
    assert wikidata.label_predicates == ("http://www.w3.org/2000/01/rdf-schema#label",)
    assert wikidata.alias_predicates == ("http://www.w3.org/2004/02/skos/core#altLabel",)
    assert wikidata.text_predicates == ("http://schema.org/description",)
    assert wikidata.type_predicate == f"{WD}prop/direct/P31" and wikidata.language == "en"
    assert wikidata.relation_entity_predicate == "http://wikiba.se/ontology#directClaim"
    assert wikidata.relation_prefixes == (f"{WD}prop/direct/",)
    assert freebase.label_predicates == (f"{NS}type.object.name",)
    assert freebase.text_predicates == (f"{NS}common.topic.description",)
    assert freebase.type_predicate == f"{NS}type.object.type"
    assert freebase.name_search == "bif:contains" and f"{NS}type.type" in freebase.exclude_types
    assert freebase.relations[f"{NS}film.film.directed_by"] == "directed by"
    assert generic.type_predicate == "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
    assert generic.name_search == "exact"


def test_profile_round_trips_through_the_manifest_dict() -> None:
    profile = load_profile("freebase")
    again = Profile.from_dict(profile.to_dict())
    assert again.label_predicates == profile.label_predicates and again.relations == profile.relations
    assert tuple(again.exclude_types) == profile.exclude_types
    assert load_profile(profile) is profile


def test_a_copied_and_edited_profile_loads_by_path_and_by_name(tmp_path: Path, sparqlqa_home: Path) -> None:
    text = profile_file("generic").read_text()
    edited = text.replace('name = "generic"', 'name = "mine"').replace('language = "en"', 'language = "de"')
    path = tmp_path / "mine.toml"
    path.write_text(edited.replace("[prefixes]\n", '[prefixes]\nex = "http://example.org/"\n')
                    .replace("[relations]\n", '[relations]\n"ex:knows" = "kennt"\n'))
    mine = load_profile(str(path))
    assert mine.name == "mine" and mine.language == "de"
    assert mine.relations == {"http://example.org/knows": "kennt"}
    user_dir = sparqlqa_home / "profiles"
    user_dir.mkdir(parents=True)
    shutil.copy(path, user_dir / "mine.toml")
    assert load_profile("mine").relations == mine.relations
    assert "mine" in list_profiles()


@pytest.mark.parametrize(("content", "fragment"), [
    ("name = 'x'\n[predicates]\ntype = 'rdf:type'\n", "needs label"),
    ("[predicates]\nlabel = ['nope:label']\n", "cannot expand 'nope:label'"),
    ("name_search = 'regex'\n[predicates]\nlabel = ['rdfs:label']\n", "unknown name_search"),
    ("search_limit = 0\n[predicates]\nlabel = ['rdfs:label']\n", "search_limit"),
    ("[predicates\n", "not valid TOML"),
    ("[predicates]\nlabel = ['rdfs:label']\n[relations]\n'rdfs:seeAlso' = 3\n", "must map names to labels"),
])
def test_bad_profiles_are_clear_errors(tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(content)
    with pytest.raises(ConfigError, match=fragment):
        load_profile(path)


def test_unknown_profile_names_list_the_choices(tmp_path: Path) -> None:
    with pytest.raises(UnknownNameError) as caught:
        load_profile("dbpedia")
    assert "wikidata" in (caught.value.hint or "")
    with pytest.raises(ConfigError, match="no profile file"):
        load_profile(str(tmp_path / "missing.toml"))


def test_expand_names() -> None:
    assert expand("wdt:P31", {"wdt": f"{WD}prop/direct/"}) == f"{WD}prop/direct/P31"
    assert expand("<urn:x>", {}) == "urn:x" and expand("https://e/x", {}) == "https://e/x"


def test_local_wikidata_dump_ingested_with_the_profile_records_it(tmp_path: Path) -> None:
    from sparqlqa.ingest import ingest
    from sparqlqa.kb.knowledge_base import open_kb

    dump = tmp_path / "wikidata-subset.nt.gz"
    dump.write_bytes(gzip.compress((FIXTURES / "wikidata_sample.nt").read_bytes()))
    ingest([dump], kb="wd-local", profile=load_profile("wikidata"))
    kb = open_kb("wd-local")
    assert kb.profile.name == "wikidata" and kb.profile.type_predicate == f"{WD}prop/direct/P31"
    assert kb.manifest.profile["relations"][f"{WD}prop/direct/P57"] == "director"
    films = {t.iri for t in kb.schema.types}
    assert f"{WD}entity/Q11424" in films
    count = kb.query(f"SELECT (COUNT(*) AS ?n) WHERE {{ ?s <{WD}prop/direct/P57> ?o }}").rows[0][0]
    assert count is not None and int(count.value) == 6


def test_endpoint_timeout_setting(tmp_path: Path) -> None:
    base = profile_file("generic").read_text("utf-8")
    path = tmp_path / "mine.toml"
    path.write_text(base + "\n[endpoint]\ntimeout = 7.5\n")
    assert load_profile(path).endpoint_timeout == 7.5
    assert load_profile("generic").endpoint_timeout is None
    assert Profile.from_dict(load_profile(path).to_dict()).endpoint_timeout == 7.5  # kept in a KB's manifest
    for table, fragment in [("timeout = 0", "positive number"), ("timeout = \"60\"", "positive number"),
                            ("timeout = true", "positive number"), ("retries = 3", "unknown [endpoint] setting")]:
        path.write_text(base + f"\n[endpoint]\n{table}\n")
        with pytest.raises(ConfigError, match=re.escape(fragment)):
            load_profile(path)
