from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from memorypr.agents.models import Namespace
from memorypr.agents.services import reviewer_create
from memorypr.audit.models import AuditEvent
from memorypr.pulls.models import KnowledgePullRequest
from reviewer.models import ReviewPolicy, UploadedTranscript
from reviewer.pipeline import pull_review
from reviewer.selectors import review_policy_get, transcript_get
from reviewer.services import RereviewNotAllowed, pull_rereview, review_policy_set, transcript_upload
from tests.reviewer.builders import fact, op_spec, submit


@pytest.fixture
def escalated(proposer, merges) -> KnowledgePullRequest:  # type: ignore[no-untyped-def]
    """A KPR that went to a person: confidence 0.6 is below the default approve bar 0.7."""
    fact(key="home_city", value="Beijing")
    pull = submit(proposer, op_spec(confidence=0.6))
    assert pull_review(pull_id=str(pull.id)).status == "NEEDS_HUMAN_REVIEW"
    return pull


@pytest.mark.django_db
def test_rereview_after_a_policy_change_adds_a_new_verdict(
    escalated, merges, django_capture_on_commit_callbacks
):
    # given the namespace lowers its approve bar, and an admin
    namespace = Namespace.objects.get(name="demo")
    review_policy_set(namespace=namespace, actor="human:admin", confidence_approve_bar=0.5)
    admin = reviewer_create(username="admin", password="pw", namespaces=[], is_admin=True)
    # when the admin asks for a re-review
    with django_capture_on_commit_callbacks(execute=True):
        outcome = pull_rereview(pull_id=str(escalated.id), actor=admin)
    # then the new verdict follows the old one, which stays
    escalated.refresh_from_db()
    assert outcome.status == escalated.review_status == "APPROVED"
    assert [(e.reviewer_kind, e.verdict, e.status_after) for e in escalated.review_events.order_by("id")] == [
        ("rules", "ESCALATE", "PENDING"),
        ("system", "ESCALATE", "NEEDS_HUMAN_REVIEW"),
        ("rules", "APPROVE", "NEEDS_HUMAN_REVIEW"),
        ("system", "APPROVE", "APPROVED"),
    ]
    requested = AuditEvent.objects.get(pull_id=escalated.id, event_type="pull.rereview_requested")
    assert (requested.actor, requested.payload) == ("human:admin", {"from": "NEEDS_HUMAN_REVIEW"})
    last = AuditEvent.objects.filter(pull_id=escalated.id).order_by("-sequence").first()
    assert (last.event_type, last.payload["from"], last.payload["to"]) == (
        "pull.reviewed",
        "NEEDS_HUMAN_REVIEW",
        "APPROVED",
    )
    assert merges == [str(escalated.id)]


@pytest.mark.django_db
def test_rereview_that_reaches_the_same_verdict_is_still_recorded(escalated):
    outcome = pull_rereview(pull_id=str(escalated.id), actor=None)
    assert outcome.status == "NEEDS_HUMAN_REVIEW"
    assert escalated.review_events.count() == 4
    assert AuditEvent.objects.get(pull_id=escalated.id, event_type="pull.rereview_requested").actor == (
        "operator:manage.py"
    )


@pytest.mark.django_db
def test_a_reviewer_of_the_namespace_may_rereview_others_may_not(escalated):
    member = reviewer_create(username="alice", password="pw", namespaces=["demo"])
    outsider = reviewer_create(username="mallory", password="pw", namespaces=["elsewhere"])
    with pytest.raises(PermissionDenied):
        pull_rereview(pull_id=str(escalated.id), actor=outsider)
    assert not AuditEvent.objects.filter(event_type="pull.rereview_requested").exists()
    assert pull_rereview(pull_id=str(escalated.id), actor=member).status == "NEEDS_HUMAN_REVIEW"


@pytest.mark.django_db
def test_a_merged_kpr_is_not_reviewed_again(escalated):
    KnowledgePullRequest.objects.filter(pk=escalated.pk).update(merge_status="MERGED")
    with pytest.raises(RereviewNotAllowed):
        pull_rereview(pull_id=str(escalated.id), actor=None)
    assert escalated.review_events.count() == 2


@pytest.mark.django_db
def test_rereview_of_an_unknown_kpr(db):
    with pytest.raises(KnowledgePullRequest.DoesNotExist):
        pull_rereview(pull_id="00000000-0000-0000-0000-000000000000", actor=None)


@pytest.mark.django_db
def test_policy_changes_are_audited_with_old_and_new_values(proposer):
    namespace = Namespace.objects.get(name="demo")
    assert review_policy_get(namespace_id=namespace.id).mode == "rules_and_llm"
    review_policy_set(
        namespace=namespace, actor="human:admin", mode="llm_required", human_categories=["derived"]
    )
    review_policy_set(namespace=namespace, actor="human:admin", confidence_reject_floor=0.4)
    view = review_policy_get(namespace_id=namespace.id)
    assert (view.mode, view.human_categories, view.confidence_reject_floor) == (
        "llm_required",
        frozenset({"derived"}),
        0.4,
    )
    first, second = AuditEvent.objects.filter(event_type="review_policy.changed").order_by("sequence")
    assert (first.actor, first.namespace) == ("human:admin", "demo")
    assert (
        first.payload["before"]["mode"] == "rules_and_llm"
        and first.payload["after"]["mode"] == "llm_required"
    )
    assert second.payload["before"]["confidence_reject_floor"] == 0.3
    assert second.payload["after"]["confidence_reject_floor"] == 0.4
    assert ReviewPolicy.objects.get(namespace=namespace).updated_by == "human:admin"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"mode": "yolo"}, "mode"),
        ({"human_categories": ["gossip"]}, "human_categories"),
        ({"key_patterns": ["(unclosed"]}, "key_patterns"),
        ({"disabled_rules": ["secrets"]}, "disabled_rules"),
        ({"disabled_rules": ["no_such_rule"]}, "disabled_rules"),
        ({"suggestion_rules": ["secrets"]}, "suggestion_rules"),
        ({"suggestion_rules": ["no_such_rule"]}, "suggestion_rules"),
        ({"confidence_reject_floor": 0.8, "confidence_approve_bar": 0.7}, "confidence_reject_floor"),
        ({"protected_importance": 1.5}, "protected_importance"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_invalid_policies_are_refused_without_a_write(proposer, changes, field):
    with pytest.raises(ValidationError) as raised:
        review_policy_set(namespace=Namespace.objects.get(name="demo"), actor="human:admin", **changes)
    assert field in raised.value.message_dict
    assert not ReviewPolicy.objects.exists()
    assert not AuditEvent.objects.filter(event_type="review_policy.changed").exists()


@pytest.mark.django_db
def test_disabled_rules_are_skipped(proposer, merges):
    fact(key="home_city", value="Beijing")
    review_policy_set(
        namespace=Namespace.objects.get(name="demo"), actor="human:admin", disabled_rules=["future_plan"]
    )
    outcome = pull_review(pull_id=str(submit(proposer, op_spec(quote="I'll be moving to Shenzhen")).id))
    assert outcome.status == "APPROVED"
    assert "future_plan" not in {c["rule"] for c in outcome.events[0].findings[0]["checks"]}


@pytest.mark.django_db
def test_a_rule_made_a_suggestion_shows_its_finding_but_holds_nothing(proposer, merges):
    # given a namespace where the future-plan rule only suggests, and the change is audited
    fact(key="home_city", value="Beijing")
    namespace = Namespace.objects.get(name="demo")
    review_policy_set(namespace=namespace, actor="human:admin", suggestion_rules=["future_plan"])
    changed = AuditEvent.objects.filter(event_type="review_policy.changed").last()
    assert changed.actor == "human:admin"
    assert (changed.payload["before"]["suggestion_rules"], changed.payload["after"]["suggestion_rules"]) == (
        [],
        ["future_plan"],
    )
    # when a KPR whose clause is a plan is reviewed
    outcome = pull_review(pull_id=str(submit(proposer, op_spec(quote="I'll be moving to Shenzhen")).id))
    # then it is approved, and the rule's finding is kept, marked as a suggestion
    assert outcome.status == "APPROVED"
    plan = next(c for c in outcome.events[0].findings[0]["checks"] if c["rule"] == "future_plan")
    assert plan["verdict"] == "pass"
    assert plan["reason"].startswith("suggestion (escalate): ")


@pytest.mark.django_db
def test_without_the_suggestion_the_same_plan_is_held(proposer, merges):
    fact(key="home_city", value="Beijing")
    outcome = pull_review(pull_id=str(submit(proposer, op_spec(quote="I'll be moving to Shenzhen")).id))
    assert outcome.status == "NEEDS_HUMAN_REVIEW"


@pytest.mark.django_db
def test_transcript_upload_is_audited_and_read_in_order(proposer):
    namespace = Namespace.objects.get(name="demo")
    transcript_upload(namespace=namespace, session_id="s1", text="user: first", actor="human:admin")
    transcript_upload(namespace=namespace, session_id="s1", text="user: second", actor="human:admin")
    assert transcript_get(namespace_id=namespace.id, session_id="s1") == "user: first\nuser: second"
    assert transcript_get(namespace_id=namespace.id, session_id="s2") is None
    assert transcript_get(namespace_id=namespace.id, session_id="") is None
    event = AuditEvent.objects.filter(event_type="transcript.uploaded").last()
    assert event.payload["sessionId"] == "s1" and event.payload["characters"] == len("user: second")


@pytest.mark.django_db
def test_empty_transcripts_are_refused(proposer):
    with pytest.raises(ValidationError):
        transcript_upload(namespace=Namespace.objects.get(name="demo"), session_id="s1", text=" ", actor="x")
    assert not UploadedTranscript.objects.exists()
