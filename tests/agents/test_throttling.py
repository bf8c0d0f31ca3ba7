from __future__ import annotations

import time
import uuid

import pytest
import redis

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


@pytest.mark.django_db
def test_the_previous_minute_weighs_by_how_much_of_it_is_still_recent(api_client, settings, monkeypatch):
    # given an agent allowed 10 requests a minute that made 10 in the minute before this one
    settings.CACHES = _redis_cache(settings.TEST_REDIS_URL)
    settings.MEMORYPR_AGENT_RATE = "10/min"
    agent, token = agent_with_token(name="sliding", namespaces=["demo"])
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    minute = int(time.time() // 60)
    prefix = f"{settings.CACHES['default']['KEY_PREFIX']}:throttle:agent:{agent.pk}"
    redis.Redis.from_url(settings.TEST_REDIS_URL).set(f"{prefix}:{minute - 1}", 10, ex=120)
    # when it asks 15 s into this minute, then 3/4 of the previous 10 still count: two more pass
    monkeypatch.setattr(throttling, "_now", lambda: minute * 60 + 15.0)
    statuses = [api_client.get("/api/v1/pulls").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    # and 45 s in, only 1/4 of them do: the window has room again
    monkeypatch.setattr(throttling, "_now", lambda: minute * 60 + 45.0)
    assert api_client.get("/api/v1/pulls").status_code == 200


@pytest.mark.parametrize(
    ("current", "previous", "into", "expected"),
    [
        (0, 10, 30.0, 1.0),  # half the previous window left: 5 of 10, allowed after ~0 s
        (5, 10, 0.0, 30.0),  # 10 + 5 >= 10: the previous share must fall to 5, half a minute
        (10, 0, 20.0, 40.0),  # the current window is full: wait for the next one
    ],
)
def test_the_retry_hint_is_when_the_estimate_falls_below_the_limit(current, previous, into, expected):
    assert throttling._seconds_until_allowed(
        current=current, previous=previous, limit=10, period=60, into=into
    ) == pytest.approx(expected)
