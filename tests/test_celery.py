"""A worker keeps its database connections across tasks, and replaces one that broke."""

from __future__ import annotations

import pytest
from django.db import connection

from memorypr.common.selectors import heartbeat_last
from memorypr.common.tasks import WORKER_HEARTBEAT, heartbeat
from tests import worker as test_worker
from tests.worker import running_worker, tasks_to, wait_for

APPLICATION = "memorypr-reuse-test"


def _worker_backends() -> set[int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE application_name = %s", [APPLICATION])
        return {int(row[0]) for row in cursor.fetchall()}


def _heartbeats(count: int) -> None:
    before = heartbeat_last(name=WORKER_HEARTBEAT)
    for _ in range(count):
        heartbeat.delay()
    wait_for(lambda: heartbeat_last(name=WORKER_HEARTBEAT) not in (None, before), timeout=60)


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_keeps_its_connections_across_tasks_and_replaces_a_broken_one():
    # given a worker whose connections may live a minute, as in production
    url = test_worker.test_database_url()
    env = {
        "CONN_MAX_AGE": "60",
        "DATABASE_URL": f"{url}{'&' if '?' in url else '?'}application_name={APPLICATION}",
    }
    with running_worker(concurrency=1, extra_env=env) as worker, tasks_to(worker):
        # when it runs tasks, then more tasks
        _heartbeats(5)
        kept = _worker_backends()
        _heartbeats(5)
        # then the same server process served them all
        assert len(kept) == 1
        assert _worker_backends() == kept
        # and when that server process is ended under it, the next task still runs, on a new one
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [next(iter(kept))])
        wait_for(lambda: not (_worker_backends() & kept), timeout=10)
        _heartbeats(1)
        _heartbeats(1)
        assert _worker_backends() and not (_worker_backends() & kept)
