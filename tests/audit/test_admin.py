from __future__ import annotations

import pytest

from memorypr.agents.services import reviewer_create
from memorypr.audit.services import audit_record


@pytest.mark.django_db
def test_reviewers_browse_and_filter_the_audit_log_read_only(client):
    # given a reviewer and two events
    reviewer_create(username="ann", password="pw-123456", namespaces=["demo"])
    audit_record(event_type="pull.submitted", actor="agent:a", namespace="demo")
    audit_record(event_type="pull.reviewed", actor="rules:x", namespace="demo")
    audit_record(event_type="pull.reviewed", actor="rules:y", namespace="other")
    client.login(username="ann", password="pw-123456")
    # when
    listing = client.get("/admin/audit/auditevent/", {"event_type": "pull.reviewed"})
    # then: only the demo namespace's reviewed event
    assert listing.status_code == 200
    assert listing.context["cl"].result_count == 1
    assert [e.actor for e in listing.context["cl"].result_list] == ["rules:x"]
    assert client.get("/admin/audit/auditevent/add/").status_code == 403
    assert client.get("/admin/audit/auditevent/1/delete/").status_code == 403


@pytest.mark.django_db
def test_audit_search_finds_a_kprs_events_by_the_id_prefix_the_dashboard_shows(client):
    # given events of two KPRs
    import uuid

    first, second = uuid.uuid4(), uuid.uuid4()
    reviewer_create(username="ann", password="pw-123456", namespaces=["demo"])
    audit_record(event_type="pull.submitted", actor="agent:a", namespace="demo", pull_id=first)
    audit_record(event_type="pull.reviewed", actor="rules:x", namespace="demo", pull_id=first)
    audit_record(event_type="pull.submitted", actor="agent:a", namespace="demo", pull_id=second)
    client.login(username="ann", password="pw-123456")
    # when
    listing = client.get("/admin/audit/auditevent/", {"q": str(first)[:8]})
    # then
    assert {e.pull_id for e in listing.context["cl"].result_list} == {first}
    assert listing.context["cl"].result_count == 2
