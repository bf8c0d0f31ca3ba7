from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memorypr.formation.client import MemoryprClient
from tests.factories import agent_with_token


@pytest.fixture
def agent_token(transactional_db: None) -> str:
    _, token = agent_with_token(name="formation", namespaces=["demo"])
    return token


@pytest.fixture
def api(live_server: Any, agent_token: str, warm_models: None) -> Iterator[MemoryprClient]:
    """The proposer's client against the real API, served on a real socket."""
    with MemoryprClient(live_server.url, agent_token) as client:
        yield client
