"""Values as the API writes them, for response bodies built without DRF's field objects.

DRF builds (deep-copies) every field of a serializer for each instance it renders; on the
hot read paths that cost more than the database. The bodies written by hand use these
helpers, which format exactly as the matching DRF fields do (tests compare the two).
"""

from __future__ import annotations

from datetime import datetime, tzinfo
from typing import Any
from uuid import UUID

from django.utils import timezone


def current_zone() -> tzinfo:
    """The time zone times are written in (Django's current one).

    A body with several times looks it up once and passes it to each `datetime_text`: the
    lookup (a context-local read) costs more than the formatting.
    """
    return timezone.get_current_timezone()


def datetime_text(value: datetime | None, *, zone: tzinfo | None = None) -> str | None:
    """DRF's DateTimeField with ISO 8601 output: in the current time zone (or `zone`, which
    the caller read from `current_zone()`), UTC written 'Z'."""
    if not value:
        return None
    if timezone.is_aware(value):
        value = value.astimezone(zone or timezone.get_current_timezone())
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def uuid_text(value: UUID | str | None) -> str | None:
    return None if value is None else str(value)


def float_or_none(value: Any) -> float | None:
    return None if value is None else float(value)


def int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)
