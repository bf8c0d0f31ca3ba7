"""Connections bind parameters on the server and prepare what they repeat; a generic-plan
statement is planned once, and its setting reaches no other."""

from __future__ import annotations

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
