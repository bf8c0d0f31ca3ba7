"""A new web process warms up before its first request, then freezes what it built."""

from __future__ import annotations

import gc

import kombu.pools
import pytest

from memorypr.celery import app as celery_app
from memorypr.warm import web_process_warm


@pytest.mark.django_db
def test_a_warmed_web_process_has_its_broker_connection_and_freezes_what_the_warm_up_built(monkeypatch):
    # given a process just forked (empty broker pools), with the collector not yet tuned
    monkeypatch.setenv("MEMORYPR_WARM_EMBEDDINGS", "0")
    kombu.pools.reset()
    celery_app._after_fork()
    thresholds = gc.get_threshold()
    gc.unfreeze()
    try:
        # when it warms up
        web_process_warm()
        # then the producer its first submit takes is connected, and what was built is frozen
        with celery_app.producer_or_acquire() as producer:
            assert producer.connection.connected
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
