from __future__ import annotations

import pytest
from django.conf import settings

from memorypr.celery import app
from memorypr.evolution import tasks


def test_every_beat_entry_names_a_registered_task():
    # given
    app.loader.import_default_modules()
    schedule = settings.CELERY_BEAT_SCHEDULE
    # then
    names = {entry["task"] for entry in schedule.values()}
    assert {
        "evolution.forgetting",
        "evolution.capacity",
        "evolution.consolidation",
        "evolution.expiry",
        "evolution.purge",
        "working_memory.transcript_purge",
    } <= names
    assert names <= set(app.tasks)


@pytest.mark.django_db
def test_tasks_run_their_jobs_and_report():
    # when
    results = [task.apply().get() for task in (tasks.forgetting_task, tasks.expiry_task, tasks.purge_task)]
    # then
    assert [r["job"] for r in results] == ["forgetting", "expiry", "purge"]
    assert all(r["proposed"] == 0 for r in results)
