"""Which namespaces the database lets this connection see: the row-level security scope.

Every tenant table carries a policy (`memorypr/common/db/rls.py`) that shows a row only when
its namespace is in `memorypr.namespaces`, or when `memorypr.all_namespaces` is `on`. The web
tier connects as a role that owns no table, so the policies hold for it: a query that forgets
its namespace filter finds nothing of another tenant. The owner role (migrations, the Celery
worker and beat, management commands) bypasses the policies, as a table's owner does.

The scope is a session setting, written once per request by the request's authentication
(an agent's token, in the statement that reads it; a reviewer's login) and cleared whenever a
pooled connection goes back to its pool, or a persistent one starts a request (see
`memorypr.common.db.base`): a connection never carries one request's scope into the next.
Requests run in autocommit, so a transaction-local setting would not outlive the first
statement; that clearing is what makes the session setting safe.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import connection

NAMESPACES_SETTING = "memorypr.namespaces"
ALL_NAMESPACES_SETTING = "memorypr.all_namespaces"

_SET_SQL = (
    f"SELECT set_config('{NAMESPACES_SETTING}', %s, %s), set_config('{ALL_NAMESPACES_SETTING}', %s, %s)"
)


def _array_literal(names: Iterable[str]) -> str:
    # Namespace names are slugs, so no element needs quoting; quote anyway so that a name
    # with a comma or a brace can never widen the scope.
    items = sorted({str(name) for name in names})
    return "{" + ",".join('"' + item.replace("\\", "\\\\").replace('"', '\\"') + '"' for item in items) + "}"


def _scope_write(cursor: Any, *, names: Iterable[str], all_namespaces: bool, local: bool) -> None:
    cursor.execute(_SET_SQL, [_array_literal(names), local, "on" if all_namespaces else "off", local])


def tenancy_scope_set(*, namespaces: Iterable[str], all_namespaces: bool = False) -> None:
    """Scope this connection to these namespaces (or to all) until the next checkout clears it."""
    with connection.cursor() as cursor:
        _scope_write(cursor, names=namespaces, all_namespaces=all_namespaces, local=False)


def tenancy_scope_clear(*, cursor: Any | None = None) -> None:
    """No namespace at all: every tenant table reads as empty for a role under the policies."""
    if cursor is not None:
        _scope_write(cursor, names=(), all_namespaces=False, local=False)
        return
    with connection.cursor() as own:
        _scope_write(own, names=(), all_namespaces=False, local=False)


def tenancy_scope_clear_if_connected() -> None:
    """At the start of a request: a persistent connection still holds the previous request's scope."""
    if connection.connection is not None:
        tenancy_scope_clear()


def tenancy_scope_all_local() -> None:
    """Aggregates over every namespace (health, metrics), for the current transaction only.

    The setting is transaction-local: it ends with the caller's atomic block, whatever the
    request's own scope is.
    """
    if not connection.in_atomic_block:
        raise RuntimeError("tenancy_scope_all_local() needs a transaction: it would end with this statement")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT set_config('{ALL_NAMESPACES_SETTING}', 'on', true)")


def tenancy_scope_current() -> tuple[list[str], bool]:
    """The namespaces this connection is scoped to, and whether it sees all of them."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT coalesce(nullif(current_setting('{NAMESPACES_SETTING}', true), ''), '{{}}')::text[],"
            f" coalesce(current_setting('{ALL_NAMESPACES_SETTING}', true), '') = 'on'"
        )
        names, everything = cursor.fetchone()
    return sorted(names), bool(everything)
