"""How a statement whose best plan is the same for all its values is planned: once.

Every connection binds its parameters on the server (OPTIONS `server_side_binding`): each value
is sent once, apart from the statement, and a statement that a connection runs several times is
prepared there (psycopg's prepare_threshold), so it is parsed once per connection.
"""

from __future__ import annotations

from typing import Any

from django.db import connection
from psycopg.pq import Format

# Made and undone around one statement, in its round trip (see generic_plan_fetchall): outside a
# transaction the setting is the pipeline's own (local to its implicit transaction, which ends at
# its Sync); inside the caller's, it is made for the session and reset after the statement.
_PLAN_GENERIC_LOCAL = "SELECT set_config('plan_cache_mode', 'force_generic_plan', true)"
_PLAN_GENERIC = "SELECT set_config('plan_cache_mode', 'force_generic_plan', false)"
_PLAN_DEFAULT = "RESET plan_cache_mode"


def generic_plan_fetchall(sql: str, params: Any, *, binary: bool = False) -> list[tuple[Any, ...]]:
    """The rows of a statement whose best plan is the same for all its values, planned once.

    A prepared statement is still planned again at every execution while PostgreSQL estimates
    that a plan made for the values is much cheaper than a generic one (plan_cache_mode auto),
    which for a long statement costs more than running it. Here the generic plan is asked for
    the one statement: the setting is made before it in one pipeline, one round trip and one
    transaction (the caller's, or an implicit one), so it reaches no other statement, and a
    failure rolls it back with the rest. Outside a transaction the implicit one ends with the
    pipeline and takes the setting with it; inside the caller's, the setting is reset after the
    statement (a third statement in the same round trip).

    `binary`: the rows come in PostgreSQL's binary form, for a statement of numbers, times and
    text only. Numbers and times need no parsing then (150 rows of retrieval's candidates took
    200 µs to read instead of 350), but json would arrive decoded, where Django's fields expect text.
    """
    connection.ensure_connection()
    server = connection.connection
    in_transaction = not server.autocommit  # an atomic block, or autocommit turned off
    # The pipeline reports a failure on leaving it too: as Django's error, like any other.
    # The settings go straight to psycopg: they are no statement of the caller's.
    with connection.cursor() as cursor, connection.wrap_database_errors, server.pipeline():
        if binary:
            cursor.cursor.format = Format.BINARY
        server.execute(_PLAN_GENERIC if in_transaction else _PLAN_GENERIC_LOCAL)
        cursor.execute(sql, params)
        if in_transaction:
            server.execute(_PLAN_DEFAULT)
        return cursor.fetchall()
