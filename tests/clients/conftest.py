"""A memorypr server on a real socket and an agent token, for the client packages' tests."""

from __future__ import annotations

from typing import Any

import pytest

from tests.factories import agent_with_token


@pytest.fixture(scope="session")
def warm_models() -> None:
    # Load the embedding model and jieba once, before the live server's thread needs them.
    from memorypr.vectors.embedding import embed_texts
    from memorypr.vectors.text import search_text

    embed_texts(["warm up"])
    search_text("预热")


@pytest.fixture(autouse=True)
def no_llm(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rules only: the review must not reach for a model server."""
    settings.OPENAI_BASE_URL = ""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def agent_token(transactional_db: None) -> str:
    _, token = agent_with_token(name="client", namespaces=["demo"])
    return token


@pytest.fixture
def server_url(live_server: Any, warm_models: None) -> str:
    return str(live_server.url)
