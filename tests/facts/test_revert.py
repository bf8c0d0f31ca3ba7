from __future__ import annotations

import pytest

from memorypr.audit.models import AuditEvent
from memorypr.facts.models import FactStatus
from memorypr.pulls.models import MergeStatus, ReviewStatus
from memorypr.revert.services import RevertRefused, pull_revert
from tests.facts.kprs import active, approve, approved, create, delete, merge, merged, update, versions

pytestmark = pytest.mark.django_db


def ops_of(pull):
    return [
        (o.action, o.category, o.key, o.old_value, o.new_value, o.derived_from)
        for o in pull.operations.order_by("position")
    ]


def test_revert_of_an_update_restores_the_previous_value_and_its_derived_policy(proposer, namespace):
    # given the seed scenario, merged
    merged(
        proposer,
        namespace,
        create("likes_coffee", "user likes coffee"),
        create("offer_coffee", "offer coffee when tired", category="derived", derived_from=["likes_coffee"]),
    )
    change = merged(
        proposer, namespace, update("likes_coffee", "user likes coffee", "no longer drinks coffee")
    )
    # when it is reverted
    revert, created = pull_revert(pull=change, agent=proposer, reason="the user was joking")
    # then a new, pending KPR proposes the inverse operations against the current values
    assert created and revert.reverts_id == change.pk and revert.review_status == ReviewStatus.PENDING
    assert ops_of(revert) == [
        ("UPDATE", "user_profile", "likes_coffee", "no longer drinks coffee", "user likes coffee", []),
        ("CREATE", "derived", "offer_coffee", None, "offer coffee when tired", ["likes_coffee"]),
    ]
    assert revert.operations.first().evidence["rawMessageQuote"] == "the user was joking"
    submitted = AuditEvent.objects.get(pull_id=revert.pk, event_type="pull.submitted")
    assert submitted.payload["reverts"] == str(change.pk)
    # and once approved and merged, the old state is back, as new versions
    approve(revert)
    assert merge(revert).merged
    coffee = versions(namespace, "likes_coffee")
    assert [(v.value, v.status) for v in coffee] == [
        ("user likes coffee", FactStatus.SUPERSEDED),
        ("no longer drinks coffee", FactStatus.SUPERSEDED),
        ("user likes coffee", FactStatus.ACTIVE),
    ]
    policy = active(namespace, "offer_coffee")
    assert policy.version == 2 and [e.target_id for e in policy.out_edges.all()] == [coffee[2].pk]


def test_revert_of_creates_and_deletes(proposer, namespace):
    # given
    merged(proposer, namespace, create("pet", "cat"))
    change = merged(proposer, namespace, create("home_city", "Beijing"), delete("pet", "cat"))
    # when
    revert, _ = pull_revert(pull=change, agent=proposer)
    approve(revert)
    merge(revert)
    # then
    assert (
        active(namespace, "home_city") is None and versions(namespace, "home_city")[0].status == "retracted"
    )
    assert active(namespace, "pet").value == "cat" and active(namespace, "pet").version == 2


def test_revert_of_a_qualifier_removes_it_and_leaves_the_base(proposer, namespace):
    merged(proposer, namespace, create("likes_scifi", "likes sci-fi"))
    change = merged(
        proposer, namespace, update("likes_scifi", "likes sci-fi", "not horror", relation="QUALIFIES")
    )
    revert, _ = pull_revert(pull=change, agent=proposer)
    assert ops_of(revert) == [("DELETE", "user_profile", "likes_scifi:qualifier", "not horror", None, [])]


def test_a_revert_conflicts_when_the_facts_changed_since(proposer, namespace):
    # given the reverted value was changed again afterwards
    merged(proposer, namespace, create("home_city", "Beijing"))
    change = merged(proposer, namespace, update("home_city", "Beijing", "Shenzhen"))
    merged(proposer, namespace, update("home_city", "Shenzhen", "Hangzhou"))
    # when
    revert, _ = pull_revert(pull=change, agent=proposer)
    approve(revert)
    merge(revert)
    # then the later change is not silently undone
    assert revert.merge_status == MergeStatus.CONFLICT
    assert 'current value "Hangzhou" (v3)' in revert.merge_feedback
    assert active(namespace, "home_city").value == "Hangzhou"


def test_excluded_operations_are_not_reverted(proposer, namespace):
    pull = approved(proposer, namespace, create("a", 1))
    approve(pull, excluded=[], kind="human")
    merge(pull)
    partly = approved(proposer, namespace, update("a", 1, 2), create("b", 3))
    approve(partly, excluded=[1], kind="human")
    merge(partly)
    revert, _ = pull_revert(pull=partly, agent=proposer)
    assert ops_of(revert) == [("UPDATE", "user_profile", "a", 2, 1, [])]


def test_only_a_merged_kpr_can_be_reverted(proposer, namespace):
    pull = approved(proposer, namespace, create("a", 1))
    with pytest.raises(RevertRefused, match="only a MERGED KPR"):
        pull_revert(pull=pull, agent=proposer)


def test_the_same_idempotency_key_returns_the_first_revert(proposer, namespace):
    change = merged(proposer, namespace, create("a", 1))
    first, created = pull_revert(pull=change, agent=proposer, idempotency_key="undo-1")
    again, created_again = pull_revert(pull=change, agent=proposer, idempotency_key="undo-1")
    assert created and not created_again and first.pk == again.pk
