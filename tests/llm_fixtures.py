"""Pytest fixtures for the LLM layer; import the ones a test module uses.

    from llm_fixtures import anthropic_server, llm_env  # noqa: F401

(or list ``"llm_fixtures"`` in ``pytest_plugins`` of the root conftest.)
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_servers import FakeAnthropicServer, FakeOpenAIServer

from sparqlqa.llm import LLMCache
from sparqlqa.llm.retry import RetryPolicy

#: environment variables that would leak a developer's setup into tests
LLM_ENV_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "SPARQLQA_LLM", "SPARQLQA_LLM_CACHE",
)

#: retries without waiting: tests stay fast while the retry logic still runs
FAST_RETRY = RetryPolicy(backoff_base=0.001, backoff_max=0.01, retry_after_cap=0.01, jitter=False)


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
