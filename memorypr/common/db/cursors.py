"""A cursor whose statements are never prepared, for the statements a generic plan would get wrong.

Every connection binds its parameters on the server (OPTIONS `server_side_binding`): each value
is sent once, apart from the statement, and a statement that a connection runs several times is
prepared there (psycopg's prepare_threshold), so it is parsed and planned once per connection.
Retrieval's walk of the HNSW index must not be: its best plan depends on the values (how large
a subject is decides which index it walks), and a prepared statement may settle on one generic
plan for all.
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
def unprepared_cursor() -> Iterator[CursorWrapper]:
    """Django's cursor (its error wrapping, its execute wrappers), binding on the server, never preparing."""
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
