from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.utils import timezone

from memorypr.common.models import Heartbeat
from memorypr.common.tasks import WORKER_HEARTBEAT, heartbeat
from memorypr.monitoring.health import health_check
from memorypr.pulls.models import KnowledgePullRequest
from reviewer.pipeline import pull_review
from tests.factories import agent_with_token
from tests.reviewer.builders import fact, op_spec, submit
from tests.worker import wait_for


def beat(*, seconds_ago: float = 0) -> None:
    Heartbeat.objects.update_or_create(
        name=WORKER_HEARTBEAT, defaults={"beat_at": timezone.now() - timedelta(seconds=seconds_ago)}
    )


def approved_unmerged(*, approved_seconds_ago: float) -> KnowledgePullRequest:
    """A KPR the rules approved whose merge hand-off never ran (no commit in this test)."""
    agent, _ = agent_with_token(name="proposer", namespaces=["demo"])
    fact(key="home_city", value="Beijing")
    pull = submit(agent, op_spec(quote="I moved to Shenzhen last month"))
    outcome = pull_review(pull_id=str(pull.id))
    assert outcome is not None and outcome.status == "APPROVED"
    KnowledgePullRequest.objects.filter(pk=pull.pk).update(
        reviewed_at=timezone.now() - timedelta(seconds=approved_seconds_ago)
    )
    return pull


@pytest.fixture(autouse=True)
def _rules_only(settings):
    settings.OPENAI_BASE_URL = ""


@pytest.mark.django_db
def test_healthy_with_a_fresh_heartbeat_and_fresh_work(client):
    # given a heartbeat 5 s old and a KPR submitted just now
    beat(seconds_ago=5)
    agent, _ = agent_with_token(name="proposer", namespaces=["demo"])
    submit(agent)
    # when
    response = client.get("/healthz")
    # then
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["problems"] == []
    assert body["database"] == "ok" and body["pgvector"].startswith("0.8") and body["broker"] == "ok"
    assert 4 <= body["worker"] < 30
    assert 0 <= body["oldestPendingSeconds"] < 30
    assert body["oldestApprovedUnmergedSeconds"] is None
    assert "Retry-After" not in response


@pytest.mark.django_db
def test_degraded_without_any_heartbeat(client):
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response["Retry-After"] == "10"
    body = response.json()
    assert body["status"] == "degraded" and body["worker"] is None
    assert [p.split(":")[0] for p in body["problems"]] == ["worker"]


@pytest.mark.django_db
def test_degraded_when_the_heartbeat_is_stale(client):
    beat(seconds_ago=django_settings.MEMORYPR_HEALTH_HEARTBEAT_MAX_SECONDS + 30)
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "degraded" and body["worker"] >= 90
    assert body["problems"] == ["worker: last heartbeat 90 s ago (limit 60 s)"]


@pytest.mark.django_db
def test_degraded_when_a_pending_kpr_waits_longer_than_the_threshold(client, settings):
    # given a live worker and a KPR nobody reviewed; created_at cannot be backdated (the KPR's
    # content is immutable), so the threshold comes down to it instead
    beat()
    agent, _ = agent_with_token(name="proposer", namespaces=["demo"])
    submit(agent)
    settings.MEMORYPR_HEALTH_STUCK_SECONDS = 0
    # when
    response = client.get("/healthz")
    # then
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "degraded"
    assert len(body["problems"]) == 1 and body["problems"][0].startswith("review: a KPR has waited")


@pytest.mark.django_db
def test_a_pending_kpr_is_stuck_once_older_than_the_default_threshold():
    beat()
    agent, _ = agent_with_token(name="proposer", namespaces=["demo"])
    submit(agent)
    later = timezone.now() + timedelta(seconds=django_settings.MEMORYPR_HEALTH_STUCK_SECONDS + 10)
    report = health_check(now=later)
    assert report.status == "degraded"
    assert any(p.startswith("review: a KPR has waited 16") for p in report.problems), report.problems


@pytest.mark.django_db
def test_degraded_when_an_approved_kpr_stays_unmerged(client):
    beat()
    approved_unmerged(approved_seconds_ago=200)
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["oldestPendingSeconds"] is None
    assert 200 <= body["oldestApprovedUnmergedSeconds"] < 230
    assert body["problems"] == ["merge: an approved KPR has waited 200 s for its merge (limit 150 s)"]


@pytest.mark.django_db
def test_a_recently_approved_kpr_awaiting_its_merge_is_healthy(client):
    beat()
    approved_unmerged(approved_seconds_ago=30)
    response = client.get("/healthz")
    assert response.status_code == 200, response.json()
    assert 30 <= response.json()["oldestApprovedUnmergedSeconds"] < 60


@pytest.mark.django_db
def test_down_when_the_database_does_not_answer(client, monkeypatch):
    from django.db import OperationalError

    from memorypr.monitoring import health

    def refuse() -> None:
        raise OperationalError("connection refused")

    monkeypatch.setattr(health, "database_pgvector_version", refuse)
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response["Retry-After"] == "10"
    body = response.json()
    assert body["status"] == "down" and body["database"] == "error: OperationalError"
    assert body["problems"] == ["database: error: OperationalError"]


@pytest.mark.django_db
def test_a_broker_that_hangs_cannot_hold_healthz(client, monkeypatch):
    import time

    from memorypr.monitoring import health

    monkeypatch.setattr(health, "_broker_probe", lambda: time.sleep(10) or "ok")
    beat()
    start = time.monotonic()
    body = client.get("/healthz").json()
    assert time.monotonic() - start < 2.5
    assert body["broker"] == "error: timeout" and body["status"] == "degraded"
    assert body["problems"] == ["broker: error: timeout"]


@pytest.mark.django_db
def test_the_heartbeat_task_upserts_one_row():
    heartbeat()
    first = Heartbeat.objects.get(name=WORKER_HEARTBEAT).beat_at
    heartbeat()
    assert Heartbeat.objects.count() == 1
    second = Heartbeat.objects.get(name=WORKER_HEARTBEAT).beat_at
    assert first < second <= timezone.now()


def test_beat_sends_the_heartbeat_every_ten_seconds():
    from memorypr.celery import app

    entry = django_settings.CELERY_BEAT_SCHEDULE["common-heartbeat"]
    assert entry["task"] == "common.heartbeat" and entry["schedule"] == 10.0
    assert entry["task"] in app.tasks and heartbeat.name == entry["task"]


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_travels_through_a_real_worker(live_worker, client):
    # given no heartbeat yet
    assert not Heartbeat.objects.exists()
    # when beat's message goes through the broker to the worker
    heartbeat.delay()
    # then the worker wrote the row, and /healthz sees a live worker
    row = wait_for(lambda: Heartbeat.objects.filter(name=WORKER_HEARTBEAT).first(), timeout=60)
    assert timezone.now() - row.beat_at < timedelta(seconds=60)
    body = client.get("/healthz").json()
    assert body["worker"] is not None and body["worker"] < 60
    assert not any(p.startswith("worker") for p in body["problems"])
