from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memorypr.audit.models import AuditEvent
from memorypr.common.locks import AUDIT_CHAIN_LOCK
from memorypr.facts.models import FactStatus, FactVersion
from memorypr.facts.selectors import fact_list
from tests.facts.kprs import active, approved, create, delete, merge, merged, update, versions

pytestmark = pytest.mark.django_db


def chain(proposer, namespace, length: int) -> list[str]:
    """base <- d1 <- d2 <- ... : each derived fact rests on the one before it."""
    keys = ["base"] + [f"d{i}" for i in range(1, length + 1)]
    ops = [create("base", "the user likes coffee")]
    ops += [
        create(key, f"conclusion {key}", category="derived", derived_from=[keys[i]])
        for i, key in enumerate(keys[1:])
    ]
    merged(proposer, namespace, *ops)
    return keys


def xmins(table: str, ids: list) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT xmin::text FROM {table} WHERE id = ANY(%s)", [ids])
        return {row[0] for row in cursor.fetchall()}


def test_the_seed_scenario_old_fact_superseded_and_policy_stale_in_one_transaction(proposer, namespace):
    # given "user likes coffee" and a policy derived from it
    merged(
        proposer,
        namespace,
        create("likes_coffee", "user likes coffee"),
        create(
            "offer_coffee_when_tired",
            "offer coffee when the user is tired",
            category="derived",
            derived_from=["likes_coffee"],
        ),
    )
    old, policy = active(namespace, "likes_coffee"), active(namespace, "offer_coffee_when_tired")
    # when the user no longer drinks coffee
    pull = merged(proposer, namespace, update("likes_coffee", "user likes coffee", "no longer drinks coffee"))
    # then the old fact is superseded, the policy stale, the new fact active
    old.refresh_from_db()
    policy.refresh_from_db()
    new = active(namespace, "likes_coffee")
    assert old.status == FactStatus.SUPERSEDED and policy.status == FactStatus.STALE
    assert new.value == "no longer drinks coffee"
    assert old.retired_by_pull_id == policy.retired_by_pull_id == new.pull_id == pull.pk
    assert old.retired_at == policy.retired_at == new.created_at == pull.merged_at
    # and the retirement, the staleness, the new version and the MERGED mark are row versions
    # of one transaction (one xmin; the audit rows use savepoints of it, and
    # test_a_crash_mid_merge_leaves_nothing_behind shows a failure at the last one undoes all)
    merge_xid = xmins("facts_factversion", [old.pk, policy.pk, new.pk])
    assert len(merge_xid) == 1
    assert xmins("pulls_knowledgepullrequest", [pull.pk]) == merge_xid
    merge_events = list(AuditEvent.objects.filter(pull_id=pull.pk).exclude(event_type="pull.submitted"))
    assert [e.event_type for e in merge_events] == [
        "pull.reviewed",
        "fact.updated",
        "fact.staled",
        "pull.merged",
    ]
    staled = merge_events[2].payload
    assert staled["factId"] == policy.pk and staled["to"] == "stale" and staled["depth"] == 1
    assert staled["because"] == {
        "factId": old.pk,
        "category": "user_profile",
        "key": "likes_coffee",
        "version": 1,
    }
    # and what is active now serves no coffee
    assert {f.key for f in fact_list(namespace_id=namespace.pk, subject="user-1")} == {"likes_coffee"}


def test_stale_propagates_across_three_hops(proposer, namespace):
    # given base <- d1 <- d2 <- d3
    chain(proposer, namespace, 3)
    # when
    pull = merged(proposer, namespace, update("base", "the user likes coffee", "the user drinks tea"))
    # then
    assert {k: active(namespace, k) is None for k in ("d1", "d2", "d3")} == {
        "d1": True,
        "d2": True,
        "d3": True,
    }
    staled = AuditEvent.objects.filter(pull_id=pull.pk, event_type="fact.staled").order_by("sequence")
    assert [(e.payload["key"], e.payload["depth"], e.payload["because"]["key"]) for e in staled] == [
        ("d1", 1, "base"),
        ("d2", 2, "base"),
        ("d3", 3, "base"),
    ]


def test_stale_stops_at_the_depth_limit(proposer, namespace):
    # given base <- d1 <- d2 <- d3 <- d4 and the default limit of 3
    chain(proposer, namespace, 4)
    # when
    merged(proposer, namespace, update("base", "the user likes coffee", "the user drinks tea"))
    # then d4, four hops away, stays active
    status = dict(FactVersion.objects.filter(key__startswith="d").values_list("key", "status"))
    assert status == {"d1": "stale", "d2": "stale", "d3": "stale", "d4": "active"}


def test_the_depth_limit_is_a_setting(proposer, namespace, settings):
    # given
    settings.MEMORYPR_STALE_MAX_DEPTH = 1
    chain(proposer, namespace, 2)
    # when
    merged(proposer, namespace, delete("base", "the user likes coffee"))
    # then a retraction propagates too, one hop only
    status = dict(FactVersion.objects.filter(key__startswith="d").values_list("key", "status"))
    assert status == {"d1": "stale", "d2": "active"}


def test_propagation_is_one_statement(proposer, namespace):
    # given a diamond: two conclusions on the base, a third on both
    merged(
        proposer,
        namespace,
        create("base", "likes coffee"),
        create("a", "offers espresso", category="derived", derived_from=["base"]),
        create("b", "buys beans", category="derived", derived_from=["base"]),
        create("c", "coffee budget", category="derived", derived_from=["a", "b"]),
    )
    # when
    with CaptureQueriesContext(connection) as queries:
        merged(proposer, namespace, update("base", "likes coffee", "likes tea"))
    # then one recursive statement marks all three, each once, at its shortest depth
    stale_statements = [q["sql"] for q in queries.captured_queries if "SET status = 'stale'" in q["sql"]]
    assert len(stale_statements) == 1 and "WITH RECURSIVE" in stale_statements[0]
    staled = AuditEvent.objects.filter(event_type="fact.staled").order_by("sequence")
    assert [(e.payload["key"], e.payload["depth"]) for e in staled] == [("a", 1), ("b", 1), ("c", 2)]


def test_already_retired_dependents_are_left_alone(proposer, namespace):
    # given a policy that was itself replaced by a version resting on something else
    merged(
        proposer,
        namespace,
        create("likes_coffee", "likes coffee"),
        create("likes_tea", "likes tea"),
        create("offer", "offer coffee", category="derived", derived_from=["likes_coffee"]),
    )
    merged(
        proposer,
        namespace,
        update("offer", "offer coffee", "offer tea", category="derived", derived_from=["likes_tea"]),
    )
    # when the first basis changes
    pull = merged(proposer, namespace, update("likes_coffee", "likes coffee", "dislikes coffee"))
    # then the current policy is untouched and the old one keeps its status
    first, second = versions(namespace, "offer")
    assert (first.status, second.status) == (FactStatus.SUPERSEDED, FactStatus.ACTIVE)
    assert not AuditEvent.objects.filter(pull_id=pull.pk, event_type="fact.staled").exists()


def test_the_merge_takes_the_audit_chain_lock_after_the_stale_update(proposer, namespace):
    # given a policy derived from a fact
    merged(
        proposer,
        namespace,
        create("likes_coffee", "user likes coffee"),
        create("offer_coffee", "offer coffee", category="derived", derived_from=["likes_coffee"]),
    )
    pull = approved(proposer, namespace, update("likes_coffee", "user likes coffee", "drinks tea"))
    # when the update merges and makes the policy stale
    with CaptureQueriesContext(connection) as queries:
        merge(pull)
    # then the stale propagation's row locks come before the first audit chain lock
    statements = [q["sql"] for q in queries.captured_queries]
    stale_update = next(i for i, sql in enumerate(statements) if "SET status = 'stale'" in sql)
    first_audit_lock = next(i for i, sql in enumerate(statements) if str(AUDIT_CHAIN_LOCK) in sql)
    assert active(namespace, "offer_coffee") is None
    assert stale_update < first_audit_lock
