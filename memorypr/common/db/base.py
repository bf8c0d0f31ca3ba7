"""Django's PostgreSQL backend, patient when it opens a connection.

A database that is restarting (a failover, an operator's restart, the embedded server brought
back by `make run`) refuses connections for a second or two. Opening a connection retries
for up to MEMORYPR_DB_CONNECT_WAIT_SECONDS (default 5) before the error reaches the request,
which then answers 503 with Retry-After, or the task, which is retried. Only the opening of a
connection is retried: a statement is never sent twice.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import psycopg
from django.conf import settings
from django.db.backends.postgresql import base
from psycopg_pool import PoolTimeout

from memorypr.common.db.tenancy import tenancy_scope_clear

logger = logging.getLogger(__name__)


class DatabaseWrapper(base.DatabaseWrapper):
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

    def init_connection_state(self) -> None:
        """Runs on every checkout, pooled or new: no connection starts with an earlier request's scope."""
        super().init_connection_state()
        with self.connection.cursor() as cursor:
            tenancy_scope_clear(cursor=cursor)
