"""A server-binding cursor sends each parameter once, apart from the statement, and prepares nothing."""

from __future__ import annotations

import pytest
from django.db import connection

from memorypr.common.db.cursors import server_binding_cursor

# The statement reads back its own text, as the server received it.
OWN_TEXT = "SELECT current_query() WHERE %(tag)s <> %(tag)s || 'x'"


@pytest.mark.django_db
def test_a_parameter_named_twice_reaches_the_server_once_and_apart_from_the_statement():
    # given Django's own cursor, which writes each parameter into the statement where it is named
    with connection.cursor() as cursor:
        cursor.execute(OWN_TEXT, {"tag": "marker-literal"})
        assert cursor.fetchone()[0].count("marker-literal") == 2
    # when the same statement runs on a server-binding cursor
    with server_binding_cursor() as cursor:
        cursor.execute(OWN_TEXT, {"tag": "marker-bound"})
        text = cursor.fetchone()[0]
    # then the server received a placeholder, named twice, and the value apart
    assert "marker-bound" not in text
    assert text.count("$1") == 2


@pytest.mark.django_db
def test_a_statement_is_never_prepared_and_the_connection_keeps_its_cursors():
    # given a connection configured to prepare every statement it runs twice
    connection.ensure_connection()
    connection.connection.prepare_threshold = 1
    try:
        # when a statement runs several times on server-binding cursors
        for _ in range(4):
            with server_binding_cursor() as cursor:
                cursor.execute("SELECT %(n)s::int + 1", {"n": 41})
                assert cursor.fetchone()[0] == 42
    finally:
        connection.connection.prepare_threshold = None
    with connection.cursor() as cursor:
        # then the server holds no prepared statement for it
        cursor.execute("SELECT count(*) FROM pg_prepared_statements")
        assert cursor.fetchone()[0] == 0
        # and the connection's own cursors still bind on the client
        cursor.execute(OWN_TEXT, {"tag": "marker-after"})
        assert "marker-after" in cursor.fetchone()[0]


@pytest.mark.django_db
def test_errors_arrive_as_djangos_database_errors():
    from django.db import ProgrammingError

    with pytest.raises(ProgrammingError), server_binding_cursor() as cursor:
        cursor.execute("SELECT no_such_column FROM pg_class WHERE relname = %(name)s", {"name": "x"})
