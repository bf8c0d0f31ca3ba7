"""Django's PostgreSQL backend, patient when it opens a connection.

A database that is restarting (a failover, an operator's restart, the embedded server brought
back by `make run`) refuses connections for a second or two. Opening a connection retries
for up to MEMORYPR_DB_CONNECT_WAIT_SECONDS (default 5) before the error reaches the request,
which then answers 503 with Retry-After, or the task, which is retried. Only the opening of a
connection is retried: a statement is never sent twice.

A pooled connection must not carry the last request's row-level security scope, and it must
be alive when it is handed out (a restarted database leaves dead ones in the pool). Both cost
the request nothing: the scope is cleared as the connection goes back to the pool, on the
pool's own threads, before anyone can take it again; and at checkout, a connection whose socket
has something to read (an idle connection never has, unless the server ended it) is checked
with a statement, and replaced if it fails.
"""

from __future__ import annotations

import logging
import select
import time
from typing import Any

import psycopg
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.backends.base.base import NO_DB_ALIAS
from django.db.backends.postgresql import base
from psycopg_pool import ConnectionPool, PoolTimeout

from memorypr.common.db.params import adapters_with_params
from memorypr.common.db.statements import statement_cache_widen
from memorypr.common.db.tenancy import tenancy_scope_clear
from memorypr.common.db.timestamps import adapters_with_fast_timestamps

logger = logging.getLogger(__name__)

statement_cache_widen()


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self) -> dict[str, Any]:
        params: dict[str, Any] = super().get_connection_params()
        if "context" in params:
            # Time columns parsed in C (memorypr.common.db.timestamps): the same values, 4x cheaper;
            # query vectors and lists of terms sent in binary (memorypr.common.db.params).
            params["context"] = adapters_with_params(adapters_with_fast_timestamps(params["context"]))
        return params

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        wait = float(settings.MEMORYPR_DB_CONNECT_WAIT_SECONDS)
        deadline = time.monotonic() + wait
        delay = 0.05
        while True:
            try:
                return super().get_new_connection(conn_params)
            except PoolTimeout:
                # Every pooled connection is in use: the pool has waited already, and a saturated
                # server is not a restarting one. The request answers 503 now.
                raise
            except psycopg.OperationalError as exc:
                if time.monotonic() + delay > deadline:
                    raise
                logger.info("database not accepting connections (%s); retrying in %.2f s", exc, delay)
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    @property
    def pool(self) -> ConnectionPool | None:
        """Django's pool, with the tenancy scope cleared on return and liveness checked on checkout."""
        pool_options = self.settings_dict["OPTIONS"].get("pool")
        if self.alias == NO_DB_ALIAS or not pool_options:
            return None
        # Django's own registry of pools (one per alias and process), which close_pool() empties.
        pools: dict[str, ConnectionPool] = self._connection_pools  # type: ignore[attr-defined]
        if self.alias not in pools:
            if self.settings_dict.get("CONN_MAX_AGE", 0) != 0:
                raise ImproperlyConfigured("Pooling doesn't support persistent connections.")
            connect_kwargs = self.get_connection_params()
            connect_kwargs["autocommit"] = True
            pool = ConnectionPool(
                kwargs=connect_kwargs,
                open=False,
                configure=self._configure_connection,  # type: ignore[attr-defined]
                check=_checkout_check,
                reset=_return_reset,
                **({} if pool_options is True else pool_options),
            )
            pools.setdefault(self.alias, pool)
        return pools[self.alias]

    def init_connection_state(self) -> None:
        """Runs on every checkout: no connection starts with an earlier request's scope.

        A pooled connection was cleared on its way back to the pool (`_return_reset`).
        """
        super().init_connection_state()
        if self.pool is None:
            with self.connection.cursor() as cursor:
                tenancy_scope_clear(cursor=cursor)


def _return_reset(conn: psycopg.Connection[Any]) -> None:
    """Clears the tenancy scope of a connection going back to the pool; raising discards it.

    The pool runs this on its worker threads, after the request has answered, and puts the
    connection back in the pool only once it returns.
    """
    _scope_cleared(conn)


def _checkout_check(conn: psycopg.Connection[Any]) -> None:
    """Raises on a dead connection (the pool then opens another), without a round trip if alive.

    An idle connection has nothing to read: a server that ended it (a restart, a terminated
    backend) has sent its goodbye, or closed the socket. Only then is a statement sent, which
    fails on a dead connection and lets a live one (a stray notice) through.
    """
    waiting = select.poll()  # poll, not select: any descriptor number, however many are open
    waiting.register(conn.fileno(), select.POLLIN)
    if waiting.poll(0):
        _scope_cleared(conn)


def _scope_cleared(conn: psycopg.Connection[Any]) -> None:
    """One statement outside any transaction: the scope cleared, and the connection proven alive."""
    autocommit = conn.autocommit
    conn.autocommit = True
    try:
        with conn.cursor() as cursor:
            tenancy_scope_clear(cursor=cursor)
    finally:
        if not autocommit:
            conn.autocommit = False
