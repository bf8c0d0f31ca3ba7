from __future__ import annotations

from datetime import datetime

from django.db import connection

from memorypr.common.models import Heartbeat


def heartbeat_last(*, name: str) -> datetime | None:
    """When the heartbeat `name` was last recorded; None if it never was."""
    return Heartbeat.objects.filter(pk=name).values_list("beat_at", flat=True).first()


def database_pgvector_version() -> str | None:
    """The installed pgvector extension's version; None when it is not installed."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
    return row[0] if row else None
