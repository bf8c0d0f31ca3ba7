from __future__ import annotations

import threading

import pytest
from django.db import connection

from memorypr.audit.models import AuditEvent
from memorypr.facts.models import FactVersion
from memorypr.pulls.models import KnowledgePullRequest, ReviewEvent
from memorypr.working_memory import selectors as working_memory
from memorypr.working_memory.services import turn_append
from reviewer.pipeline import pull_review
from reviewer.services import review_policy_set, transcript_upload
from tests.reviewer.builders import fact, op_spec, submit


def events(pull: KnowledgePullRequest) -> list[tuple[str, str, str]]:
    return [(e.reviewer_kind, e.verdict, e.status_after) for e in pull.review_events.order_by("id")]


@pytest.mark.django_db
def test_seed_move_to_shenzhen_is_approved_and_handed_to_the_merge(
    proposer, merges, django_capture_on_commit_callbacks
):
    # given Beijing is the current home city
    fact(key="home_city", value="Beijing")
    pull = submit(proposer, op_spec(quote="I moved to Shenzhen last month"))
    # when
    with django_capture_on_commit_callbacks(execute=True):
        outcome = pull_review(pull_id=str(pull.id))
    # then
    pull.refresh_from_db()
    assert outcome is not None and outcome.status == "APPROVED"
    assert pull.review_status == "APPROVED" and pull.reviewed_at is not None
    assert pull.reviewer_feedback.startswith("Approved by rules: 1 operation(s) to merge.")
    assert '"Beijing" → "Shenzhen": approve' in pull.reviewer_feedback
    assert events(pull) == [("rules", "APPROVE", "PENDING"), ("system", "APPROVE", "APPROVED")]
    assert merges == [str(pull.id)]
    audit = AuditEvent.objects.filter(pull_id=pull.id, event_type="pull.reviewed").order_by("sequence")
    assert [(a.actor, a.payload["to"]) for a in audit] == [
        ("rules:rules", "PENDING"),
        ("system:policy", "APPROVED"),
    ]


@pytest.mark.django_db
def test_seed_chinese_move_is_approved(proposer, merges):
    fact(key="home_city", value="北京")
    pull = submit(proposer, op_spec(old_value="北京", new_value="深圳", quote="上个月我举家搬迁到了深圳"))
    assert pull_review(pull_id=str(pull.id)).status == "APPROVED"


@pytest.mark.django_db
@pytest.mark.parametrize("quote", ["I'm going to work on Mars tomorrow", "我明天要去火星上班"])
def test_seed_mars_joke_is_not_approved(proposer, merges, quote, django_capture_on_commit_callbacks):
    pull = submit(
        proposer,
        op_spec(
            action="CREATE",
            key="work_location",
            old_value=None,
            new_value="Mars",
            confidence=0.9,
            quote=quote,
        ),
    )
    with django_capture_on_commit_callbacks(execute=True):
        outcome = pull_review(pull_id=str(pull.id))
    assert outcome.status == "NEEDS_HUMAN_REVIEW"
    assert "future_plan" in outcome.feedback
    assert merges == []


@pytest.mark.django_db
def test_seed_allergy_update_goes_to_a_person(proposer, merges, django_capture_on_commit_callbacks):
    fact(key="food_allergy", value="peanut", importance=0.95)
    pull = submit(
        proposer,
        op_spec(
            key="food_allergy",
            old_value="peanut",
            new_value="shrimp",
            quote="Actually I'm allergic to shrimp.",
        ),
    )
    with django_capture_on_commit_callbacks(execute=True):
        outcome = pull_review(pull_id=str(pull.id))
    pull.refresh_from_db()
    assert pull.review_status == "NEEDS_HUMAN_REVIEW"
    assert "protected key (allergy)" in pull.reviewer_feedback
    [finding] = outcome.events[-1].findings
    assert finding["verdict"] == "escalate"
    assert any(reason.startswith("protected: protected key (allergy)") for reason in finding["reasons"])
    assert AuditEvent.objects.filter(pull_id=pull.id, event_type="pull.reviewed").last().payload["to"] == (
        "NEEDS_HUMAN_REVIEW"
    )
    assert merges == []


@pytest.mark.django_db
def test_review_is_idempotent(proposer, merges):
    # given a KPR already reviewed
    fact(key="home_city", value="Beijing")
    pull = submit(proposer)
    pull_review(pull_id=str(pull.id))
    # when the task is delivered again
    second = pull_review(pull_id=str(pull.id))
    # then nothing new is recorded
    assert second is None
    assert ReviewEvent.objects.filter(pull=pull).count() == 2
    assert AuditEvent.objects.filter(pull_id=pull.id, event_type="pull.reviewed").count() == 2


@pytest.mark.django_db
def test_unknown_pull_is_skipped(db):
    assert pull_review(pull_id="00000000-0000-0000-0000-000000000000") is None


@pytest.mark.django_db
def test_conflict_is_rejected_naming_the_current_value(proposer, merges):
    fact(key="home_city", value="Shanghai", version=3)
    pull = submit(proposer)
    outcome = pull_review(pull_id=str(pull.id))
    assert outcome.status == "REJECTED"
    assert 'conflict (409): oldValue "Beijing" is not the current value "Shanghai" (v3)' in outcome.feedback


@pytest.mark.django_db
def test_rejection_outranks_escalation_across_operations(proposer, merges):
    fact(key="home_city", value="Beijing")
    pull = submit(
        proposer,
        op_spec(),  # approvable
        op_spec(
            action="CREATE", key="shoe_size", old_value=None, new_value="42", confidence=0.5
        ),  # escalates
        op_spec(action="DELETE", key="nickname", old_value="Bob", new_value=None),  # missing: rejects
    )
    outcome = pull_review(pull_id=str(pull.id))
    assert outcome.status == "REJECTED"
    lines = outcome.feedback.splitlines()
    assert lines[0] == "Rejected by rules: 1 operation(s) rejected."
    assert lines[1].startswith("- #2 DELETE user_profile/nickname") and "delete_missing" in lines[1]
    assert lines[2].startswith("- #1 CREATE user_profile/shoe_size") and "confidence 0.50" in lines[2]
    assert lines[3].startswith("- #0 UPDATE user_profile/home_city")


@pytest.mark.django_db
def test_duplicate_of_the_current_value_is_an_excluded_noop(proposer, merges):
    # given Shenzhen is already current
    fact(key="home_city", value="Shenzhen")
    fact(key="job", value="engineer")
    pull = submit(
        proposer,
        op_spec(),  # Beijing → Shenzhen, but Shenzhen is current: no-op
        op_spec(key="job", old_value="engineer", new_value="teacher", quote="I became a teacher last year"),
    )
    outcome = pull_review(pull_id=str(pull.id))
    final = outcome.events[-1]
    assert outcome.status == "APPROVED"
    assert final.excluded_operations == [0]
    assert final.findings[0] == {"operation": 0, "verdict": "noop", "reasons": []}
    assert "1 no-op(s) already current, excluded from the merge" in outcome.feedback
    rules = outcome.events[0].findings[0]
    assert rules["noop"] is True and rules["verdict"] == "pass"


@pytest.mark.django_db
def test_a_kpr_of_noops_only_is_approved_with_nothing_to_merge(proposer, merges):
    fact(key="home_city", value="Shenzhen")
    pull = submit(proposer, op_spec(confidence=0.1))  # even a doubtful duplicate changes nothing
    outcome = pull_review(pull_id=str(pull.id))
    assert outcome.status == "APPROVED"
    assert outcome.events[-1].excluded_operations == [0]
    assert outcome.feedback.startswith("Approved by rules: 0 operation(s) to merge; 1 no-op(s)")


@pytest.mark.django_db
def test_evidence_is_checked_against_the_working_memory_transcript(proposer, merges, monkeypatch):
    fact(key="home_city", value="Beijing")
    seen: list[tuple[int, str]] = []

    def turns(*, namespace_id: int, session_id: str) -> list[tuple[str, str]]:
        seen.append((namespace_id, session_id))
        return [
            ("user", "hi"),
            ("user", "I moved to Shenzhen, last month."),
            ("assistant", "congratulations!"),
        ]

    monkeypatch.setattr(working_memory, "session_turns", turns)
    pull = submit(proposer, op_spec(quote="I moved to Shenzhen last month"))
    outcome = pull_review(pull_id=str(pull.id))
    assert seen == [(pull.namespace_id, "session-1")]
    assert outcome.status == "NEEDS_HUMAN_REVIEW"
    assert (
        "quote not found in the transcript of session 'session-1': possible hallucination" in outcome.feedback
    )


@pytest.mark.django_db
def test_evidence_is_checked_against_the_sessions_recorded_turns(proposer, merges):
    # given the session's turns as working memory recorded them
    namespace = proposer.namespaces.get()
    for role, content in [
        ("user", "Hi there"),
        ("user", "上个月我举家搬迁到了深圳。"),
        ("assistant", "恭喜！"),
    ]:
        turn_append(namespace=namespace, session_id="sess_8812", role=role, content=content, agent=proposer)
    fact(key="home_city", value="北京")
    fact(key="job", value="engineer")
    # when one quote is verbatim and one is not
    good = submit(
        proposer,
        op_spec(old_value="北京", new_value="深圳", quote="上个月我举家搬迁到了深圳"),
        session_id="sess_8812",
    )
    invented = submit(
        proposer,
        op_spec(key="job", old_value="engineer", new_value="pilot", quote="I'm a pilot now"),
        session_id="sess_8812",
    )
    # then
    assert pull_review(pull_id=str(good.id)).status == "APPROVED"
    outcome = pull_review(pull_id=str(invented.id))
    assert outcome.status == "NEEDS_HUMAN_REVIEW"
    assert "possible hallucination" in outcome.feedback


@pytest.mark.django_db
def test_evidence_is_checked_against_an_uploaded_transcript(proposer, merges):
    fact(key="home_city", value="北京")
    transcript_upload(
        namespace=proposer.namespaces.get(),
        session_id="sess_8812",
        text="用户：上个月我举家搬迁到了深圳。",
        actor="test",
    )
    good = submit(
        proposer,
        op_spec(old_value="北京", new_value="深圳", quote="上个月我举家搬迁到了深圳"),
        session_id="sess_8812",
    )
    assert pull_review(pull_id=str(good.id)).status == "APPROVED"
    fact(key="employer", value="A 公司")
    invented = submit(
        proposer,
        op_spec(key="employer", old_value="A 公司", new_value="B 公司", quote="我跳槽去了 B 公司"),
        session_id="sess_8812",
    )
    assert pull_review(pull_id=str(invented.id)).status == "NEEDS_HUMAN_REVIEW"


@pytest.mark.django_db
def test_low_trust_agent_always_goes_to_a_person(merges):
    from tests.factories import agent_with_token

    agent, _ = agent_with_token(name="newcomer", namespaces=["demo"], trust="low")
    fact(key="home_city", value="Beijing")
    pull = submit(agent)
    outcome = pull_review(pull_id=str(pull.id))
    assert outcome.status == "NEEDS_HUMAN_REVIEW"
    assert "agent 'newcomer' has low trust" in outcome.feedback


@pytest.mark.django_db
def test_policy_category_always_human(proposer, merges):
    fact(key="home_city", value="Beijing")
    review_policy_set(namespace=proposer.namespaces.get(), actor="test", human_categories=["user_profile"])
    outcome = pull_review(pull_id=str(submit(proposer).id))
    assert outcome.status == "NEEDS_HUMAN_REVIEW"
    assert "policy: category 'user_profile' always goes to a person" in outcome.feedback


@pytest.mark.django_db
def test_policy_llm_required_without_an_llm_escalates(proposer, merges):
    fact(key="home_city", value="Beijing")
    review_policy_set(namespace=proposer.namespaces.get(), actor="test", mode="llm_required")
    outcome = pull_review(pull_id=str(submit(proposer).id))
    assert outcome.status == "NEEDS_HUMAN_REVIEW"
    llm_event = outcome.events[1]
    assert (llm_event.reviewer_kind, llm_event.verdict) == ("llm", "ESCALATE")
    assert llm_event.reasons.startswith("LLM review not run: required by the namespace's policy")


@pytest.mark.django_db
def test_api_submission_is_reviewed_on_commit(agent_client, merges, django_capture_on_commit_callbacks):
    from tests.factories import operation_payload, pull_payload

    fact(key="home_city", value="Beijing")
    body = pull_payload(
        operation_payload(
            action="UPDATE",
            oldValue="Beijing",
            newValue="Shenzhen",
            evidence={"rawMessageQuote": "I moved to Shenzhen last month", "timestamp": 1732096800000},
        )
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = agent_client.post("/api/v1/pulls", body, format="json")
    assert response.status_code == 201
    detail = agent_client.get(f"/api/v1/pulls/{response.json()['id']}").json()
    assert detail["reviewStatus"] == "APPROVED"
    assert detail["reviewerFeedback"].startswith("Approved by rules")


@pytest.mark.django_db
def test_the_merge_writes_the_approved_change_and_skips_the_noop(
    proposer, django_capture_on_commit_callbacks
):
    # given Shenzhen is already current, and the job is about to change
    fact(key="home_city", value="Shenzhen")
    fact(key="job", value="engineer")
    pull = submit(
        proposer,
        op_spec(),  # no-op
        op_spec(key="job", old_value="engineer", new_value="teacher", quote="I became a teacher last year"),
    )
    # when the review approves and hands over to the (real) merge on commit
    with django_capture_on_commit_callbacks(execute=True):
        assert pull_review(pull_id=str(pull.id)).status == "APPROVED"
    # then only the change is merged
    pull.refresh_from_db()
    assert pull.merge_status == "MERGED", pull.merge_feedback
    active = dict(FactVersion.objects.filter(subject="user-1", status="active").values_list("key", "version"))
    assert active == {"home_city": 1, "job": 2}


@pytest.mark.django_db(transaction=True)
def test_two_deliveries_at_once_record_one_review(merges, monkeypatch):
    # given a PENDING KPR (its own hand-off held back) delivered to two workers at once
    from reviewer import tasks
    from tests.factories import agent_with_token

    agent, _ = agent_with_token(name="racer", namespaces=["demo"])
    fact(key="home_city", value="Beijing")
    with monkeypatch.context() as held:
        held.setattr(tasks.review_pull, "delay", lambda pull_id: None)
        pull = submit(agent)
    assert KnowledgePullRequest.objects.get(pk=pull.pk).review_status == "PENDING"
    barrier = threading.Barrier(2)
    outcomes: list[object] = []

    def deliver() -> None:
        try:
            barrier.wait()
            outcomes.append(pull_review(pull_id=str(pull.id)))
        finally:
            connection.close()

    # when both review it
    threads = [threading.Thread(target=deliver) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # then exactly one of them records its decision
    assert sorted(o is None for o in outcomes) == [False, True]
    assert ReviewEvent.objects.filter(pull=pull).count() == 2
    assert AuditEvent.objects.filter(pull_id=pull.id, event_type="pull.reviewed").count() == 2


@pytest.mark.django_db
def test_a_secret_is_rejected_without_being_repeated_anywhere(proposer, merges):
    # given a stale-based update that carries a card number in its value and its evidence
    fact(key="home_city", value="Beijing")
    card = "4111 1111 1111 1111"
    pull = submit(
        proposer, op_spec(old_value="Shanghai", new_value=f"card {card}", quote=f"my card is {card}")
    )
    # when
    outcome = pull_review(pull_id=str(pull.id))
    # then the feedback, the review events and the audit log never repeat it
    assert outcome.status == "REJECTED"
    assert "(values withheld): reject — secrets: newValue contains a card number" in outcome.feedback
    recorded = [outcome.feedback] + [str(e.findings) + e.reasons for e in outcome.events]
    recorded += [
        str(a.payload) for a in AuditEvent.objects.filter(pull_id=pull.id, event_type="pull.reviewed")
    ]
    assert all(card not in text and "4111" not in text for text in recorded)


@pytest.mark.django_db
def test_the_system_proposers_maintenance_kprs_are_approved(merges):
    # given two conflicting facts, and the evolution jobs' KPRs about them
    from memorypr.agents.models import Namespace
    from memorypr.agents.services import agent_system

    system = agent_system(namespace=Namespace.objects.get_or_create(name="demo")[0])
    fact(key="home_city", value="Beijing")
    fact(key="hometown", value="Shenzhen")
    fact(key="old_hobby", value="chess")
    conflict = (
        "Conflict: home_city='Beijing' and hometown='Shenzhen' describe the same attribute with different values"
        " (cosine 0.91); not merged, confidence lowered by 0.20 until one is confirmed."
    )
    lowered = submit(
        system,
        op_spec(old_value="Beijing", new_value="Beijing", confidence=0.7, quote=conflict),
        op_spec(key="hometown", old_value="Shenzhen", new_value="Shenzhen", confidence=0.7, quote=conflict),
        session_id="",
    )
    forget = submit(
        system,
        op_spec(
            action="DELETE", key="old_hobby", old_value="chess", new_value=None, confidence=0.9,
            quote="Forget: score 0.041 is below 0.100 (last used 200 days ago, 0 accesses, importance 0.20).",
        ),
        session_id="",
    )  # fmt: skip
    # when they are reviewed, then they are approved as changes, not no-ops
    outcome = pull_review(pull_id=str(lowered.id))
    assert outcome.status == "APPROVED", outcome.feedback
    assert outcome.events[-1].excluded_operations == []
    assert pull_review(pull_id=str(forget.id)).status == "APPROVED"


@pytest.mark.django_db
def test_a_quote_from_the_agents_own_message_is_not_approved(proposer, merges):
    # given working memory in which only the assistant speaks of sushi
    namespace = proposer.namespaces.get()
    for role, content in [
        ("user", "Hi, can you help me plan a trip?"),
        ("assistant", "Sure! You live in Paris and love sushi, right?"),
    ]:
        turn_append(namespace=namespace, session_id="trip", role=role, content=content, agent=proposer)
    # when a KPR cites the assistant's words
    pull = submit(
        proposer,
        op_spec(action="CREATE", key="favorite_food", old_value=None, new_value="sushi", quote="love sushi"),
        session_id="trip",
    )
    outcome = pull_review(pull_id=str(pull.id))
    # then it waits for a person, and the rules' event says why
    assert outcome.status == "NEEDS_HUMAN_REVIEW"
    assert "the agent's own words" in outcome.feedback
    rules = pull.review_events.get(reviewer_kind=ReviewEvent.ReviewerKind.RULES)
    [evidence] = [c for c in rules.findings[0]["checks"] if c["rule"] == "evidence"]
    assert evidence["verdict"] == "escalate"
    assert AuditEvent.objects.filter(pull_id=pull.id, event_type="pull.reviewed").exists()
    assert merges == []


@pytest.mark.django_db
def test_a_quote_another_subject_said_in_another_session_says_so(proposer, merges):
    # given a user of another subject who said it in their own session
    namespace = proposer.namespaces.get()
    turn_append(namespace=namespace, session_id="bob-1", role="user", content="I love sushi!", agent=proposer)
    submit(proposer, op_spec(action="CREATE", key="likes", old_value=None, new_value="sushi", quote="I love sushi"),
           subject="bob", session_id="bob-1")  # fmt: skip
    turn_append(namespace=namespace, session_id="ann-1", role="user", content="Hello!", agent=proposer)
    # when a KPR about ann cites it from her session
    pull = submit(
        proposer,
        op_spec(action="CREATE", key="likes", old_value=None, new_value="sushi", quote="I love sushi"),
        subject="ann",
        session_id="ann-1",
    )
    outcome = pull_review(pull_id=str(pull.id))
    # then
    assert outcome.status == "NEEDS_HUMAN_REVIEW"
    assert "it is in a user turn of another session, 'bob-1', of another subject ('bob')" in outcome.feedback
    assert merges == []


@pytest.mark.django_db
def test_feedback_names_the_clause_and_marks_the_cue(proposer, merges):
    fact(key="home_city", value="Beijing")
    pull = submit(proposer, op_spec(quote="Work is fine. Next year, I will live in Shenzhen."))
    outcome = pull_review(pull_id=str(pull.id))
    assert outcome.status == "NEEDS_HUMAN_REVIEW"
    assert (
        "the clause “I will live in Shenzhen.” that states the fact reads as a future plan"
        in outcome.feedback
    )
    assert "“«Next year», I will live in Shenzhen.”" in outcome.feedback
    rules = pull.review_events.get(reviewer_kind=ReviewEvent.ReviewerKind.RULES)
    [plan] = [c for c in rules.findings[0]["checks"] if c["rule"] == "future_plan"]
    assert (plan["clause"], plan["cue"]) == ("I will live in Shenzhen.", "next year")
