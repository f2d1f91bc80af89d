"""Fixtures of the remote tests: a group whose people half is a stand-in SPARQL endpoint."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyoxigraph import RdfFormat, parse, serialize
from virtuoso import OxigraphSparqlServer

from sparqlqa.ingest import ingest
from sparqlqa.remote import add_remote_kb

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture
def people_server(tmp_path: Path) -> Iterator[OxigraphSparqlServer]:
    """A stand-in endpoint holding the people half, registered as the remote KB ``people`` (its log of
    queries cleared), and the films half ingested as the local KB ``films``."""
    people = tmp_path / "group_people.nt"
    with people.open("wb") as out:
        serialize(parse(path=str(FIXTURES / "group_people.ttl"), format=RdfFormat.TURTLE), out, RdfFormat.N_TRIPLES)
    ingest([FIXTURES / "group_films.ttl"], kb="films")
    with OxigraphSparqlServer([people]) as server:
        add_remote_kb("people", server.sparql_url, "generic", timeout=30)
        server.queries.clear()
        yield server
