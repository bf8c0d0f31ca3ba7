"""A real Celery worker process for the tests about background work.

It runs the production settings against this test run's database (DATABASE_URL) and the
test run's own Redis (the broker), on a queue named for this run.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from django.conf import settings
from django.db import connection

from bench._processes import WorkerProcess, celery_worker
from memorypr.celery import app as celery_app

REPO = Path(__file__).resolve().parent.parent


def test_database_url() -> str:
    db = connection.settings_dict
    host = db.get("HOST") or (db.get("OPTIONS") or {}).get("host") or ""
    user = quote(db.get("USER") or "postgres")
    password = quote(db.get("PASSWORD") or "")
    if host.startswith("/"):
        return f"postgresql://{user}:{password}@/{db['NAME']}?host={quote(host)}"
    port = db.get("PORT") or 5432
    return f"postgresql://{user}:{password}@{host}:{port}/{db['NAME']}"


@contextmanager
def running_worker(
    *,
    concurrency: int = 2,
    ready_timeout: float = 90.0,
    extra_env: dict[str, str] | None = None,
    queue: str | None = None,
) -> Iterator[WorkerProcess]:
    """Start a worker on a queue of its own (or on `queue`, a killed worker's);
    `tasks_to(worker)` routes this process's tasks to it."""
    queue = queue or f"memorypr-test-{uuid.uuid4().hex[:8]}"
    env = {
        "DJANGO_SETTINGS_MODULE": "memorypr.settings",
        "DATABASE_URL": test_database_url(),
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "REDIS_URL": settings.TEST_REDIS_URL,
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        "CONN_MAX_AGE": "0",
        **(extra_env or {}),
    }
    with celery_worker(queue=queue, env=env, concurrency=concurrency, ready_timeout=ready_timeout) as worker:
        yield worker


@contextmanager
def tasks_to(worker: WorkerProcess) -> Iterator[WorkerProcess]:
    """Send tasks to the worker instead of running them inline, for one test only."""
    previous = (celery_app.conf.task_always_eager, celery_app.conf.task_default_queue)
    celery_app.conf.task_always_eager = False
    celery_app.conf.task_default_queue = worker.queue
    try:
        yield worker
        wait_until_idle(worker)
    finally:
        celery_app.conf.task_always_eager, celery_app.conf.task_default_queue = previous


def wait_until_idle(worker: WorkerProcess, *, timeout: float = 60.0) -> None:
    """Wait until the worker has nothing queued, reserved or running, twice in a row.

    A task the test set off may set off another (a review hands off to a merge); the database is
    emptied after the test, and that must not race a transaction still open in the worker.
    """
    deadline = time.monotonic() + timeout
    idle_checks = 0
    while idle_checks < 2:
        assert time.monotonic() < deadline, "the worker did not go idle in time"
        inspector = celery_app.control.inspect(destination=[worker.hostname], timeout=1.0)
        busy = [*((inspector.active() or {}).values()), *((inspector.reserved() or {}).values())]
        with celery_app.connection_for_read() as conn:
            queued = conn.default_channel._size(worker.queue)
        idle_checks = idle_checks + 1 if not any(busy) and not queued else 0
        time.sleep(0.2)


def wait_for(predicate, *, timeout: float = 60.0, interval: float = 0.1):  # type: ignore[no-untyped-def]
    """Poll until predicate() is truthy; return its value or fail with the last value."""
    deadline = time.monotonic() + timeout
    value = predicate()
    while not value and time.monotonic() < deadline:
        time.sleep(interval)
        value = predicate()
    assert value, "condition not met in time"
    return value
