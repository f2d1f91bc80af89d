"""Pytest fixtures for the LLM layer: ``llm_env``, ``llm_cache``, ``anthropic_server``, ``openai_server``.

Use them from a test module with::

    pytest_plugins = ["llm_fixtures"]

(or add ``"llm_fixtures"`` to ``pytest_plugins`` in the root conftest).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_servers import FAST_RETRY, FakeAnthropicServer, FakeOpenAIServer

from sparqlqa.llm import LLMCache

#: environment variables that would leak a developer's setup into tests
__all__ = ["FAST_RETRY", "LLM_ENV_VARS", "anthropic_server", "llm_cache", "llm_env", "openai_server"]

LLM_ENV_VARS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "SPARQLQA_LLM",
    "SPARQLQA_LLM_CACHE",
)


@pytest.fixture
def llm_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private $SPARQLQA_HOME and no LLM-related environment variables; returns the home."""
    home = tmp_path / "llm-home"
    monkeypatch.setenv("SPARQLQA_HOME", str(home))
    for name in LLM_ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def anthropic_server() -> Iterator[FakeAnthropicServer]:
    """A running fake Messages API server."""
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    """A running fake chat-completions server."""
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def llm_cache(llm_env: Path) -> LLMCache:
    """An empty response cache in the private $SPARQLQA_HOME."""
    return LLMCache(llm_env / "llm-cache.sqlite")
