"""Retries: Retry-After on 429 and 503, backoff on other 5xx only when repeating is safe."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator

import httpx
import pytest
from memorypr_client import (
    ApiError,
    AsyncMemoryprClient,
    MemoryprClient,
    RateLimited,
    RetryPolicy,
    TransportError,
    ValidationError,
)
from memorypr_client._calls import parse_retry_after

SESSION = {
    "namespace": "demo",
    "sessionId": "s-1",
    "turns": [],
    "totalTurns": 0,
    "expired": False,
    "expiresAt": None,
    "store": "redis",
}


def _server(answers: list[httpx.Response | Exception]) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    seen: list[httpx.Request] = []
    queue: Iterator[httpx.Response | Exception] = iter(answers)

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = next(queue)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return httpx.MockTransport(handle), seen


def _client(transport: httpx.MockTransport, sleeps: list[float], **policy: float) -> MemoryprClient:
    return MemoryprClient(
        "http://memorypr.test",
        "token",
        transport=transport,
        sleep=sleeps.append,
        retry=RetryPolicy(**policy),  # type: ignore[arg-type]
    )


def test_429_waits_for_the_retry_after_the_server_asked_for():
    # given
    transport, seen = _server(
        [
            httpx.Response(429, headers={"Retry-After": "7"}, json={"detail": "slow down"}),
            httpx.Response(200, json=SESSION),
        ]
    )
    sleeps: list[float] = []
    # when
    session = _client(transport, sleeps).get_session("s-1")
    # then
    assert session.session_id == "s-1" and len(seen) == 2
    assert sleeps == [7.0]


def test_503_is_retried_even_for_a_write_that_cannot_be_repeated():
    # given: the server did nothing (503), so sending the turn again is safe
    turn = {"turnId": 1, "role": "user", "content": "hi", "createdAt": "2026-01-01T00:00:00Z"}
    transport, seen = _server(
        [
            httpx.Response(503, headers={"Retry-After": "1"}, json={"detail": "busy"}),
            httpx.Response(201, json=turn),
        ]
    )
    sleeps: list[float] = []
    # when
    answer = _client(transport, sleeps).add_turn("s-1", "user", "hi")
    # then
    assert answer.turn_id == 1 and sleeps == [1.0] and len(seen) == 2


def test_a_retry_after_longer_than_allowed_is_raised_at_once_with_the_wait():
    # given
    transport, seen = _server(
        [httpx.Response(429, headers={"Retry-After": "3600"}, json={"detail": "later"})]
    )
    sleeps: list[float] = []
    # when
    with pytest.raises(RateLimited) as caught:
        _client(transport, sleeps, max_retry_after=60).get_session("s-1")
    # then
    assert caught.value.retry_after == 3600.0 and sleeps == [] and len(seen) == 1


def test_a_500_on_a_read_is_retried_with_growing_backoff_then_raised():
    # given
    transport, seen = _server([httpx.Response(500, text="boom")] * 4)
    sleeps: list[float] = []
    # when
    with pytest.raises(ApiError) as caught:
        _client(transport, sleeps, max_retries=3, backoff=1.0, max_backoff=100).get_session("s-1")
    # then: three waits, each within its jittered window (half to all of 1, 2, 4 seconds)
    assert caught.value.status == 500 and len(seen) == 4
    assert [
        low <= wait <= high for wait, (low, high) in zip(sleeps, [(0.5, 1), (1, 2), (2, 4)], strict=True)
    ] == [True] * 3


def test_a_500_on_a_turn_is_not_retried_since_it_may_have_been_stored():
    # given
    transport, seen = _server([httpx.Response(500, text="boom")])
    sleeps: list[float] = []
    # when
    with pytest.raises(ApiError):
        _client(transport, sleeps).add_turn("s-1", "user", "hi")
    # then
    assert len(seen) == 1 and sleeps == []


def test_a_proposal_is_retried_with_the_same_idempotency_key():
    # given
    transport, seen = _server(
        [
            httpx.Response(502, text="bad gateway"),
            httpx.ConnectError("refused"),
            httpx.Response(400, json={"detail": "x"}),
        ]
    )
    sleeps: list[float] = []
    # when
    with pytest.raises(ValidationError):
        _client(transport, sleeps).propose([], subject="u")
    # then: three attempts, one key
    keys = {json.loads(request.content)["idempotencyKey"] for request in seen}
    assert len(seen) == 3 and len(keys) == 1
    assert keys.pop().startswith("client-")


def test_a_lost_connection_ends_in_a_transport_error():
    # given
    transport, seen = _server([httpx.ConnectError("refused")] * 2)
    sleeps: list[float] = []
    # when / then
    with pytest.raises(TransportError):
        _client(transport, sleeps, max_retries=1).get_session("s-1")
    assert len(seen) == 2 and len(sleeps) == 1


def test_errors_carry_the_apis_field_paths():
    # given
    body = {
        "detail": "operations[2].confidence: Ensure this value is less than or equal to 1.",
        "errors": [
            {"field": "operations[2].confidence", "message": "Ensure this value is less than or equal to 1."},
            {"field": "operations[0].key", "message": "Enter a valid key."},
        ],
    }
    transport, _ = _server([httpx.Response(400, json=body)])
    # when
    with pytest.raises(ValidationError) as caught:
        _client(transport, []).propose([], subject="u")
    # then
    error = caught.value
    assert error.fields == ["operations[2].confidence", "operations[0].key"]
    assert error.messages_for("operations[0].key") == ["Enter a valid key."]
    assert "operations[2].confidence" in str(error)


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("12", 12.0), ("0.5", 0.5), ("Wed, 01 Jan 2031 00:00:30 GMT", 30.0), ("soon", None), (None, None)],
)
def test_retry_after_is_seconds_or_an_http_date(header, seconds):
    from datetime import UTC, datetime

    assert parse_retry_after(header, now=datetime(2031, 1, 1, tzinfo=UTC)) == seconds


def test_the_async_client_follows_the_same_policy():
    # given
    transport_calls: list[httpx.Request] = []
    answers = iter([httpx.Response(429, headers={"Retry-After": "2"}), httpx.Response(200, json=SESSION)])

    async def handle(request: httpx.Request) -> httpx.Response:
        transport_calls.append(request)
        return next(answers)

    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    async def run() -> str:
        async with AsyncMemoryprClient(
            "http://memorypr.test", "token", transport=httpx.MockTransport(handle), sleep=sleep
        ) as client:
            return (await client.get_session("s-1")).store

    # when
    store = asyncio.run(run())
    # then
    assert store == "redis" and sleeps == [2.0] and len(transport_calls) == 2


@pytest.mark.parametrize("url", ["ftp://example.invalid", "example.org", ""])
def test_a_base_url_that_is_not_http_is_refused(url: str):
    make: Callable[[], object] = lambda: MemoryprClient(url, "token")  # noqa: E731
    with pytest.raises(ValueError):
        make()
