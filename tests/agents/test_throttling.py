from __future__ import annotations

import uuid

import pytest

from memorypr.agents import throttling
from tests.factories import agent_with_token


def _redis_cache(location: str) -> dict[str, dict[str, str]]:
    return {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": location,
                        "KEY_PREFIX": uuid.uuid4().hex}}  # fmt: skip


@pytest.mark.django_db
def test_the_rate_limit_counts_in_redis(api_client, settings):
    # given an agent allowed one request a minute, counted in Redis
    settings.CACHES = _redis_cache(settings.TEST_REDIS_URL)
    settings.MEMORYPR_AGENT_RATE = "1/min"
    _, token = agent_with_token(name="throttled", namespaces=["demo"])
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    # when it asks twice, then the second answer is 429
    assert api_client.get("/api/v1/pulls").status_code == 200
    refused = api_client.get("/api/v1/pulls")
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 61
    # and another agent has a counter of its own
    _, other = agent_with_token(name="throttled-other", namespaces=["demo"])
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {other}")
    assert api_client.get("/api/v1/pulls").status_code == 200


@pytest.mark.django_db
def test_requests_pass_unthrottled_while_redis_is_down(api_client, settings, caplog, monkeypatch):
    monkeypatch.setattr(throttling, "_last_warning", 0.0)
    # given the same limit, but the Redis holding the counters does not answer
    settings.CACHES = _redis_cache("redis://127.0.0.1:1/0")
    settings.MEMORYPR_AGENT_RATE = "1/min"
    _, token = agent_with_token(name="unthrottled", namespaces=["demo"])
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    # when it asks twice, then both are served (neither 429 nor 503), and the outage is logged
    assert [api_client.get("/api/v1/pulls").status_code for _ in range(2)] == [200, 200]
    assert "rate limit counters unavailable" in caplog.text
