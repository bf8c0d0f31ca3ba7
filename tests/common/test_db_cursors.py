"""Connections bind parameters on the server and prepare what they repeat; a generic-plan
statement is planned once, by itself or asked to, and the asking reaches no other statement."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from memorypr.common.db.cursors import generic_plan_fetchall, generic_plan_taken_alone

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
    """Executions of a prepared statement (its text ends with `statement`) that ran its generic
    plan, and that were planned for their values."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE %(s)s",
            {"s": f"%{statement}"},
        )
        row = cursor.fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def _plan_cache_mode() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW plan_cache_mode")
        return str(cursor.fetchone()[0])


# With a connection that prepares a statement at its second run (threshold 1): PostgreSQL plans
# runs 2-6 for their values, chooses at run 7, and the connection looks at its counts after it.
RUNS_TO_CHOICE = 7


# A statement whose generic plan looks dearer than planning for each value (its row count is a
# parameter): PostgreSQL keeps planning it for its values, unless asked not to.
# (Each test names its own rows: a connection keeps its prepared statements from test to test.)
def _stays_custom(name: str) -> tuple[str, str]:
    """Such a statement, and its text as the server holds it."""
    text = f"SELECT count(*) FROM generate_series(1, %(n)s::int) AS {name}"
    return text, text.replace("%(n)s", "$1")


@pytest.mark.django_db
def test_a_statement_that_takes_the_generic_plan_by_itself_runs_as_it_is(preparing_connection):
    # given a connection that prepares every statement it runs twice
    # when a statement PostgreSQL plans generically after its first five runs runs ten times
    for n in range(RUNS_TO_CHOICE + 3):
        assert generic_plan_fetchall("SELECT %(n)s::int + 2", {"n": n}) == [(n + 2,)]
    # then it was planned for its values five times, and has run its one generic plan since,
    # with nothing asked of the planner around it
    assert _plans("SELECT $1::int + 2") == (4, 5)
    assert generic_plan_taken_alone("SELECT %(n)s::int + 2") is True
    assert _plan_cache_mode() == "auto"


@pytest.mark.django_db
def test_a_statement_that_stays_planned_for_its_values_is_asked_for_the_generic_plan(preparing_connection):
    statement, held = _stays_custom("rows_3")
    # given a statement PostgreSQL keeps planning for its values
    # when it runs until it has been looked at, then three times more
    for n in range(RUNS_TO_CHOICE + 3):
        assert generic_plan_fetchall(statement, {"n": n % 3 + 1}) == [(n % 3 + 1,)]
    # then PostgreSQL chose custom plans at first (its five, and its first choice), and has run
    # the generic plan since, asked for around the statement
    assert _plans(held) == (3, 6)
    assert generic_plan_taken_alone(statement) is False
    # and the setting reached no other statement (this test's transaction is still open)
    assert _plan_cache_mode() == "auto"


@pytest.mark.django_db
def test_a_statement_not_yet_past_the_planners_choice_is_not_yet_judged(preparing_connection):
    statement, held = _stays_custom("rows_4")
    # when a statement has run fewer times than it takes PostgreSQL to choose
    for n in range(RUNS_TO_CHOICE - 1):
        generic_plan_fetchall(statement, {"n": n + 1})
    # then how it is planned is not yet known, and it has only been planned for its values
    assert generic_plan_taken_alone(statement) is None
    assert _plans(held) == (0, 5)


@pytest.mark.django_db
def test_on_a_connection_that_prepares_nothing_the_generic_plan_is_asked_for_from_the_first_run():
    statement, held = _stays_custom("rows_5")
    # given a connection that prepares nothing (a pooler in transaction mode)
    connection.ensure_connection()
    threshold = connection.connection.prepare_threshold
    connection.connection.prepare_threshold = None
    try:
        # when a statement runs
        assert generic_plan_fetchall(statement, {"n": 2}) == [(2,)]
        # then the generic plan was asked for (nothing prepared could tell otherwise), and the
        # setting ended with the statement
        assert generic_plan_taken_alone(statement) is False
        assert _plans(held) == (0, 0)
        assert _plan_cache_mode() == "auto"
    finally:
        connection.connection.prepare_threshold = threshold


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_the_setting_ends_with_the_statements_own_round_trip(preparing_connection):
    statement, held = _stays_custom("rows_6")
    other, other_held = _stays_custom("other_rows_6")
    # given a connection in autocommit, preparing every statement it runs twice
    assert connection.connection.autocommit
    # when a statement that needs the generic plan asked for runs past its look, with other
    # statements between its runs
    for n in range(RUNS_TO_CHOICE + 3):
        assert generic_plan_fetchall(statement, {"n": n % 3 + 1}) == [(n % 3 + 1,)]
        with connection.cursor() as cursor:
            cursor.execute(other, {"n": n % 3 + 1})
            assert cursor.fetchone()[0] == n % 3 + 1
    # then it ran the generic plan once asked for, and the other statement (run plainly, and
    # also kept custom by PostgreSQL) never did
    assert _plans(held) == (3, 6)
    assert _plans(other_held) == (0, RUNS_TO_CHOICE + 2)
    # and no statement round trip left the setting behind
    assert _plan_cache_mode() == "auto"


@pytest.mark.django_db(transaction=True)
def test_a_failing_generic_plan_statement_raises_djangos_error_and_leaves_no_setting_behind(
    preparing_connection,
):
    from django.db import DataError

    # given a statement that is asked for the generic plan
    for n in range(RUNS_TO_CHOICE):
        generic_plan_fetchall("SELECT 1 / %(d)s::int FROM generate_series(0, %(d)s::int)", {"d": n + 1})
    assert generic_plan_taken_alone("SELECT 1 / %(d)s::int FROM generate_series(0, %(d)s::int)") is False
    # when it fails outside any transaction
    with pytest.raises(DataError):
        generic_plan_fetchall("SELECT 1 / %(d)s::int FROM generate_series(0, %(d)s::int)", {"d": 0})
    # then the connection is usable, and plans as configured: the setting was rolled back
    assert _plan_cache_mode() == "auto"
    assert generic_plan_fetchall("SELECT %(n)s::int * 2", {"n": 21}) == [(42,)]


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
