from __future__ import annotations

import io

import pytest
from django.db import transaction

from memorypr.agents.services import reviewer_create
from memorypr.audit.models import AuditEvent
from memorypr.audit.services import audit_commit_flushed
from memorypr.facts.models import FactVersion
from memorypr.pulls.models import ReviewEvent
from memorypr.pulls.serializers import PullInSerializer
from memorypr.pulls.services import pull_record_review, pull_submit
from tests.factories import agent_with_token, operation_payload, pull_payload


@pytest.mark.django_db
def test_queue_needs_login(client):
    response = client.get("/review/")
    assert response.status_code == 302
    assert response["Location"].startswith("/review/login/")


@pytest.mark.django_db
def test_queue_lists_only_the_reviewers_namespaces_oldest_first(reviewer_client, queued_pull):
    # given
    first = queued_pull(key="allergy", newValue="shrimp")
    second = queued_pull(key="diet", newValue="vegan")
    hidden = queued_pull(namespace="elsewhere", key="allergy", newValue="nuts")
    # when
    response = reviewer_client.get("/review/")
    # then
    assert response.status_code == 200
    ids = [row.pull.id for row in response.context["rows"]]
    assert ids == [first.id, second.id]
    assert hidden.id not in ids
    assert response.context["counts"]["needs"] == 2
    assert response.context["rows"][0].held_rules == ["protected_key"]
    assert reviewer_client.get(f"/review/pulls/{hidden.id}/").status_code == 404


@pytest.mark.django_db
def test_item_shows_old_current_and_new_values_with_findings(reviewer_client, queued_pull):
    pull = queued_pull(key="allergy", newValue="shrimp")
    response = reviewer_client.get(f"/review/pulls/{pull.id}/")
    assert response.status_code == 200
    html = response.content.decode()
    panel = response.context["panels"][0]
    assert (panel.old_json, panel.current_json, panel.new_json) == ("—", "—", '"shrimp"')
    assert "&quot;shrimp&quot;" in html
    assert "allergy is protected" in html
    assert "I live in Beijing." in html  # the evidence quote


@pytest.mark.django_db
def test_reject_needs_a_reason_and_loses_nothing(reviewer_client, queued_pull):
    pull = queued_pull()
    response = reviewer_client.post(f"/review/pulls/{pull.id}/decide", {"verdict": "REJECT", "reason": " "})
    assert response.status_code == 400
    assert "reason is required" in response.content.decode()
    pull.refresh_from_db()
    assert pull.review_status == "NEEDS_HUMAN_REVIEW"


@pytest.mark.django_db
def test_reviewer_rejects_with_a_reason(reviewer_client, queued_pull):
    pull = queued_pull()
    response = reviewer_client.post(
        f"/review/pulls/{pull.id}/decide", {"verdict": "REJECT", "reason": "The user was joking."}
    )
    assert response.status_code == 302
    pull.refresh_from_db()
    assert (pull.review_status, pull.reviewer_feedback) == ("REJECTED", "The user was joking.")
    event = ReviewEvent.objects.filter(pull=pull).last()
    assert (event.reviewer_kind, event.reviewer, event.verdict) == ("human", "ann", "REJECT")
    audit = AuditEvent.objects.filter(pull_id=pull.id, event_type="pull.reviewed").last()
    assert audit.actor == "human:ann"
    assert audit.payload["to"] == "REJECTED"
    # a decided KPR cannot be decided again
    again = reviewer_client.post(f"/review/pulls/{pull.id}/decide", {"verdict": "APPROVE", "reason": "oops"})
    assert again.status_code == 409


@pytest.mark.django_db
def test_approve_with_an_excluded_operation(reviewer_client, queued_pull, django_capture_on_commit_callbacks):
    # given a queued KPR of two operations
    agent, _ = agent_with_token(name="proposer-two-ops", namespaces=["demo"])
    body = pull_payload(operation_payload(key="home_city", newValue="Shenzhen"),
                        operation_payload(key="diet", newValue="vegan", evidence={
                            "rawMessageQuote": "I'm vegan now.", "timestamp": 1732000000000}))  # fmt: skip
    serializer = PullInSerializer(data=body)
    serializer.is_valid(raise_exception=True)
    with transaction.atomic():
        pull, _ = pull_submit(agent=agent, namespace=agent.namespaces.get(), spec=serializer.to_spec())
        pull_record_review(pull=pull, reviewer_kind="rules", reviewer="rules", verdict="ESCALATE",
                           status_after="NEEDS_HUMAN_REVIEW", reasons="a person decides")  # fmt: skip
    # when the reviewer approves it without its second operation (the merge runs on commit)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = reviewer_client.post(
            f"/review/pulls/{pull.id}/decide",
            {"verdict": "APPROVE", "reason": "Checked with the user.", "exclude": ["1"]},
            HTTP_HX_REQUEST="true",
        )
    # then it is approved with that operation excluded, audited, and only the first one merges
    assert response.status_code == 200
    assert 'id="review-status">APPROVED' in response.content.decode()
    # the merge is handed over after commit (besides the wait for the commit's flush)
    assert len([callback for callback in callbacks if callback is not audit_commit_flushed]) == 1
    event = ReviewEvent.objects.filter(pull=pull, reviewer_kind="human").get()
    assert event.excluded_operations == [1]
    audit = AuditEvent.objects.filter(pull_id=pull.id, event_type="pull.reviewed", actor="human:ann").get()
    assert audit.payload["excludedOperations"] == [1]
    merged_keys = set(FactVersion.objects.filter(pull=pull).values_list("key", flat=True))
    assert merged_keys == {"home_city"}
    # and excluding every operation is not an approval
    all_excluded = queued_pull(key="diet", newValue="vegan")
    response = reviewer_client.post(
        f"/review/pulls/{all_excluded.id}/decide", {"verdict": "APPROVE", "reason": "x", "exclude": ["0"]}
    )
    assert response.status_code == 400


@pytest.mark.django_db
def test_claims_block_a_second_reviewer_until_released(
    reviewer_client, queued_pull, client, django_user_model
):
    # given ann claims the KPR
    pull = queued_pull()
    assert reviewer_client.post(f"/review/pulls/{pull.id}/claim", {"claim": "1"}).status_code == 200
    reviewer_create(username="bob", password="bob-password-1", namespaces=["demo"])
    from django.test import Client

    bob = Client()
    bob.login(username="bob", password="bob-password-1")
    # when bob tries to decide or claim
    decided = bob.post(f"/review/pulls/{pull.id}/decide", {"verdict": "APPROVE", "reason": "ok"})
    claimed = bob.post(f"/review/pulls/{pull.id}/claim", {"claim": "1"})
    # then he is told who holds it
    assert decided.status_code == 409 and "claimed by ann" in decided.content.decode()
    assert claimed.status_code == 409
    # an admin can take it over
    reviewer_create(username="root", password="root-password-1", namespaces=["demo"], is_admin=True)
    admin = Client()
    admin.login(username="root", password="root-password-1")
    assert admin.post(f"/review/pulls/{pull.id}/claim", {"take_over": "1"}).status_code == 200
    types = list(AuditEvent.objects.filter(pull_id=pull.id).values_list("event_type", flat=True))
    assert types.count("claim.taken") == 2 and "claim.taken_over" in types


@pytest.mark.django_db(transaction=True)
def test_a_reviewer_reverts_a_merged_pull_and_reads_the_fact_history(reviewer_client):
    # given the demo: home_city Beijing → Shenzhen merged
    from django.core.management import call_command

    from memorypr.pulls.models import KnowledgePullRequest

    call_command("load_demo", stdout=io.StringIO())
    moved = KnowledgePullRequest.objects.get(idempotency_key="demo-04-moved-shenzhen")
    # when the reviewer proposes its revert without, then with, a reason
    url = f"/review/pulls/{moved.id}/revert"
    assert reviewer_client.post(url, {"reason": ""}).status_code == 400
    response = reviewer_client.post(url, {"reason": "Moved back, says the user."})
    # then a new KPR that restores Beijing is proposed by the system proposer on the reviewer's behalf
    assert response.status_code == 204
    revert = KnowledgePullRequest.objects.get(reverts=moved)
    assert response["HX-Redirect"] == f"/review/pulls/{revert.id}/"
    assert revert.proposed_by == "human:ann" and revert.agent.name == "system"
    op = revert.operations.get()
    assert (op.action, op.old_value, op.new_value) == ("UPDATE", "Shenzhen", "Beijing")
    assert AuditEvent.objects.filter(
        pull_id=moved.id, event_type="pull.revert_requested", actor="human:ann"
    ).exists()
    # and the fact's history page lists both versions with the KPR that wrote each
    history = reviewer_client.get("/review/facts/demo/demo-user/home_city/")
    assert history.status_code == 200
    revert.refresh_from_db()
    assert (revert.review_status, revert.merge_status) == ("APPROVED", "MERGED")
    versions = [(v.version, v.value, v.status) for v in history.context["versions"]]
    assert versions == [(1, "Beijing", "superseded"), (2, "Shenzhen", "superseded"), (3, "Beijing", "active")]
    assert reviewer_client.get("/review/facts/elsewhere/demo-user/home_city/").status_code == 404


@pytest.mark.django_db
def test_item_highlights_the_clause_that_states_the_fact_and_the_cue(reviewer_client, proposer_pull_reviewed):
    # given a KPR held because the clause of its fact is a plan
    pull = proposer_pull_reviewed(quote="Work is fine. Next year, I will live in Shenzhen.")
    # when
    html = reviewer_client.get(f"/review/pulls/{pull.id}/").content.decode()
    # then the quote shows the clause and the cue marked, and the rule that matched it
    assert '<mark class="cue">Next year</mark>' in html
    assert '<span class="clause">I will live in Shenzhen.</span>' in html
    assert "<strong>future_plan</strong> matched" in html


@pytest.mark.django_db
def test_home_links_the_dashboard_the_docs_the_admin_and_health(client):
    # when
    response = client.get("/")
    # then
    assert response.status_code == 200
    html = response.content.decode()
    for href in (
        'href="/review/"',
        'href="/api/docs/"',
        'href="/api/redoc/"',
        'href="/admin/"',
        'href="/healthz"',
    ):
        assert href in html


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/docs/", "/api/redoc/"])
def test_api_docs_load_their_javascript_from_the_project(client, path):
    # when
    html = client.get(path).content.decode()
    # then: the pages name only this site's static files, no CDN
    assert "/static/drf_spectacular_sidecar/" in html
    assert "cdn" not in html.lower()
