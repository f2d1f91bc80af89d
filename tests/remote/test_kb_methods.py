"""KB behaviour as KB methods (issue 38 item 5b): what a local KB, a remote endpoint KB, a KB group and a
group with a remote member answer — the questions code outside the KB classes used to ask by type."""

from __future__ import annotations

from pathlib import Path

import pytest
from virtuoso import OxigraphSparqlServer

from sparqlqa.ingest import ingest
from sparqlqa.kb.knowledge_base import KnowledgeBase, open_kb
from sparqlqa.kb.labels import LabelIndex
from sparqlqa.kb.store import OxigraphStore
from sparqlqa.remote.labels import GroupLookup, RemoteLabelLookup, lookup_for_kb
from sparqlqa.vectors.index import index_supported

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EX = "http://example.org/"


@pytest.fixture
def people_url(people_server: OxigraphSparqlServer) -> str:
    """The stand-in endpoint's URL (the people half; the films half is the local KB ``films``)."""
    return str(people_server.sparql_url)


def test_a_local_kb_may_be_scanned_and_joins_no_others() -> None:
    kb = KnowledgeBase.in_memory("demo", OxigraphStore.in_memory())
    assert kb.can_scan() and index_supported(kb)
    assert kb.endpoint_url() is None
    assert kb.member_kbs() == [] and kb.remote_members() == []
    assert kb.provenance([(EX + "a", EX + "p", EX + "b")]) is None


def test_a_remote_kb_is_never_scanned_and_names_its_endpoint(people_url: str) -> None:
    with open_kb("people") as kb:
        assert not kb.can_scan() and not index_supported(kb)
        assert kb.endpoint_url() == people_url
        assert kb.member_kbs() == [] and kb.remote_members() == [] and kb.provenance([]) is None
        assert isinstance(lookup_for_kb(kb), RemoteLabelLookup)


def test_a_group_of_local_kbs_is_scanned_and_lists_its_members() -> None:
    ingest([FIXTURES / "group_films.ttl"], kb="films")
    ingest([FIXTURES / "group_people.ttl"], kb="people")
    with open_kb("films+people") as group:
        assert group.can_scan() and group.endpoint_url() is None
        assert [kb.name for kb in group.member_kbs()] == ["films", "people"] and group.remote_members() == []
        assert group.provenance([(EX + "Inception", EX + "directedBy", EX + "Nolan")]) == [["films"]]
        assert isinstance(lookup_for_kb(group), LabelIndex)


def test_a_group_with_a_remote_member_reaches_it_through_its_endpoint(people_url: str) -> None:
    with open_kb("films+people") as group:
        assert group.can_scan() and group.endpoint_url() is None  # its merged store is local
        assert [kb.name for kb in group.member_kbs()] == ["films", "people"]
        [remote] = group.remote_members()
        assert remote.name == "people" and remote.endpoint_url() == people_url and not remote.can_scan()
        lookup = lookup_for_kb(group)
        assert isinstance(lookup, GroupLookup) and isinstance(lookup.remote[0], RemoteLabelLookup)
