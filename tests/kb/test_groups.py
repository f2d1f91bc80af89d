"""KB groups (issue 27): two KBs asked as one — joins across a shared IRI and across ``owl:sameAs``, the
saved ``.rq`` runs on rdflib over the merged files with the same rows, schema tags, provenance, saved
groups, the broken-group message, the CLI and the errors."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
import rdflib

from sparqlqa.cli import main
from sparqlqa.errors import GroupError, GroupMemberNotFound, InvalidKBName
from sparqlqa.ingest import ingest
from sparqlqa.kb.group import GroupKB
from sparqlqa.kb.groups import groups_using, load_groups, remove_group, save_group
from sparqlqa.kb.kb_names import canonical_kb_name
from sparqlqa.kb.knowledge_base import KnowledgeBase, open_kb
from sparqlqa.paths import kbs_dir
from sparqlqa.stages.execute import Candidates, find_candidates
from sparqlqa.stages.linking import link_constants
from sparqlqa.stages.triplets import parse_arrow_triplets
from sparqlqa.strategies.ask import ask

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FILMS, PEOPLE = FIXTURES / "group_films.ttl", FIXTURES / "group_people.ttl"
EX = "http://example.org/"
LONDON = "Which films were directed by people born in London?"


@pytest.fixture
def halves() -> tuple[KnowledgeBase, KnowledgeBase]:
    return ingest([FILMS], kb="films"), ingest([PEOPLE], kb="people")


def _run(kb: KnowledgeBase, arrow: str) -> Candidates:
    triplets = parse_arrow_triplets(arrow, "q", kb.schema)
    return find_candidates(triplets, link_constants(triplets, kb), kb)


def _films_born_in(city: str) -> str:
    return f"film |?1| -> directed by -> person |?2|; person |?2| -> born in -> city '{city}'"


def test_a_group_joins_across_a_shared_iri(halves: object) -> None:
    with open_kb("films+people") as group:
        assert isinstance(group, GroupKB) and group.members == ["films", "people"]
        assert sorted(_run(group, _films_born_in("London")).iris(0)) == [f"{EX}Inception", f"{EX}Memento"]
    for half in ("films", "people"):  # neither half alone holds the path
        with open_kb(half) as kb:
            assert not _run(kb, _films_born_in("London")).iris(0)


def test_a_path_joins_through_owl_same_as_across_members(halves: object) -> None:
    """``people`` says where ``people:Denis`` was born, ``films`` what ``ex:director42`` directed; the two
    IRIs are one node (owl:sameAs in ``people``): the path joins through them, with the facts as stated."""
    with open_kb("films+people") as group:
        found = _run(group, _films_born_in("Bécancour"))
        assert sorted(found.iris(0)) == [f"{EX}Arrival", f"{EX}Dune"]
        evidence = found.items[0].evidence.triples
        assert (f"{EX}Arrival", f"{EX}directedBy", f"{EX}director42") in evidence
        assert ("http://people.example.org/Denis", f"{EX}bornIn", f"{EX}Becancour") in evidence
        assert group.provenance(evidence) == [["films"] if p.endswith("directedBy") else ["people"]
                                              for _, p, _ in evidence]


def test_a_group_joins_across_owl_same_as(halves: object) -> None:
    """The name and the ``sameAs`` link are in ``people``, the films' facts on the other IRI in ``films``."""
    arrow = "film |?1| -> directed by -> person 'Denis Villeneuve'"
    with open_kb("films+people") as group:
        found = _run(group, arrow)
        assert sorted(found.iris(0)) == [f"{EX}Arrival", f"{EX}Dune"]
        evidence = found.items[0].evidence.triples
        assert group.provenance(evidence) == [["films"]] * len(evidence)  # stated there on the alias IRI
    with open_kb("films") as films:
        assert not _run(films, arrow).iris(0)


def test_the_saved_query_runs_on_rdflib_over_the_merged_files_with_the_same_rows(halves: object,
                                                                                  tmp_path: Path) -> None:
    answer = ask("films+people", LONDON, strategy="offline", rerank="none")
    assert [item.label for item in answer.items if item.matched] == ["Inception", "Memento"]
    from sparqlqa.stages.audit import save_sparql

    saved = save_sparql(answer, tmp_path / "rq", stages=["sparql"])  # the answer's queries, not label lookups
    assert saved
    merged = rdflib.Graph()
    merged.parse(FILMS, format="turtle")
    merged.parse(PEOPLE, format="turtle")
    compared = 0
    with open_kb("films+people") as group:
        for path in saved:
            text = Path(path).read_text("utf-8")
            ours = {tuple(str(t.value) if t is not None else None for t in row) for row in group.query(text).rows}
            theirs = {tuple(str(t) if t is not None else None for t in row) for row in merged.query(text)}
            assert ours == theirs
            compared += len(theirs)
    assert compared  # rows were compared, not two empty results


def test_the_group_gives_the_merged_kbs_answers(halves: object) -> None:
    ingest([FILMS, PEOPLE], kb="merged")
    for question in (LONDON, "Which films did people born in South Shields direct?", "Who directed Dune?"):
        group = ask("films+people", question, strategy="offline", rerank="none")
        merged = ask("merged", question, strategy="offline", rerank="none")
        assert [i.iri for i in group.items if i.matched] == [i.iri for i in merged.items if i.matched]
        assert group.items[0].iri == merged.items[0].iri


def test_schema_tags_each_relation_and_type_with_its_member(halves: object) -> None:
    from sparqlqa.stages.schema_prompt import schema_prompt

    with open_kb("films+people") as group:
        schema = group.schema
        assert schema.relation("directed by").kbs == ["films"]  # type: ignore[union-attr]
        assert schema.relation("born in").kbs == ["people"]  # type: ignore[union-attr]
        assert schema.type("city").kbs == ["people"]  # type: ignore[union-attr]
        prompt = schema_prompt(schema, LONDON)
    assert "directed by [in films]" in prompt and "born in [in people]" in prompt
    with open_kb("films") as single:  # a single KB's schema has no tags, in the prompt nor its JSON
        assert "[in " not in schema_prompt(single.schema, LONDON)
        assert all("kbs" not in rel for rel in single.schema.to_dict()["relations"])


def test_evidence_says_which_member_each_triple_came_from(halves: object) -> None:
    answer = ask("films+people", LONDON, strategy="offline", rerank="none")
    first = answer.items[0]
    kinds = dict(zip((p for _, p, _ in first.evidence_triples()), first.evidence_kbs or []))
    assert kinds == {f"{EX}directedBy": ["films"], f"{EX}bornIn": ["people"]}
    data = first.to_dict(1, answer.labels)
    assert data["evidence_kbs"] == first.evidence_kbs
    assert any(text.endswith("(in people)") for text in data["evidence_text"])
    with open_kb("films+people") as group:  # a triple both members state names both
        label = (f"{EX}Nolan", "http://www.w3.org/2000/01/rdf-schema#label", '"Christopher Nolan"')
        assert group.provenance([label, (f"{EX}Nolan", f"{EX}bornIn", f"{EX}Paris")]) == [["films", "people"], []]


def test_a_member_re_ingested_rebuilds_the_group(halves: object, tmp_path: Path) -> None:
    with open_kb("films+people") as group:
        before = group.manifest.generation
    extra = tmp_path / "more.ttl"
    extra.write_text(PEOPLE.read_text("utf-8") + '\nex:Paris a ex:City ; rdfs:label "Paris" .\n', "utf-8")
    ingest([extra], kb="people", replace=True)
    with open_kb("films+people") as group:
        assert group.manifest.generation != before
        assert group.schema.type("city").count == 4  # type: ignore[union-attr]


def test_saved_groups_list_and_remove(halves: object) -> None:
    assert save_group("cinema", ["films", "people"]) == ["films", "people"]
    assert load_groups() == {"cinema": ["films", "people"]}
    with open_kb("cinema") as group:
        assert group.name == "cinema" and sorted(_run(group, _films_born_in("London")).iris(0))
    with pytest.raises(GroupError, match="already exists"):
        save_group("cinema", ["films", "people"])
    with pytest.raises(GroupError, match="name of a knowledge base"):
        save_group("films", ["films", "people"])
    assert groups_using("people") == ["cinema"] and groups_using("nobody") == []
    assert remove_group("cinema") == ["films", "people"]
    assert load_groups() == {}


def test_unknown_members_and_malformed_groups_say_what_is_wrong(halves: object) -> None:
    with pytest.raises(GroupMemberNotFound, match="'films\\+nope' names 'nope'") as caught:
        open_kb("films+nope")
    assert "sparqlqa ingest FILE --kb nope" in (caught.value.hint or "")
    with pytest.raises(InvalidKBName, match="empty member"):
        open_kb("films+")
    with pytest.raises(GroupError, match="two or more"):
        open_kb("films+films")
    with pytest.raises(GroupMemberNotFound):
        save_group("cinema", ["films", "nope"])


def test_cli_group_commands_and_the_broken_group_message(halves: object, runner,  # type: ignore[no-untyped-def]
                                                        sparqlqa_home: Path) -> None:
    assert runner.invoke(main, ["kbs", "group", "add", "cinema", "films", "people"]).exit_code == 0
    listed = json.loads(runner.invoke(main, ["kbs", "--json"]).output)
    assert {"name": "cinema", "group": True, "members": ["films", "people"], "missing": [],
            "broken": False} in listed
    refused = runner.invoke(main, ["kbs", "remove", "people", "--yes"])
    assert refused.exit_code != 0 and "cinema" in refused.output and "--force" in refused.output
    assert open_kb("people").name == "people"  # refused: still there
    open_kb("cinema").close()  # its merged store is cached under kbs/.groups
    cached = list((sparqlqa_home / "kbs" / ".groups").glob("*/*/manifest.json"))
    assert len(cached) == 1
    forced = runner.invoke(main, ["kbs", "remove", "people", "--yes", "--force"])
    assert forced.exit_code == 0 and "cinema" in forced.output
    assert not cached[0].exists()  # the cache of a group that included it is gone too
    shown = runner.invoke(main, ["kbs"])
    assert "group cinema: films + people (broken: no KB people" in shown.output
    broken = runner.invoke(main, ["ask", "cinema", LONDON, "--strategy", "offline"])
    assert broken.exit_code != 0 and "names 'people', which is no knowledge base" in broken.output
    assert "Traceback" not in broken.output
    assert runner.invoke(main, ["kbs", "group", "remove", "cinema"]).exit_code == 0


def test_cli_ask_a_group_as_json(halves: object, runner) -> None:  # type: ignore[no-untyped-def]
    result = runner.invoke(main, ["ask", "films+people", LONDON, "--strategy", "offline", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output[result.output.index("{"):])
    assert data["kb"] == "films+people"
    assert [item["label"] for item in data["items"] if item["matched"]] == ["Inception", "Memento"]
    assert data["items"][0]["evidence_kbs"]
    unknown = runner.invoke(main, ["ask", "films+nope", LONDON, "--json"])
    assert unknown.exit_code != 0 and "'nope'" in unknown.output and "Traceback" not in unknown.output


def test_the_group_index_copies_the_members_vectors_of_nodes_whose_text_is_the_same(
        halves: object, monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from sparqlqa.embed.embedders import get_embedder
    from sparqlqa.kb.node_text import index_texts
    from sparqlqa.vectors.index import load_index

    embedder = get_embedder("fake")
    for name in ("films", "people"):
        with open_kb(name) as member:
            load_index(member, embedder)
    embedded: list[str] = []
    real = embedder.embed

    def counting(texts):  # type: ignore[no-untyped-def]
        embedded.extend(texts)
        return real(texts)

    monkeypatch.setattr(embedder, "embed", counting)
    with open_kb("films+people") as group:
        index = load_index(group, embedder)
        texts = index_texts(group, index.ids)
    with open_kb("films") as films:
        alone = index_texts(films, [f"{EX}Alien", f"{EX}Nolan"])
    assert len(index) == 12  # 8 + 6 nodes, Nolan and Scott once
    assert texts[f"{EX}Alien"] == alone[f"{EX}Alien"] and texts[f"{EX}Alien"] not in embedded  # copied
    assert texts[f"{EX}Nolan"] != alone[f"{EX}Nolan"] and texts[f"{EX}Nolan"] in embedded  # born in London too
    assert 0 < len(embedded) < len(index)
    monkeypatch.setattr(embedder, "embed", real)
    fresh = real([texts[iri] for iri in index.ids])  # what a build from scratch gives: the same vectors
    assert np.allclose(np.asarray(index.vectors), fresh, atol=1e-6)


def test_serve_answers_a_group(halves: object) -> None:
    from starlette.testclient import TestClient

    from sparqlqa.serve.app import create_app
    from sparqlqa.serve.service import ServeSettings, Service

    client = TestClient(create_app(Service(ServeSettings())), base_url="http://127.0.0.1")
    response = client.post("/api/ask", json={"kb": "films+people", "question": LONDON, "strategy": "offline"})
    assert response.status_code == 200, response.text
    items = response.json()["items"]
    assert [i["label"] for i in items if i["matched"]] == ["Inception", "Memento"] and items[0]["evidence_kbs"]
    unknown = client.post("/api/ask", json={"kb": "films+nope", "question": LONDON, "strategy": "offline"})
    assert unknown.status_code >= 400 and "nope" in unknown.text
    save_group("cinema", ["films", "people"])
    listed = client.get("/api/kbs").json()
    assert {"name": "cinema", "store": "group", "members": ["films", "people"]} in listed["kbs"]


def test_a_kb_split_by_subject_answers_every_form_as_the_merged_kb(tmp_path: Path) -> None:
    """The DBpedia-style fixture cut in two (films and their blank nodes / people and cities): the group gives
    the merged KB's form, value and top answer on a question of every kind (all 36 agree offline, here 8)."""
    source = rdflib.Graph()
    source.parse(FIXTURES / "dbpedia_films.ttl")
    films = set(source.subjects(rdflib.RDF.type, rdflib.URIRef("http://dbpedia.org/ontology/Film")))
    halves = {"a": rdflib.Graph(), "b": rdflib.Graph()}
    for graph in halves.values():
        for prefix, namespace in source.namespaces():
            graph.bind(prefix, namespace)
    for s, p, o in source:
        halves["a" if s in films or isinstance(s, rdflib.BNode) else "b"].add((s, p, o))
    paths = []
    for name, graph in halves.items():
        paths.append(tmp_path / f"{name}.ttl")
        graph.serialize(paths[-1], format="turtle")
        ingest([paths[-1]], kb=name)
    ingest(paths, kb="ab")
    questions = json.loads((FIXTURES / "dbpedia_films_questions.json").read_text("utf-8"))
    one_each = list({q["kind"]: q for q in questions}.values())
    assert len(one_each) == 8
    for question in one_each:
        group, merged = (ask(kb, question["question"], strategy="offline", rerank="none", k=5) for kb in ("a+b", "ab"))
        assert (group.form, group.value) == (merged.form, merged.value), question
        assert [i.iri for i in group.items[:1]] == [i.iri for i in merged.items[:1]], question


# --- issue 33, item 4: one canonical name per group --------------------------------------------------


@pytest.mark.parametrize("spelling", ["films+people", "people+films", " films+people", "films +people",
                                      "people + films ", "films+people+films", "people+films+people"])
def test_every_spelling_of_a_group_is_its_canonical_name(halves: object, spelling: str) -> None:
    assert canonical_kb_name(spelling) == "films+people"
    with open_kb(spelling) as group, open_kb("films+people") as canonical:
        assert isinstance(group, GroupKB) and group.name == "films+people" and group.members == ["films", "people"]
        assert group.directory == canonical.directory  # one cached generation, not one per spelling
    assert len(list((kbs_dir() / ".groups").iterdir())) == 2  # films+people and its lock file


@pytest.mark.parametrize(("name", "error", "words"), [
    ("films+", InvalidKBName, "empty member"), ("+films", InvalidKBName, "empty member"),
    ("films+films", GroupError, "two or more"), (" films + films ", GroupError, "two or more"),
    ("films+peo ple", InvalidKBName, "'peo ple'"), ("fi/lms", InvalidKBName, "invalid knowledge base name")])
def test_a_malformed_name_says_what_is_wrong_with_a_hint(name: str, error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=re.escape(words)) as caught:
        canonical_kb_name(name)
    assert caught.value.hint  # type: ignore[attr-defined]


def test_a_saved_group_in_another_order_shares_the_cached_generation(halves: object) -> None:
    with open_kb("films+people") as adhoc:
        built = adhoc.manifest.generation
    save_group("cast", ["people", "films"])
    with open_kb("cast") as saved:
        assert saved.name == "cast" and saved.members == ["people", "films"]  # provenance lists them as saved
        assert saved.manifest.generation == built and saved.manifest.base_iri == adhoc.manifest.base_iri
    with open_kb("films+people") as again:  # not rebuilt over by the saved group's order
        assert again.manifest.generation == built and again.directory is not None and again.directory.exists()


def test_concurrent_index_builds_of_one_group_in_many_spellings_build_it_once(
        halves: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """40 MCP asks with different spellings raced on one index folder (issue 33): now one builds, the
    others wait for it and load what it wrote."""
    import threading

    from sparqlqa.embed.embedders import get_embedder
    from sparqlqa.vectors.index import load_index

    embedder = get_embedder("fake")
    embedded: list[str] = []
    real = embedder.embed

    def slow_counting(texts):  # type: ignore[no-untyped-def]
        embedded.extend(texts)
        time.sleep(0.2)  # long enough for every other thread to reach the folder meanwhile
        return real(texts)

    monkeypatch.setattr(embedder, "embed", slow_counting)
    spellings = ["films+people", " people+films", "films + people", "people+films+people"]
    gate = threading.Barrier(len(spellings))
    sizes: list[int] = []
    failures: list[BaseException] = []

    def build(spelling: str) -> None:
        try:
            with open_kb(spelling) as group:
                gate.wait(timeout=30)
                sizes.append(len(load_index(group, embedder)))
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=build, args=(s,)) for s in spellings]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert failures == [] and sizes == [12] * len(spellings)
    assert len(embedded) == 12  # one build: no node embedded twice
