"""Shared fixtures: every test gets its own $SPARQLQA_HOME and the fake embedder by default."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(autouse=True)
def sparqlqa_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty, private $SPARQLQA_HOME for each test."""
    home = tmp_path / "sparqlqa-home"
    monkeypatch.setenv("SPARQLQA_HOME", str(home))
    monkeypatch.setenv("SPARQLQA_EMBEDDER", "fake")
    monkeypatch.setenv("SPARQLQA_CHECK_BUILT", "1")  # every built query's declared reading is checked
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("SPARQLQA_LLM", raising=False)
    monkeypatch.delenv("SPARQLQA_LLM_CACHE", raising=False)
    return home


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not beside the repository")
    return SHARED_DATA


@pytest.fixture
def runner():  # type: ignore[no-untyped-def]
    """A click test runner for ``sparqlqa`` commands (the one every CLI test uses)."""
    from click.testing import CliRunner

    return CliRunner()


@pytest.fixture(scope="module")
def kb():  # type: ignore[no-untyped-def]
    """The movie fixture as an in-memory KB, built once per test module (tests only read it).

    The fault suite's own ``kb`` (tests/faults/conftest.py) is a copied on-disk KB instead.
    """
    from pyoxigraph import RdfFormat

    from sparqlqa.kb.knowledge_base import KnowledgeBase
    from sparqlqa.kb.store import OxigraphStore

    store = OxigraphStore.in_memory()
    store.oxstore.load(path=str(FIXTURES / "movies.ttl"), format=RdfFormat.TURTLE)
    return KnowledgeBase.in_memory("movies", store)


@pytest.fixture
def movies_ttl() -> Path:
    """A tiny typed movie KB with text (tests/fixtures/movies.ttl)."""
    return FIXTURES / "movies.ttl"


@pytest.fixture
def movies_kb(movies_ttl: Path):  # type: ignore[no-untyped-def]
    """The movie fixture ingested as the on-disk KB 'movies' (private $SPARQLQA_HOME)."""
    from sparqlqa.ingest import ingest

    return ingest([movies_ttl], kb="movies")
