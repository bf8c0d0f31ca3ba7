"""The proposer against the real API on a real socket: turns, KPR, review, merge, retrieval."""

from __future__ import annotations

import uuid

import pytest

from memorypr.audit.models import AuditEvent
from memorypr.facts.models import FactStatus, FactVersion
from memorypr.formation import Turn, propose, proposer
from memorypr.pulls.models import ReviewEvent

pytestmark = pytest.mark.django_db(transaction=True)


def _evidence_reasons(pull_id: str) -> list[str]:
    event = ReviewEvent.objects.get(pull_id=pull_id, reviewer_kind="rules")
    return [c["reason"] for op in event.findings for c in op["checks"] if c["rule"] == "evidence"]


def test_beijing_then_shenzhen_is_a_create_then_an_update_that_review_approves_and_merge_applies(api):
    # given: the user said where they live in one session
    first = propose(
        client=api, subject="user-1", session_id="s-1", turns=[Turn("user", "I live in Beijing.")]
    )
    (created,) = first.diff.operations
    assert (created["action"], created["key"], created["oldValue"], created["newValue"]) == (
        "CREATE",
        "home_city",
        None,
        "Beijing",
    )
    assert (first.decisions[0].review_status, first.decisions[0].merge_status) == ("APPROVED", "MERGED")
    # when: a month later, in another session
    second = propose(
        client=api,
        subject="user-1",
        session_id="s-2",
        turns=[
            Turn("assistant", "How was your week?"),
            Turn("user", "Busy! I moved to Shenzhen last month."),
        ],
    )
    # then: an UPDATE whose base is Beijing, approved by the real review and merged
    (op,) = second.diff.operations
    assert (op["action"], op["key"], op["oldValue"], op["newValue"]) == (
        "UPDATE",
        "home_city",
        "Beijing",
        "Shenzhen",
    )
    assert op["evidence"]["rawMessageQuote"] == "I moved to Shenzhen last month."
    decision = second.decisions[0]
    assert (decision.review_status, decision.merge_status, decision.settled) == ("APPROVED", "MERGED", True)
    # the review found the quote in the session transcript the proposer posted
    assert any(
        "found verbatim in a user turn of session 's-2'" in r for r in _evidence_reasons(decision.pull_id)
    )
    # the store now serves Shenzhen, and keeps Beijing as history
    versions = FactVersion.objects.filter(subject="user-1", key="home_city").order_by("version")
    assert [(v.value, v.status) for v in versions] == [
        ("Beijing", FactStatus.SUPERSEDED),
        ("Shenzhen", FactStatus.ACTIVE),
    ]
    assert [(f["key"], f["value"]) for f in api.list_facts(subject="user-1")] == [("home_city", "Shenzhen")]
    found = api.retrieve(subject="user-1", query="Where does the user live?")
    assert found["results"][0]["value"] == "Shenzhen"
    assert "Beijing" not in [r["value"] for r in found["results"]]
    # and every step is in the audit trail
    pull_id = uuid.UUID(decision.pull_id)
    assert set(AuditEvent.objects.filter(pull_id=pull_id).values_list("event_type", flat=True)) >= {
        "pull.submitted",
        "pull.reviewed",
        "pull.merged",
    }


def test_saying_it_again_proposes_nothing(api):
    # given
    propose(client=api, subject="user-1", session_id="s-1", turns=[Turn("user", "我住在北京。")])
    # when
    again = propose(client=api, subject="user-1", session_id="s-2", turns=[Turn("user", "我住在北京")])
    # then
    assert again.pulls == []
    assert [s.reason for s in again.diff.skipped] == ["unchanged: already the current value"]


def test_a_joke_is_not_proposed_and_an_allergy_waits_for_a_person(api):
    # when
    proposal = propose(
        client=api,
        subject="user-1",
        session_id="s-1",
        turns=[Turn("user", "我明天要去火星上班，开玩笑的。我对花生过敏。")],
    )
    # then: only the allergy is proposed, and the protected key goes to the human queue
    assert [op["key"] for op in proposal.diff.operations] == ["allergy.花生"]
    assert proposal.decisions[0].review_status == "NEEDS_HUMAN_REVIEW"
    assert proposal.decisions[0].merge_status == "UNMERGED"
    assert not FactVersion.objects.filter(subject="user-1").exists()


def test_a_fact_removed_in_conversation_is_deleted(api):
    # given
    propose(client=api, subject="u", session_id="s-1", turns=[Turn("user", "I work at Tencent.")])
    # when
    gone = propose(
        client=api, subject="u", session_id="s-2", turns=[Turn("user", "I no longer work at Tencent.")]
    )
    # then
    (op,) = gone.diff.operations
    assert (op["action"], op["oldValue"], op["newValue"]) == ("DELETE", "Tencent", None)
    assert gone.decisions[0].merged
    assert FactVersion.objects.get(subject="u", key="employer").status == FactStatus.RETRACTED


def test_in_a_subject_larger_than_a_page_a_change_still_updates_the_key_it_changes(api, monkeypatch):
    # given a subject with more active facts than the proposer reads whole
    monkeypatch.setattr(proposer, "WHOLE_SUBJECT_MAX_FACTS", 2)
    propose(
        client=api,
        subject="big",
        session_id="s-1",
        turns=[Turn("user", "I live in Beijing. I have a dog. I work at Tencent. I like jazz.")],
    )
    assert FactVersion.objects.filter(subject="big", status=FactStatus.ACTIVE).count() == 4
    # when the user says where they live now, in the words of an alias, and restates the dog
    moved = propose(
        client=api,
        subject="big",
        session_id="s-2",
        turns=[Turn("user", "I moved to Shenzhen. I have a dog.")],
    )
    # then the change is an UPDATE of the key it changes, and the restatement is no operation
    assert [(op["action"], op["key"], op["oldValue"], op["newValue"]) for op in moved.diff.operations] == [
        ("UPDATE", "home_city", "Beijing", "Shenzhen")
    ]
    assert moved.decisions[0].merge_status == "MERGED"
    active = FactVersion.objects.filter(subject="big", key="home_city", status=FactStatus.ACTIVE)
    assert [fact.value for fact in active] == ["Shenzhen"]


def test_without_a_model_or_embedder_only_the_facts_the_new_keys_reach_are_read(api, monkeypatch):
    # given a subject with facts, and a record of how the proposer reads them
    propose(
        client=api, subject="u", session_id="s-1", turns=[Turn("user", "I live in Beijing. I like jazz.")]
    )
    pages: list[int] = []
    scoped: list[dict[str, object]] = []
    read_page, read_scoped = api.list_facts_page, api.list_facts
    monkeypatch.setattr(api, "list_facts_page", lambda **kw: pages.append(kw["page_size"]) or read_page(**kw))
    monkeypatch.setattr(api, "list_facts", lambda **kw: scoped.append(kw) or read_scoped(**kw))
    # when the user says where they live now
    moved = propose(client=api, subject="u", session_id="s-2", turns=[Turn("user", "I moved to Shenzhen.")])
    # then no page of the subject was read, only the keys the new fact can resolve to, and the
    # change is the same UPDATE
    assert pages == []
    assert len(scoped) == 1 and "home_city" in scoped[0]["keys"]
    assert [(op["action"], op["key"], op["oldValue"]) for op in moved.diff.operations] == [
        ("UPDATE", "home_city", "Beijing")
    ]
