from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memorypr.formation.client import MemoryprClient
from memorypr.vectors.embedding import embed_texts
from memorypr.vectors.text import search_text
from tests.factories import agent_with_token


@pytest.fixture(scope="session", autouse=True)
def warm_models() -> None:
    # Load the embedding model and jieba once, before the live server's thread needs them.
    embed_texts(["warm up"])
    search_text("预热")


@pytest.fixture(autouse=True)
def no_llm(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rules only, for the reviewer and the proposer, unless a test starts a model server."""
    settings.OPENAI_BASE_URL = ""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def agent_token(transactional_db: None) -> str:
    _, token = agent_with_token(name="formation", namespaces=["demo"])
    return token


@pytest.fixture
def api(live_server: Any, agent_token: str) -> Iterator[MemoryprClient]:
    """The proposer's client against the real API, served on a real socket."""
    with MemoryprClient(live_server.url, agent_token) as client:
        yield client
