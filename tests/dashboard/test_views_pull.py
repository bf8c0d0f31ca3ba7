"""One KPR's page: states after merge, exclusions, links, overturns, conflicts, comments."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from memorypr.audit.models import AuditEvent
from memorypr.pulls.models import KnowledgePullRequest, ReviewComment
from tests.factories import agent_with_token, operation_payload


@pytest.fixture
def decide(reviewer_client, django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    """Decide a KPR as ann; an approval merges on commit, as in production."""

    def run(pull: KnowledgePullRequest, verdict: str = "APPROVE", exclude: tuple[str, ...] = ()) -> None:
        with django_capture_on_commit_callbacks(execute=True):
            response = reviewer_client.post(
                f"/review/pulls/{pull.id}/decide",
                {"verdict": verdict, "reason": "Checked.", "exclude": exclude},
            )
        assert response.status_code == 302, response.content
        pull.refresh_from_db()

    return run


@pytest.mark.django_db
def test_a_merged_create_is_marked_merged_and_not_compared_with_its_base(
    reviewer_client, queued_pull, decide
):
    # given a CREATE, merged
    pull = queued_pull(key="allergy", newValue="shrimp")
    unmerged = queued_pull(key="diet", newValue="vegan")
    decide(pull)
    assert pull.merge_status == "MERGED"
    # when
    html = reviewer_client.get(f"/review/pulls/{pull.id}/").content.decode()
    # then no "differs from the proposer's base" for its own write, and the operation says what it wrote
    assert 'data-mark="moved"' not in html
    assert 'data-mark="merged">merged as v1' in html
    assert 'href="/review/facts/demo/user-1/allergy/"' in html
    # and a key that was never merged is plain text, not a link to a missing history
    other = reviewer_client.get(f"/review/pulls/{unmerged.id}/").content.decode()
    assert '<code class="key">diet</code>' in other
    assert "/review/facts/demo/user-1/diet/" not in other


@pytest.mark.django_db
def test_an_excluded_operation_is_marked(reviewer_client, queued_pull, decide):
    pull = queued_pull(
        operations=[
            operation_payload(key="allergy", newValue="shrimp"),
            operation_payload(key="diet", newValue="vegan"),
        ]
    )
    decide(pull, exclude=("1",))
    html = reviewer_client.get(f"/review/pulls/{pull.id}/").content.decode()
    assert html.count('data-mark="excluded"') == 1
    assert 'id="op-1" data-position="1"' in html and 'class="op excluded" id="op-1"' in html
    assert 'class="op" id="op-0"' in html


@pytest.mark.django_db
def test_the_panel_polls_while_approved_and_unmerged_then_reloads_once_merged(
    reviewer_client, queued_pull, decide
):
    # given an approval whose merge has not run yet (no on-commit execution)
    pull = queued_pull(key="allergy", newValue="shrimp")
    reviewer_client.post(f"/review/pulls/{pull.id}/decide", {"verdict": "APPROVE", "reason": "ok"})
    html = reviewer_client.get(f"/review/pulls/{pull.id}/").content.decode()
    assert f'hx-get="/review/pulls/{pull.id}/panel?until=merged" hx-trigger="every 2s"' in html
    waiting = reviewer_client.get(f"/review/pulls/{pull.id}/panel?until=merged")
    assert "HX-Refresh" not in waiting
    # when the merge is done
    from memorypr.facts.services import pull_merge

    pull_merge(pull_id=str(pull.id))
    # then the next poll reloads the page, which no longer polls
    done = reviewer_client.get(f"/review/pulls/{pull.id}/panel?until=merged")
    assert done["HX-Refresh"] == "true"
    assert 'id="merge-status">MERGED' in done.content.decode()
    assert "every 2s" not in done.content.decode()


@pytest.mark.django_db
def test_overturning_a_persons_decision_needs_a_reason_and_is_audited(reviewer_client, queued_pull, decide):
    # given ann rejected the KPR
    pull = queued_pull(key="allergy", newValue="shrimp")
    decide(pull, verdict="REJECT")
    page = reviewer_client.get(f"/review/pulls/{pull.id}/").content.decode()
    assert "hx-confirm=" in page and 'id="rereview-reason"' in page
    # when the review is asked to run again without a reason
    url = f"/review/pulls/{pull.id}/rereview"
    refused = reviewer_client.post(url, {"reason": " "})
    # then nothing happens
    assert refused.status_code == 400 and "needs a reason" in refused.content.decode()
    pull.refresh_from_db()
    assert pull.review_status == "REJECTED"
    assert not AuditEvent.objects.filter(pull_id=pull.id, event_type="pull.rereview_requested").exists()
    # with a reason it runs, and the trail keeps why
    assert reviewer_client.post(url, {"reason": "The rules changed."}).status_code == 200
    overturn = AuditEvent.objects.get(pull_id=pull.id, event_type="pull.overturn_requested")
    assert overturn.actor == "human:ann"
    assert overturn.payload == {"reason": "The rules changed.", "decision": "REJECT", "decidedBy": "ann"}
    assert AuditEvent.objects.filter(pull_id=pull.id, event_type="pull.rereview_requested").exists()


@pytest.mark.django_db
def test_a_reverted_kpr_links_its_revert_and_offers_no_second_one(reviewer_client, queued_pull, decide):
    # given a merged KPR and its revert, proposed
    pull = queued_pull(key="allergy", newValue="shrimp")
    decide(pull)
    assert (
        reviewer_client.post(f"/review/pulls/{pull.id}/revert", {"reason": "Wrong user."}).status_code == 204
    )
    revert = KnowledgePullRequest.objects.get(reverts=pull)
    # then each links the other, and the reverted one has no revert form
    html = reviewer_client.get(f"/review/pulls/{pull.id}/").content.decode()
    assert f'href="/review/pulls/{revert.id}/" class="link-reverted-by"' in html
    assert 'id="no-second-revert"' in html and 'id="revert-form"' not in html
    back = reviewer_client.get(f"/review/pulls/{revert.id}/").content.decode()
    assert f'href="/review/pulls/{pull.id}/" id="link-reverts"' in back
    # and a second revert is refused
    again = reviewer_client.post(f"/review/pulls/{pull.id}/revert", {"reason": "Again."})
    assert again.status_code == 409
    assert KnowledgePullRequest.objects.filter(reverts=pull).count() == 1


@pytest.fixture
def conflict(queued_pull, decide):  # type: ignore[no-untyped-def]
    """A KPR of two operations approved after the store moved under its first one."""
    decide(queued_pull(key="home_city", newValue="Beijing"))
    pull = queued_pull(operations=[
        operation_payload(action="UPDATE", key="home_city", oldValue="Hangzhou", newValue="Shenzhen",
                          evidence={"rawMessageQuote": "I moved to Shenzhen.", "timestamp": 1732000000000}),
        operation_payload(key="diet", newValue="vegan",
                          evidence={"rawMessageQuote": "I'm vegan now.", "timestamp": 1732000000000}),
    ])  # fmt: skip
    decide(pull)
    assert pull.merge_status == "CONFLICT"
    return pull


@pytest.mark.django_db
def test_a_conflict_is_resolved_by_a_rebased_copy_reviewed_like_any_other(reviewer_client, conflict):
    # given
    html = reviewer_client.get(f"/review/pulls/{conflict.id}/").content.decode()
    assert 'id="resolve-rebase"' in html and 'id="resolve-rest"' in html
    # when
    response = reviewer_client.post(f"/review/pulls/{conflict.id}/resolve", {"mode": "rebase"})
    # then a new KPR: the same operations and evidence, based on what the store holds now
    assert response.status_code == 204
    copy = KnowledgePullRequest.objects.exclude(pk=conflict.pk).latest("created_at")
    assert response["HX-Redirect"] == f"/review/pulls/{copy.id}/"
    ops = [
        (op.action, op.key, op.old_value, op.new_value, op.evidence["rawMessageQuote"])
        for op in copy.operations.all()
    ]
    assert ops == [("UPDATE", "home_city", "Beijing", "Shenzhen", "I moved to Shenzhen."),
                   ("CREATE", "diet", None, "vegan", "I'm vegan now.")]  # fmt: skip
    assert (copy.proposed_by, copy.agent_id, copy.source_session_id) == (
        "human:ann",
        conflict.agent_id,
        "session-1",
    )
    audit = AuditEvent.objects.get(pull_id=conflict.id, event_type="pull.rebase_proposed")
    assert audit.payload["copy"] == str(copy.id) and audit.actor == "human:ann"
    # both pages link each other; the same resolution again proposes nothing new
    assert (
        f'href="/review/pulls/{conflict.id}/" id="link-rebased-from"'
        in reviewer_client.get(f"/review/pulls/{copy.id}/").content.decode()
    )
    reviewer_client.post(f"/review/pulls/{conflict.id}/resolve", {"mode": "rebase"})
    assert KnowledgePullRequest.objects.count() == 3


@pytest.mark.django_db
def test_a_conflict_is_resolved_by_the_rest_without_the_conflicting_operations(reviewer_client, conflict):
    response = reviewer_client.post(f"/review/pulls/{conflict.id}/resolve", {"mode": "rest"})
    assert response.status_code == 204
    copy = KnowledgePullRequest.objects.exclude(pk=conflict.pk).latest("created_at")
    assert [(op.key, op.old_value) for op in copy.operations.all()] == [("diet", None)]
    # a KPR that is not a conflict has nothing to resolve
    refused = reviewer_client.post(f"/review/pulls/{copy.id}/resolve", {"mode": "rebase"})
    assert refused.status_code == 409


@pytest.mark.django_db
def test_comments_on_an_operation_and_the_kpr_reach_the_agent(reviewer_client, queued_pull):
    # given
    pull = queued_pull(key="allergy", newValue="shrimp")
    # when ann comments on the operation and on the KPR
    url = f"/review/pulls/{pull.id}/comment"
    assert reviewer_client.post(url, {"operation": "0", "body": "Ask which shellfish."}).status_code == 302
    assert reviewer_client.post(url, {"body": "Good evidence overall."}).status_code == 302
    assert reviewer_client.post(url, {"operation": "7", "body": "nowhere"}).status_code == 302
    # then both are stored (the bad one is not), audited, and shown
    assert ReviewComment.objects.filter(pull=pull).count() == 2
    audits = AuditEvent.objects.filter(pull_id=pull.id, event_type="pull.commented", actor="human:ann")
    assert [a.payload["operation"] for a in audits.order_by("sequence")] == [0, None]
    html = reviewer_client.get(f"/review/pulls/{pull.id}/").content.decode()
    assert "Ask which shellfish." in html and "Good evidence overall." in html
    # and the agent reads them with the KPR
    _, token = agent_with_token(name="proposer-demo", namespaces=["demo"])
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    detail = api.get(f"/api/v1/pulls/{pull.id}").json()
    assert [(c["operation"], c["author"], c["body"]) for c in detail["reviewerFeedbackDetail"]] == [
        (0, "human:ann", "Ask which shellfish."),
        (None, "human:ann", "Good evidence overall."),
    ]


@pytest.mark.django_db
def test_a_comment_post_without_the_csrf_token_is_refused(reviewer, queued_pull):
    pull = queued_pull(key="allergy", newValue="shrimp")
    client = Client(enforce_csrf_checks=True)
    client.login(username="ann", password="ann-password-1")
    assert client.post(f"/review/pulls/{pull.id}/comment", {"body": "x"}).status_code == 403
    assert not ReviewComment.objects.exists()
