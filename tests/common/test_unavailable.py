from __future__ import annotations

import json

import pytest
import redis
from django.db import OperationalError, connection
from django.db.utils import ConnectionHandler
from django.http import HttpResponse
from django.test import RequestFactory

from memorypr.common.unavailable import ServiceUnavailableMiddleware


def _real_database_error() -> OperationalError:
    """What a request meets when the database refuses connections (down, or no free slot)."""
    settings_dict = {**connection.settings_dict, "HOST": "127.0.0.1", "PORT": "1", "CONN_MAX_AGE": 0}
    settings_dict["OPTIONS"] = {}
    dead = ConnectionHandler({"default": settings_dict})["default"]
    try:
        dead.ensure_connection()
    except OperationalError as exc:
        return exc
    raise AssertionError("a connection to port 1 succeeded")


def _real_redis_error() -> redis.ConnectionError:
    try:
        redis.Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=1).ping()
    except redis.ConnectionError as exc:
        return exc
    raise AssertionError("Redis answered on port 1")


def _middleware() -> ServiceUnavailableMiddleware:
    return ServiceUnavailableMiddleware(lambda request: HttpResponse("ok"))


@pytest.mark.django_db
def test_a_database_that_cannot_be_reached_answers_503_with_retry_after(settings):
    settings.MEMORYPR_DB_CONNECT_WAIT_SECONDS = 0
    request = RequestFactory().post("/api/v1/pulls")
    response = _middleware().process_exception(request, _real_database_error())
    assert response is not None and response.status_code == 503
    assert int(response["Retry-After"]) > 0
    assert "database" in json.loads(response.content)["detail"]


def test_a_redis_that_cannot_be_reached_answers_503_with_retry_after():
    request = RequestFactory().get("/api/v1/sessions/s1")
    response = _middleware().process_exception(request, _real_redis_error())
    assert response is not None and response.status_code == 503
    assert response["Retry-After"]


def test_other_errors_are_left_to_django():
    request = RequestFactory().get("/api/v1/pulls")
    assert _middleware().process_exception(request, ValueError("a bug")) is None
