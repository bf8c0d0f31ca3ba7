"""Values as the API writes them, for response bodies built without DRF's field objects.

DRF builds (deep-copies) every field of a serializer for each instance it renders; on the
hot read paths that cost more than the database. The bodies written by hand use these
helpers, which format exactly as the matching DRF fields do (tests compare the two).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from django.utils import timezone


def datetime_text(value: datetime | None) -> str | None:
    """DRF's DateTimeField with ISO 8601 output: in the current time zone, UTC written 'Z'."""
    if not value:
        return None
    if timezone.is_aware(value):
        value = value.astimezone(timezone.get_current_timezone())
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def uuid_text(value: UUID | str | None) -> str | None:
    return None if value is None else str(value)


def float_or_none(value: Any) -> float | None:
    return None if value is None else float(value)


def int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)
