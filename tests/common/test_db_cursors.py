"""Connections bind parameters on the server and prepare what they repeat; a generic-plan
statement is planned once, and its setting reaches no other."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from memorypr.common.db.cursors import generic_plan_fetchall

# The statement reads back its own text, as the server received it.
OWN_TEXT = "SELECT current_query() WHERE %(tag)s <> %(tag)s || 'x'"
REPEATED = "SELECT %(n)s::int + 1"


def _prepared(statement: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement = %(s)s", {"s": statement}
        )
        return int(cursor.fetchone()[0])


@pytest.mark.django_db
def test_a_parameter_named_twice_reaches_the_server_once_and_apart_from_the_statement():
    # when the statement runs on Django's own cursor
    with connection.cursor() as cursor:
        cursor.execute(OWN_TEXT, {"tag": "marker-bound"})
        text = cursor.fetchone()[0]
    # then the server received a placeholder, named twice, and the value apart
    assert "marker-bound" not in text
    assert text.count("$1") == 2


@pytest.mark.django_db
def test_a_repeated_statement_is_prepared_on_its_connection():
    # when a statement runs more often than the connection's threshold
    for _ in range(int(connection.connection.prepare_threshold or 0) + 2):
        with connection.cursor() as cursor:
            cursor.execute(REPEATED, {"n": 41})
            assert cursor.fetchone()[0] == 42
    # then the server holds it prepared
    assert _prepared("SELECT $1::int + 1") == 1


@pytest.fixture
def preparing_connection():
    """The test's connection, configured to prepare every statement it runs twice."""
    connection.ensure_connection()
    threshold = connection.connection.prepare_threshold
    connection.connection.prepare_threshold = 1
    yield connection
    connection.connection.prepare_threshold = threshold


def _plans(statement: str) -> tuple[int, int]:
    """Executions of a prepared statement that ran its generic plan, and that were planned for their values."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = %(s)s",
            {"s": statement},
        )
        row = cursor.fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def _plan_cache_mode() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW plan_cache_mode")
        return str(cursor.fetchone()[0])


@pytest.mark.django_db
def test_a_generic_plan_statement_is_planned_once_and_its_setting_reaches_no_other_statement(
    preparing_connection,
):
    # given a connection that prepares every statement it runs twice
    # when one statement runs several times on Django's cursor, and another as a generic plan
    for n in range(4):
        with connection.cursor() as cursor:
            cursor.execute("SELECT %(n)s::int + 1", {"n": n})
            assert cursor.fetchone()[0] == n + 1
        assert generic_plan_fetchall("SELECT %(n)s::int + 2", {"n": n}) == [(n + 2,)]
    # then each prepared execution of the first was planned for its values (PostgreSQL's first
    # five are), and every one of the second ran the one generic plan
    assert _plans("SELECT $1::int + 1") == (0, 3)
    assert _plans("SELECT $1::int + 2") == (3, 0)
    # and the connection (inside this test's transaction) plans as configured again
    assert _plan_cache_mode() == "auto"


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_the_setting_ends_with_the_statements_own_round_trip(preparing_connection):
    # given a connection in autocommit, preparing every statement it runs twice
    assert connection.connection.autocommit
    # when a generic-plan statement runs several times, with other statements between its runs
    for n in range(4):
        assert generic_plan_fetchall("SELECT %(n)s::int + 3", {"n": n}) == [(n + 3,)]
        with connection.cursor() as cursor:
            cursor.execute("SELECT %(n)s::int + 4", {"n": n})
            assert cursor.fetchone()[0] == n + 4
    # then every prepared execution of it ran the generic plan, and none of the other's did
    assert _plans("SELECT $1::int + 3") == (3, 0)
    assert _plans("SELECT $1::int + 4") == (0, 3)
    # and no statement round trip left the setting behind
    assert _plan_cache_mode() == "auto"


@pytest.mark.django_db(transaction=True)
def test_a_failing_generic_plan_statement_raises_djangos_error_and_leaves_no_setting_behind():
    from django.db import DataError

    # when a generic-plan statement fails outside any transaction
    with pytest.raises(DataError):
        generic_plan_fetchall("SELECT 1 / %(zero)s::int", {"zero": 0})
    # then the connection is usable, and plans as configured: the setting was rolled back
    assert _plan_cache_mode() == "auto"
    assert generic_plan_fetchall("SELECT %(n)s::int * 2", {"n": 21}) == [(42,)]
    assert _plan_cache_mode() == "auto"


@pytest.mark.django_db
def test_a_generic_plan_statement_read_in_binary_gives_the_values_of_its_text_form():
    # given a statement of the types retrieval reads: ids, distances, scores, flags, keys, times
    sql = """SELECT %(id)s::bigint, %(distance)s::float8, %(rank)s::float4, %(named)s::int, %(head)s::bool,
        %(key)s::varchar, %(at)s::timestamptz, NULL::float8"""
    params = {
        "id": 2**40,
        "distance": 0.123456789012,
        "rank": 0.25,
        "named": 2,
        "head": True,
        "key": "café.home_city",
        "at": datetime(2026, 3, 1, 12, 30, 15, 123456, tzinfo=UTC),
    }
    # when it is read in binary and in text
    binary = generic_plan_fetchall(sql, params, binary=True)
    text = generic_plan_fetchall(sql, params)
    # then both give the same values, times aware and in UTC
    assert binary == text == [(2**40, 0.123456789012, 0.25, 2, True, "café.home_city", params["at"], None)]
    assert binary[0][6].utcoffset() == timedelta(0)


@pytest.mark.django_db
def test_json_read_in_binary_arrives_decoded_where_djangos_fields_expect_text():
    # when a json value is read both ways (why `binary` is for statements of numbers, times and text)
    sql = "SELECT %(doc)s::jsonb"
    # then the text form is Django's (a string its JSONField decodes), the binary form psycopg's
    assert generic_plan_fetchall(sql, {"doc": '{"a": 1}'}) == [('{"a": 1}',)]
    assert generic_plan_fetchall(sql, {"doc": '{"a": 1}'}, binary=True) == [({"a": 1},)]
