from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memorypr.agents.models import Agent
from memorypr.facts import tasks as facts_tasks
from reviewer import llm as llm_module
from tests.factories import agent_with_token
from tests.reviewer.llm_server import FakeLlm, running_llm_server


@pytest.fixture
def proposer(db: None) -> Agent:
    agent, _ = agent_with_token(name="proposer", namespaces=["demo"])
    return agent


@pytest.fixture
def merges(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The merges handed over after commit (the merge itself belongs to the fact store)."""
    queued: list[str] = []
    monkeypatch.setattr(facts_tasks.merge_pull, "delay", queued.append)
    return queued


@pytest.fixture(autouse=True)
def no_llm(settings: Any) -> None:
    """Rules only unless a test starts the LLM server: the environment must not leak in."""
    settings.OPENAI_BASE_URL = ""


@pytest.fixture
def llm_server(settings: Any) -> Iterator[FakeLlm]:
    """A real OpenAI-compatible server on 127.0.0.1, configured as the LLM reviewer."""
    with running_llm_server() as server:
        settings.OPENAI_BASE_URL = server.base_url
        settings.OPENAI_API_KEY = "test-key"
        settings.MEMORYPR_REVIEW_MODEL = "test-model"
        settings.MEMORYPR_REVIEW_TIMEOUT_SECONDS = 1.0
        settings.MEMORYPR_REVIEW_RETRIES = 1
        llm_module._PLAIN_JSON_ENDPOINTS.clear()
        yield server
        llm_module._PLAIN_JSON_ENDPOINTS.clear()
