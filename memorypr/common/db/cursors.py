"""A cursor that sends its parameters apart from the statement (the extended query protocol).

Django's psycopg cursors bind parameters on the client: each one is written into the SQL as a
literal, as often as the statement names it. Retrieval's statement names its 384-dimension query
vector four times, so every call had psycopg quote kilobytes of text and PostgreSQL parse the
same vector four times. A server-binding cursor sends each named parameter once.

The statement is never prepared, even where OPTIONS asks for prepared statements: a generic
plan would not see the values (how large a subject is) that decide which index it walks.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connection
from django.db.backends.postgresql.base import ServerBindingCursor
from django.db.backends.utils import CursorWrapper


class _UnpreparedServerBindingCursor(ServerBindingCursor):
    def execute(
        self, query: Any, params: Any = None, *, prepare: bool | None = None, binary: bool | None = None
    ) -> Any:
        return super().execute(query, params, prepare=False, binary=binary)  # type: ignore[misc]


@contextmanager
def server_binding_cursor() -> Iterator[CursorWrapper]:
    """Django's cursor (its error wrapping, its execute wrappers), binding on the server."""
    connection.ensure_connection()
    raw = connection.connection
    factory = raw.cursor_factory
    # Only this cursor: the connection's own factory is back before anything else runs.
    raw.cursor_factory = _UnpreparedServerBindingCursor
    try:
        cursor = connection.cursor()
    finally:
        raw.cursor_factory = factory
    with cursor:
        yield cursor
