"""A worker keeps its database connections across tasks, and replaces one that broke; a new
process connects to the broker before its first request."""

from __future__ import annotations

import os
import subprocess
import sys

import kombu.pools
import pytest
import redis
from celery import Celery
from django.conf import settings
from django.db import connection

import memorypr.celery as memorypr_celery
from memorypr.celery import app as celery_app
from memorypr.celery import celery_publishing_warm
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


@pytest.mark.django_db
def test_the_publishing_warm_up_leaves_a_connected_producer_in_the_pool_and_the_queue_declared():
    # given a broker with no binding of the task queue yet, and a process just forked: its
    # pools are empty (what Celery does after a fork)
    broker = redis.Redis.from_url(settings.TEST_REDIS_URL)
    queue = celery_app.conf.task_default_queue
    broker.delete(f"_kombu.binding.{queue}")
    kombu.pools.reset()
    celery_app._after_fork()
    # when a new process warms up
    warmed = celery_publishing_warm()
    # then the producer a first task would take is already connected, and its queue declared
    assert warmed is True
    with celery_app.producer_or_acquire() as producer:
        assert producer.connection.connected
    assert broker.smembers(f"_kombu.binding.{queue}")


def test_without_a_broker_the_warm_up_gives_up_at_once_and_says_so(monkeypatch, caplog):
    # given an app whose broker does not answer
    unreachable = Celery("unreachable", broker="redis://127.0.0.1:1/0")
    monkeypatch.setattr(memorypr_celery, "app", unreachable)
    # when a process warms up, then it says so and serves on: the first task sent connects
    assert celery_publishing_warm() is False
    assert "broker not reached before the first request" in caplog.text


_MASTER_START = """
import sys
from celery.signals import worker_init
import memorypr.celery
if sys.argv[1] == "start":
    worker_init.send(sender=None)
jieba = sys.modules.get("jieba")
print("loaded" if jieba is not None and jieba.dt.initialized else "not loaded")
"""


@pytest.mark.parametrize(("step", "expected"), [("start", "loaded"), ("import", "not loaded")])
def test_a_worker_master_loads_the_word_segmenter_before_its_pool_forks(step, expected):
    # given a fresh interpreter with the project's Celery app, as a worker master is
    env = {**os.environ, "MEMORYPR_WARM_UP": "1", "MEMORYPR_WORKER_SOLE_CONSUMER": "0"}
    # when it starts as a worker (before the pool forks its children), or only imports the app
    result = subprocess.run(
        [sys.executable, "-c", _MASTER_START, step],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    # then only the start loads jieba's dictionary, for the children to inherit
    assert result.stdout.strip().splitlines()[-1] == expected
