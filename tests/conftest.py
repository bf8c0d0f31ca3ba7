from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from memorypr.agents.models import Agent
from tests.factories import agent_with_token
from tests.web_role import pytest_runtest_teardown, web_tier_role  # noqa: F401 - requests run as the web tier's role


@pytest.fixture(scope="session")
def warm_models() -> None:
    """Load the embedding model and jieba once, before a live server's thread needs them."""
    from memorypr.vectors.embedding import embed_texts
    from memorypr.vectors.text import search_text

    embed_texts(["warm up"])
    search_text("预热")


@pytest.fixture(autouse=True)
def no_llm(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rules only, unless a test starts a model server: nothing reaches for a real model."""
    settings.OPENAI_BASE_URL = ""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def agent_and_token(db: None) -> tuple[Agent, str]:
    return agent_with_token(name="proposer", namespaces=["demo"])


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def agent_client(agent_and_token: tuple[Agent, str]) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {agent_and_token[1]}")
    return client


@pytest.fixture
def client_for(db: None) -> Callable[..., APIClient]:
    def make(*, name: str, namespaces: list[str], trust: str = "normal") -> APIClient:
        _, token = agent_with_token(name=name, namespaces=namespaces, trust=trust)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        return client

    return make


def post_json(client: APIClient, url: str, body: Any) -> Any:
    return client.post(url, body, format="json")


@pytest.fixture(scope="session")
def _worker_process(django_db_setup: None, django_db_blocker: Any) -> Any:
    """One real Celery worker process for the whole run (it takes seconds to start)."""
    from tests.worker import running_worker

    with django_db_blocker.unblock(), running_worker() as worker:
        yield worker


@pytest.fixture
def live_worker(_worker_process: Any) -> Any:
    """A real Celery worker on the test broker (Redis) against this run's test database.

    Only during the test that asks for it do tasks go to the worker; every other test keeps
    running them inline. Such tests need `@pytest.mark.django_db(transaction=True)`: the
    worker only sees committed rows.
    """
    from tests.worker import tasks_to

    with tasks_to(_worker_process) as worker:
        yield worker.proc
