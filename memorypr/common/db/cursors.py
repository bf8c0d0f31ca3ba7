"""How a statement whose best plan is the same for all its values is planned: once.

Every connection binds its parameters on the server (OPTIONS `server_side_binding`): each value
is sent once, apart from the statement, and a statement that a connection runs several times is
prepared there (psycopg's prepare_threshold), so it is parsed once per connection.
"""

from __future__ import annotations

import hashlib
import weakref
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.db import connection
from psycopg.pq import Format

# Made and undone around one statement, in its round trip (see `_forced_fetchall`): outside a
# transaction the setting is the pipeline's own (local to its implicit transaction, which ends at
# its Sync); inside the caller's, it is made for the session and reset after the statement.
_PLAN_GENERIC_LOCAL = "SELECT set_config('plan_cache_mode', 'force_generic_plan', true)"
_PLAN_GENERIC = "SELECT set_config('plan_cache_mode', 'force_generic_plan', false)"
_PLAN_DEFAULT = "RESET plan_cache_mode"

# PostgreSQL plans a prepared statement for its values five times before it weighs the generic
# plan against them (plancache.c); a statement that keeps choosing the generic plan plans at
# most that many again between two looks (after its plan is invalidated).
_CUSTOM_PLANS_BEFORE_CHOICE = 5
# Runs of a statement, on a connection that holds it generic by itself, between two looks.
LOOK_EVERY = 100


@dataclass
class _Planning:
    """How one statement is planned on one server connection (see `generic_plan_fetchall`)."""

    runs: int = 0
    next_look: int = 0
    forced: bool = False  # the statement runs with the setting made around it
    generic: bool = False  # seen choosing the generic plan by itself: it runs as it is
    custom_seen: int = 0  # its custom plans at the last look


# Per server connection (a pool hands out several; each holds its own prepared statements).
_PLANNING: weakref.WeakKeyDictionary[Any, dict[str, _Planning]] = weakref.WeakKeyDictionary()


@lru_cache(maxsize=512)
def _marked(sql: str) -> tuple[str, str]:
    """The statement with a mark that finds it among the connection's prepared statements, and the mark."""
    mark = f"/* generic plan {hashlib.blake2b(sql.encode(), digest_size=8).hexdigest()} */"
    return f"{mark}\n{sql}", mark


def generic_plan_fetchall(sql: str, params: Any, *, binary: bool = False) -> list[tuple[Any, ...]]:
    """The rows of a statement whose best plan is the same for all its values, planned once.

    A prepared statement is still planned again at every execution while PostgreSQL estimates
    that a plan made for the values is much cheaper than a generic one (plan_cache_mode auto),
    which for a long statement costs more than running it. Most such statements take the generic
    plan by themselves after PostgreSQL's first five custom plans; asking for it costs a pipeline
    of two or three statements (0.4 ms of a 7 ms retrieval at 100k facts). So on each connection
    a statement first runs as it is, and once it is prepared and past those five plans, the
    connection's own counts (pg_prepared_statements) tell whether it took the generic plan. If
    it did, it goes on as it is, looked at again every LOOK_EVERY runs; if not (or if the
    connection prepares nothing), from then on the generic plan is asked for around it
    (`_forced_fetchall`). A statement planned for its values after a look is asked for it too.

    `binary`: the rows come in PostgreSQL's binary form, for a statement of numbers, times and
    text only. Numbers and times need no parsing then (150 rows of retrieval's candidates took
    200 µs to read instead of 350), but json would arrive decoded, where Django's fields expect text.
    """
    connection.ensure_connection()
    server = connection.connection
    marked, mark = _marked(sql)
    planning = _PLANNING.setdefault(server, {}).setdefault(marked, _Planning())
    if planning.runs == 0:
        threshold = server.prepare_threshold
        planning.forced = threshold is None
        # the run after which PostgreSQL has chosen between the plans once
        planning.next_look = (threshold or 0) + _CUSTOM_PLANS_BEFORE_CHOICE + 1
    planning.runs += 1
    if planning.forced:
        return _forced_fetchall(marked, params, binary=binary)
    with connection.cursor() as cursor:
        if binary:
            cursor.cursor.format = Format.BINARY
        cursor.execute(marked, params)
        rows = cursor.fetchall()
    if planning.runs >= planning.next_look:
        _look(planning, mark=mark)
    return rows


def _look(planning: _Planning, *, mark: str) -> None:
    """Whether the statement still takes the generic plan by itself, from the connection's counts."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE %(mark)s",
            {"mark": f"{mark}%"},
        )
        counts = cursor.fetchone()
    if counts is None:  # not prepared (yet, or any more): ask for the plan
        planning.forced = True
        return
    generic, custom = int(counts[0]), int(counts[1])
    # a statement prepared again since the last look counts from zero
    new_custom = custom - planning.custom_seen if custom >= planning.custom_seen else custom
    planning.generic = generic > 0 and new_custom <= _CUSTOM_PLANS_BEFORE_CHOICE
    planning.forced = not planning.generic
    planning.custom_seen = custom
    planning.next_look = planning.runs + LOOK_EVERY


def generic_plan_taken_alone(sql: str) -> bool | None:
    """On this connection: whether the statement was seen taking the generic plan by itself (True),
    is run with the setting made around it (False), or is not yet known (None)."""
    server = connection.connection
    planning = _PLANNING.get(server, {}).get(_marked(sql)[0]) if server is not None else None
    if planning is None or not (planning.generic or planning.forced):
        return None
    return planning.generic and not planning.forced


def _forced_fetchall(sql: str, params: Any, *, binary: bool) -> list[tuple[Any, ...]]:
    """The statement's rows, with the generic plan asked for in its own round trip.

    The setting is made before it in one pipeline, one round trip and one transaction (the
    caller's, or an implicit one), so it reaches no other statement, and a failure rolls it back
    with the rest. Outside a transaction the implicit one ends with the pipeline and takes the
    setting with it; inside the caller's, the setting is reset after the statement (a third
    statement in the same round trip).
    """
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
