"""Time columns are parsed by psycopg's C loader and come back as Django reads them: aware, UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from django.db import connection
from django.db.backends.postgresql.psycopg_any import get_adapters_template
from psycopg.pq import Format

from memorypr.agents.models import Namespace
from memorypr.common.db.timestamps import (
    TIMESTAMPTZ_OID,
    UtcTimestamptzLoader,
    adapters_with_fast_timestamps,
)

pytestmark = pytest.mark.django_db


def _read(sql: str) -> list[tuple[datetime, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchall()


def test_every_cursor_reads_time_columns_through_the_fast_loader():
    # given a connection the project opened
    connection.ensure_connection()
    # when a cursor is made (Django re-registers its own loader when its zone differs)
    with connection.cursor() as cursor:
        loader = cursor.cursor.adapters.get_loader(TIMESTAMPTZ_OID, Format.TEXT)
    # then the loader is the C-parsing one, for the connection and for the cursor alike
    assert loader is UtcTimestamptzLoader
    assert connection.connection.adapters.get_loader(TIMESTAMPTZ_OID, Format.TEXT) is UtcTimestamptzLoader


def test_values_are_the_instants_written_and_aware_in_utc():
    # given times with fractions of a second, in other zones, and a null
    rows = _read(
        "SELECT '2026-03-01 12:34:56.789012+08'::timestamptz, '1999-12-31 23:59:59-05:30'::timestamptz,"
        " '2026-01-01 00:00:00Z'::timestamptz, NULL::timestamptz"
    )
    # then each comes back as the same instant, labelled UTC, as Django's loader returns it
    (first, second, third, missing) = rows[0]
    assert first == datetime(2026, 3, 1, 4, 34, 56, 789012, tzinfo=UTC)
    assert second == datetime(2000, 1, 1, 5, 29, 59, tzinfo=UTC)
    assert third == datetime(2026, 1, 1, tzinfo=UTC)
    assert all(value.tzinfo is UTC for value in (first, second, third))
    assert missing is None


def test_model_fields_read_through_the_orm_keep_their_values():
    # given a row written through the ORM with a time of day to the microsecond
    namespace = Namespace.objects.create(name="timestamps")
    # when it is read back
    read = Namespace.objects.get(pk=namespace.pk)
    # then the time is the one written, aware and in UTC
    assert read.created_at == namespace.created_at
    assert read.created_at.tzinfo is UTC


def test_a_session_in_another_zone_still_reads_the_same_instants():
    # given a session whose time zone was changed by hand
    with connection.cursor() as cursor:
        cursor.execute("SET TIME ZONE 'Asia/Shanghai'")
        try:
            cursor.execute("SELECT '2026-03-01 12:00:00Z'::timestamptz")
            (value,) = cursor.fetchone()
        finally:
            cursor.execute("SET TIME ZONE 'UTC'")
    # then the value is the same instant (Django's own loader would have relabelled it as UTC)
    assert value == datetime(2026, 3, 1, 12, tzinfo=UTC)
    assert value.utcoffset() == timedelta(hours=8)


@pytest.mark.parametrize(
    "template",
    [get_adapters_template(False, None), get_adapters_template(True, timezone(timedelta(hours=2)))],
)
def test_templates_that_do_not_read_utc_are_left_as_django_made_them(template):
    # when Django reads naive datetimes, or aware ones in another zone
    # then its template is used unchanged
    assert adapters_with_fast_timestamps(template) is template


def test_the_utc_template_is_built_once():
    template = get_adapters_template(True, UTC)
    assert adapters_with_fast_timestamps(template) is adapters_with_fast_timestamps(template)
    assert adapters_with_fast_timestamps(template) is not template
