"""Query-string parsing shared by the memory, audit and insights pages: a bad value is a 400
that names the parameter, never a 500 and never silently ignored."""

from __future__ import annotations

from datetime import UTC, datetime

from django.http import HttpRequest
from django.utils.dateparse import parse_date, parse_datetime


class BadParameter(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


def param_datetime(request: HttpRequest, field: str, *, end_of_day: bool = False) -> datetime | None:
    """An ISO date-time (the `datetime-local` input's form, or with an offset), or a date;
    naive values are UTC. A date alone means its start, or its end with `end_of_day`."""
    raw = request.GET.get(field, "").strip()
    if not raw:
        return None
    try:
        moment = parse_datetime(raw)
        day = None if moment else parse_date(raw)
    except ValueError:
        moment = day = None
    if moment is None and day is None:
        raise BadParameter(field, f"{raw!r} is not a date or date-time (YYYY-MM-DD[THH:MM])")
    if moment is None:
        assert day is not None
        moment = datetime(day.year, day.month, day.day, tzinfo=UTC)
        if end_of_day:
            moment = moment.replace(hour=23, minute=59, second=59, microsecond=999999)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def param_choice(request: HttpRequest, field: str, choices: tuple[str, ...] | list[str], default: str) -> str:
    raw = request.GET.get(field, "").strip()
    if not raw:
        return default
    if raw not in choices:
        raise BadParameter(field, f"{raw!r} is not one of {', '.join(choices)}")
    return raw


def param_page(request: HttpRequest, field: str = "page") -> int:
    raw = request.GET.get(field, "").strip() or "1"
    if not raw.isdigit() or int(raw) < 1:
        raise BadParameter(field, f"{raw!r} is not a page number")
    return int(raw)
