from __future__ import annotations

import pytest

from memorypr.agents.models import Agent, Namespace
from memorypr.facts.tasks import merge_pull
from memorypr.vectors.embedding import embed_texts
from memorypr.vectors.text import search_text
from reviewer.tasks import review_pull
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
    monkeypatch.setattr(review_pull, "delay", lambda pull_id: None)


@pytest.fixture
def no_merge_handoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Committed approvals are not handed to the merge: the tests merge them themselves."""
    monkeypatch.setattr(merge_pull, "delay", lambda pull_id: None)
