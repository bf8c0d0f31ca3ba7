from __future__ import annotations

from typing import Any

from django.db import connection
from django.http import HttpRequest, JsonResponse


def _broker_status() -> str:
    from memorypr.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
        return "ok"
    except Exception as exc:  # any transport failure is reported, never raised
        return f"error: {type(exc).__name__}"


def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness for load balancers: 200 when the database answers, with broker status."""
    body: dict[str, Any] = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cursor.fetchone()
        body["database"] = "ok"
        body["pgvector"] = row[0] if row else "missing"
    except Exception as exc:
        body["database"] = f"error: {type(exc).__name__}"
    body["broker"] = _broker_status()
    healthy = body["database"] == "ok"
    body["status"] = "ok" if healthy and body["broker"] == "ok" else ("degraded" if healthy else "down")
    return JsonResponse(body, status=200 if healthy else 503)
