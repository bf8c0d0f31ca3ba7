"""A memorypr server on a real socket and an agent token, for the examples run as programs."""

from __future__ import annotations

from typing import Any

import pytest

from tests.factories import agent_with_token


@pytest.fixture
def agent_token(transactional_db: None) -> str:
    _, token = agent_with_token(name="example", namespaces=["demo"])
    return token


@pytest.fixture
def server_url(live_server: Any, warm_models: None) -> str:
    return str(live_server.url)
