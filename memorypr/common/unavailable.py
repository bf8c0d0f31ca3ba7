"""503 with Retry-After when a backing server is saturated or restarting, never a 500.

A request that waited the pool timeout for a database connection, or that met a database
or Redis that is restarting, changed nothing that committed: the client may simply retry.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import redis
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 2


def _is_unavailable(exc: BaseException) -> bool:
    return isinstance(exc, OperationalError | InterfaceError | redis.ConnectionError | redis.TimeoutError)


def unavailable_response(*, reason: str) -> JsonResponse:
    response = JsonResponse(
        {"detail": f"Service temporarily unavailable ({reason}); retry after {RETRY_AFTER_SECONDS} s."},
        status=503,
    )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class ServiceUnavailableMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not _is_unavailable(exception):
            return None
        reason = "database" if isinstance(exception, OperationalError | InterfaceError) else "redis"
        logger.warning("503 for %s %s: %s unavailable: %s", request.method, request.path, reason, exception)
        return unavailable_response(reason=reason)
