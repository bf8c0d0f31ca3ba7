from __future__ import annotations

import pytest
from django.test import Client

from memorypr.agents.services import reviewer_create
from memorypr.audit.models import AuditEvent
from memorypr.pulls.models import KnowledgePullRequest
from reviewer.dashboard.services import claim_take


@pytest.mark.django_db
def test_filters_live_in_the_url_and_the_tab_counts_follow_them(reviewer_client, queued_pull):
    # given
    queued_pull(key="allergy", newValue="shrimp")
    queued_pull(subject="user-2", key="diet", newValue="vegan")
    # when
    response = reviewer_client.get("/review/?tab=needs&subject=user-2&q=veg")
    # then: the page keeps the filters, and the tabs carry them
    html = response.content.decode()
    assert response.status_code == 200
    assert response.context["counts"]["needs"] == 1
    assert 'value="user-2"' in html and 'value="veg"' in html
    assert 'href="?tab=merged&amp;q=veg&amp;subject=user-2"' in html
    assert "diet: + vegan" in html


@pytest.mark.django_db
def test_htmx_gets_the_live_part_alone_for_polling(reviewer_client, queued_pull):
    queued_pull(key="allergy", newValue="shrimp")
    response = reviewer_client.get("/review/?tab=needs", HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert html.startswith('<div id="queue-live"')
    assert 'hx-trigger="every 5s"' in html
    assert "<form" not in html


@pytest.mark.django_db
def test_a_bad_filter_is_a_400_that_names_it(reviewer_client):
    response = reviewer_client.get("/review/?llm=MAYBE")
    assert response.status_code == 400
    assert "llm: one of" in response.content.decode()


@pytest.mark.django_db
def test_bulk_reject_with_one_reason_audits_each_with_the_user(reviewer_client, queued_pull):
    # given
    pulls = [queued_pull(key="allergy", newValue="shrimp"), queued_pull(key="diet", newValue="vegan")]
    # when
    response = reviewer_client.post(
        "/review/bulk",
        {"pull": [str(p.id) for p in pulls], "verdict": "REJECT", "reason": "Spam from a test agent.",
         "query": "tab=needs"},
    )  # fmt: skip
    # then
    assert response.status_code == 302 and response["Location"] == "/review/?tab=needs"
    for pull in pulls:
        pull.refresh_from_db()
        assert (pull.review_status, pull.reviewer_feedback) == ("REJECTED", "Spam from a test agent.")
        audit = AuditEvent.objects.get(pull_id=pull.id, event_type="pull.reviewed", actor="human:ann")
        assert audit.payload["to"] == "REJECTED"
    assert "2 KPR(s) rejected." in reviewer_client.get("/review/").content.decode()


@pytest.mark.django_db
def test_bulk_needs_a_reason_and_writes_nothing_without_one(reviewer_client, queued_pull):
    pull = queued_pull(key="allergy", newValue="shrimp")
    reviewer_client.post("/review/bulk", {"pull": [str(pull.id)], "verdict": "APPROVE", "reason": " "})
    pull.refresh_from_db()
    assert pull.review_status == "NEEDS_HUMAN_REVIEW"
    assert "a reason is required" in reviewer_client.get("/review/").content.decode()


@pytest.mark.django_db
def test_bulk_skips_what_another_reviewer_claimed_and_decides_the_rest(reviewer_client, queued_pull):
    # given one KPR claimed by bob
    claimed, free = queued_pull(key="allergy", newValue="shrimp"), queued_pull(key="diet", newValue="vegan")
    bob = reviewer_create(username="bob", password="bob-password-1", namespaces=["demo"])
    claim_take(pull_id=str(claimed.id), user=bob)
    # when
    reviewer_client.post(
        "/review/bulk", {"pull": [str(claimed.id), str(free.id)], "verdict": "APPROVE", "reason": "Fine."}
    )
    # then
    statuses = dict(KnowledgePullRequest.objects.values_list("id", "review_status"))
    assert statuses[claimed.id] == "NEEDS_HUMAN_REVIEW"
    assert statuses[free.id] == "APPROVED"
    assert "skipped: claimed by bob" in reviewer_client.get("/review/").content.decode()


@pytest.mark.django_db
def test_bulk_on_another_namespaces_kpr_is_a_404(reviewer_client, queued_pull):
    hidden = queued_pull(namespace="elsewhere", key="allergy", newValue="nuts")
    response = reviewer_client.post(
        "/review/bulk", {"pull": [str(hidden.id)], "verdict": "REJECT", "reason": "x"}
    )
    assert response.status_code == 404
    hidden.refresh_from_db()
    assert hidden.review_status == "NEEDS_HUMAN_REVIEW"


@pytest.mark.django_db
def test_a_post_without_the_csrf_token_is_refused(reviewer, queued_pull):
    # given a logged-in browser that does not send the token
    pull = queued_pull(key="allergy", newValue="shrimp")
    client = Client(enforce_csrf_checks=True)
    client.login(username="ann", password="ann-password-1")
    # when
    response = client.post("/review/bulk", {"pull": [str(pull.id)], "verdict": "APPROVE", "reason": "ok"})
    # then
    assert response.status_code == 403
    pull.refresh_from_db()
    assert pull.review_status == "NEEDS_HUMAN_REVIEW"
