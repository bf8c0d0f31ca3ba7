from __future__ import annotations

import pytest

from memorypr.agents.models import Agent, Namespace
from memorypr.vectors.embedding import embed_texts
from memorypr.vectors.text import search_text
from tests.factories import agent_with_token


@pytest.fixture(scope="session", autouse=True)
def warm_models() -> None:
    # Load the embedding model and jieba once, before any test times or threads start.
    embed_texts(["warm up"])
    search_text("预热")


@pytest.fixture
def proposer(db: None) -> Agent:
    agent, _ = agent_with_token(name="proposer", namespaces=["demo"])
    return agent


@pytest.fixture
def namespace(proposer: Agent) -> Namespace:
    return Namespace.objects.get(name="demo")


@pytest.fixture
def no_review_handoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Committed submissions are not handed to the review pipeline: the tests approve them themselves."""
    monkeypatch.setattr("memorypr.pulls.services._enqueue_review", lambda pull_id: None)
