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
def movies_ttl() -> Path:
    """A tiny typed movie KB with text (tests/fixtures/movies.ttl)."""
    return FIXTURES / "movies.ttl"


@pytest.fixture
def movies_kb(movies_ttl: Path):  # type: ignore[no-untyped-def]
    """The movie fixture ingested as the on-disk KB 'movies' (private $SPARQLQA_HOME)."""
    from sparqlqa.ingest import ingest

    return ingest([movies_ttl], kb="movies")
