"""The audit trail inside the dashboard: filters, pages, the chain's state, exports, tenancy."""

from __future__ import annotations

import csv
import io
import json
import uuid

import pytest
from django.core.cache import cache

from memorypr.agents.services import reviewer_create
from memorypr.audit.services import audit_record
from reviewer.dashboard.views_audit import PAGE_SIZE

pytestmark = pytest.mark.django_db

PULL = uuid.UUID("9d4c2b1a-0000-4000-8000-00000000000a")


@pytest.fixture(autouse=True)
def fresh_cache():  # type: ignore[no-untyped-def]
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def trail(reviewer):  # type: ignore[no-untyped-def]
    audit_record(
        event_type="pull.submitted", actor="agent:proposer", namespace="demo", pull_id=PULL, subject="u1"
    )
    audit_record(event_type="pull.reviewed", actor="human:ann", namespace="demo", pull_id=PULL, subject="u1")
    audit_record(
        event_type="pull.submitted", actor="agent:secret", namespace="elsewhere", subject="hidden-subject"
    )


def _body(response) -> str:  # type: ignore[no-untyped-def]
    return b"".join(response.streaming_content).decode()


def test_audit_pages_need_a_login(client):
    for url in ("/review/audit/", "/review/audit/export.csv", "/review/audit/export.json"):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/review/login/")


def test_the_reviewer_sees_their_namespaces_events_and_the_chain_state(reviewer_client, trail):
    response = reviewer_client.get("/review/audit/")
    html = response.content.decode()
    assert response.status_code == 200
    assert [e.event_type for e in response.context["page"]] == [
        "pull.reviewed",
        "pull.submitted",
        "reviewer.created",
    ]
    assert "hidden-subject" not in html and "agent:secret" not in html
    assert response.context["chain"].state == "intact"
    assert "Chain intact" in html
    assert f'href="/review/pulls/{PULL}/"' in html


def test_the_eight_character_id_finds_the_kprs_events(reviewer_client, trail):
    response = reviewer_client.get("/review/audit/", {"q": str(PULL)[:8]})
    assert [e.event_type for e in response.context["page"]] == ["pull.reviewed", "pull.submitted"]
    response = reviewer_client.get("/review/audit/", {"pull": str(PULL)[:8], "type": "pull.reviewed"})
    assert [e.actor for e in response.context["page"]] == ["human:ann"]
    # and the export links carry the filters
    assert (
        f'href="/review/audit/export.csv?type=pull.reviewed&amp;pull={str(PULL)[:8]}"'
        in response.content.decode()
    )


def test_pages_of_fifty(reviewer_client, reviewer):
    for n in range(PAGE_SIZE + 5):
        audit_record(event_type="test.many", actor=f"tester-{n}", namespace="demo")
    first = reviewer_client.get("/review/audit/", {"type": "test.many"})
    second = reviewer_client.get("/review/audit/", {"type": "test.many", "page": 2})
    assert len(first.context["page"]) == PAGE_SIZE and len(second.context["page"]) == 5
    assert 'href="?type=test.many&amp;page=2"' in first.content.decode()


@pytest.mark.parametrize(("params", "field"), [({"since": "last week"}, "since"), ({"page": "x"}, "page")])
def test_a_bad_filter_is_a_400_that_names_it(reviewer_client, trail, params, field):
    response = reviewer_client.get("/review/audit/", params)
    assert response.status_code == 400
    assert f'data-field="{field}"' in response.content.decode()


def test_csv_and_json_exports_are_streamed_and_filtered(reviewer_client, trail):
    response = reviewer_client.get("/review/audit/export.csv", {"q": str(PULL)[:8]})
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith('attachment; filename="audit-')
    rows = list(csv.DictReader(io.StringIO(_body(response))))
    assert [(r["eventType"], r["actor"], r["pullId"]) for r in rows] == [
        ("pull.submitted", "agent:proposer", str(PULL)),
        ("pull.reviewed", "human:ann", str(PULL)),
    ]
    body = json.loads(_body(reviewer_client.get("/review/audit/export.json")))
    assert [e["eventType"] for e in body] == ["reviewer.created", "pull.submitted", "pull.reviewed"]
    assert reviewer_client.get("/review/audit/export.xml").status_code == 404


def test_another_namespaces_reviewer_sees_and_exports_nothing_of_it(client, trail):
    reviewer_create(username="olga", password="olga-password-1", namespaces=["elsewhere"])
    client.login(username="olga", password="olga-password-1")
    response = client.get("/review/audit/", {"q": str(PULL)[:8]})
    assert list(response.context["page"]) == []
    assert "human:ann" not in response.content.decode()
    body = json.loads(_body(client.get("/review/audit/export.json")))
    assert {e["namespace"] for e in body} == {"elsewhere"}
