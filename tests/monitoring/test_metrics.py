from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.models import F
from prometheus_client.parser import text_string_to_metric_families

from memorypr.pulls.models import KnowledgePullRequest
from reviewer.pipeline import pull_review
from tests.factories import agent_with_token
from tests.reviewer.builders import fact, op_spec, submit


def scrape(client, **headers) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """/metrics parsed: {sample name: {sorted labels: value}}."""
    response = client.get("/metrics", **headers)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    samples: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return samples


def value(samples, name: str, **labels: str) -> float:
    return samples.get(name, {}).get(tuple(sorted(labels.items())), 0.0)


@pytest.fixture(autouse=True)
def _rules_only(settings):
    settings.OPENAI_BASE_URL = ""
    settings.MEMORYPR_METRICS_TOKEN = ""


@pytest.fixture
def proposer(db):
    agent, _ = agent_with_token(name="proposer", namespaces=["demo"])
    return agent


def reviewed(proposer, *, subject: str, quote: str, merge: bool, capture) -> KnowledgePullRequest:
    fact(key="home_city", value="Beijing", subject=subject)
    pull = submit(proposer, op_spec(quote=quote), subject=subject)
    with capture(execute=merge):
        pull_review(pull_id=str(pull.id))
    pull.refresh_from_db()
    return pull


@pytest.mark.django_db
def test_a_request_is_timed_under_its_route_not_its_path(client, agent_client):
    # given
    before = scrape(client)
    # when a KPR is read by its id
    pull_id = "00000000-0000-0000-0000-000000000000"
    assert agent_client.get(f"/api/v1/pulls/{pull_id}").status_code == 404
    # then the sample is filed under the URL pattern, with method and status
    after = scrape(client)
    labels = {"route": "/api/v1/pulls/<uuid:pull_id>", "method": "GET", "status": "404"}
    count = "memorypr_http_request_duration_seconds_count"
    assert value(after, count, **labels) == value(before, count, **labels) + 1
    assert value(after, "memorypr_http_request_duration_seconds_bucket", le="+Inf", **labels) >= 1
    assert not any(pull_id in dict(key).get("route", "") for key in after[count])


@pytest.mark.django_db
def test_pull_counts_by_status_match_the_database(client, proposer, django_capture_on_commit_callbacks):
    # given two PENDING, one APPROVED and merged, one APPROVED awaiting its merge
    submit(proposer, subject="p1")
    submit(proposer, subject="p2")
    reviewed(proposer, subject="m1", quote="I moved to Shenzhen last month", merge=True,
             capture=django_capture_on_commit_callbacks)  # fmt: skip
    reviewed(proposer, subject="u1", quote="I moved to Shenzhen last month", merge=False,
             capture=django_capture_on_commit_callbacks)  # fmt: skip
    # when
    samples = scrape(client)
    # then every (review, merge) pair is reported, and agrees with the table
    pulls = samples["memorypr_pulls"]
    assert len(pulls) == 16
    for (review_status, merge_status), n in {
        ("PENDING", "UNMERGED"): 2,
        ("APPROVED", "MERGED"): 1,
        ("APPROVED", "UNMERGED"): 1,
        ("REJECTED", "UNMERGED"): 0,
    }.items():
        assert value(samples, "memorypr_pulls", review_status=review_status, merge_status=merge_status) == n
        in_table = KnowledgePullRequest.objects.filter(review_status=review_status, merge_status=merge_status)
        assert in_table.count() == n
    assert value(samples, "memorypr_pull_merge_outcomes", outcome="MERGED") == 1
    assert value(samples, "memorypr_pull_merge_outcomes", outcome="CONFLICT") == 0
    assert value(samples, "memorypr_database_metrics_up") == 1


@pytest.mark.django_db
def test_review_and_merge_latency_buckets_count_the_kprs(
    client, proposer, django_capture_on_commit_callbacks
):
    # given three merged KPRs reviewed 20 s after submission and merged 3 s after approval
    for subject in ("a", "b", "c"):
        reviewed(proposer, subject=subject, quote="I moved to Shenzhen last month", merge=True,
                 capture=django_capture_on_commit_callbacks)  # fmt: skip
    submit(proposer, subject="pending")  # not reviewed: in neither histogram
    merged = KnowledgePullRequest.objects.filter(merge_status="MERGED")
    assert merged.count() == 3
    merged.update(reviewed_at=F("created_at") + timedelta(seconds=20))
    merged.update(merged_at=F("reviewed_at") + timedelta(seconds=3))
    # when
    samples = scrape(client)
    # then
    review = "memorypr_review_latency_seconds"
    assert value(samples, f"{review}_count") == 3
    assert value(samples, f"{review}_sum") == pytest.approx(60)
    assert value(samples, f"{review}_bucket", le="15.0") == 0
    assert value(samples, f"{review}_bucket", le="30.0") == 3
    assert value(samples, f"{review}_bucket", le="+Inf") == 3
    merge = "memorypr_merge_latency_seconds"
    assert value(samples, f"{merge}_count") == 3
    assert value(samples, f"{merge}_sum") == pytest.approx(9)
    assert value(samples, f"{merge}_bucket", le="2.5") == 0
    assert value(samples, f"{merge}_bucket", le="5.0") == 3


@pytest.mark.django_db
def test_decisions_by_rule_and_by_reviewer_appear(client, proposer, django_capture_on_commit_callbacks):
    # given one KPR approved by the rules and one the evidence rule does not let through
    reviewed(proposer, subject="ok", quote="I moved to Shenzhen last month", merge=False,
             capture=django_capture_on_commit_callbacks)  # fmt: skip
    mars = op_spec(action="CREATE", key="work_location", old_value=None, new_value="Mars",
                   quote="I'm going to work on Mars tomorrow")  # fmt: skip
    held = submit(proposer, mars, subject="held")
    assert pull_review(pull_id=str(held.id)).status == "NEEDS_HUMAN_REVIEW"
    # when
    samples = scrape(client)
    # then every rule's verdicts are counted from the rules' findings, future_plan's escalation too
    checks = samples["memorypr_review_rule_checks_total"]
    rules = {dict(key)["rule"] for key in checks}
    assert len(rules) >= 3
    assert sum(checks.values()) == 2 * len(rules)  # one operation per KPR, every rule checked it
    assert value(samples, "memorypr_review_rule_checks_total", rule="future_plan", verdict="escalate") == 1
    assert value(samples, "memorypr_review_rule_checks_total", rule="future_plan", verdict="pass") == 1
    decisions = samples["memorypr_review_decisions_total"]
    assert value(samples, "memorypr_review_decisions_total", reviewer_kind="rules", verdict="APPROVE") >= 1
    assert sum(n for key, n in decisions.items() if dict(key)["reviewer_kind"] == "system") == 2


@pytest.mark.django_db
def test_celery_queue_length_is_read_from_redis(client):
    from memorypr.celery import app

    samples = scrape(client)
    assert (("queue", app.conf.task_default_queue),) in samples["memorypr_celery_queue_length"]


@pytest.mark.django_db
def test_the_token_when_set_is_required(client, settings):
    settings.MEMORYPR_METRICS_TOKEN = "s3cret"
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert "memorypr_pulls" in scrape(client, HTTP_AUTHORIZATION="Bearer s3cret")


@pytest.mark.django_db
def test_several_processes_report_through_the_multiprocess_folder(client, tmp_path, monkeypatch):
    # given another web process (its own pid) that timed a request into the shared folder
    from prometheus_client import Histogram, values

    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    monkeypatch.setattr(values, "ValueClass", values.MultiProcessValue(process_identifier=lambda: 4242))
    other = Histogram(
        "memorypr_http_request_duration_seconds", "", ["route", "method", "status"], registry=None
    )
    other.labels(route="/api/v1/pulls", method="POST", status="201").observe(0.2)
    assert any(tmp_path.iterdir())
    # when this process answers the scrape
    samples = scrape(client)
    # then it reports the other process's sample, and the database figures once
    labels = {"route": "/api/v1/pulls", "method": "POST", "status": "201"}
    assert value(samples, "memorypr_http_request_duration_seconds_count", **labels) == 1
    assert value(samples, "memorypr_database_metrics_up") == 1
    assert "memorypr_pulls" in samples
