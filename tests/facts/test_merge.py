from __future__ import annotations

import math

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memorypr.audit.models import AuditEvent
from memorypr.facts.models import EdgeType, FactEdge, FactStatus, FactVersion
from memorypr.facts.services import pull_merge
from memorypr.facts.services.merge import pull_merge_read_many
from memorypr.pulls.models import MergeStatus
from memorypr.vectors import store as vector_store
from memorypr.vectors.embedding import embed_texts, fact_text
from tests.facts.kprs import (
    active,
    approve,
    approved,
    create,
    delete,
    merge,
    merged,
    submit,
    update,
    versions,
)

pytestmark = pytest.mark.django_db


def events(pull, event_type=None):
    qs = AuditEvent.objects.filter(pull_id=pull.pk).order_by("sequence")
    if event_type:
        qs = qs.filter(event_type=event_type)
    return list(qs)


def test_create_update_delete_chain(proposer, namespace):
    # given a fact created, then updated, then deleted, then created again
    first = merged(proposer, namespace, create("home_city", "Beijing"))
    second = merged(proposer, namespace, update("home_city", "Beijing", "Shenzhen"))
    third = merged(proposer, namespace, delete("home_city", "Shenzhen"))
    fourth = merged(proposer, namespace, create("home_city", "Hangzhou"))
    # then every step is a version; only the last is active
    v1, v2, v3 = versions(namespace, "home_city")
    assert [(v.version, v.value, v.status) for v in (v1, v2, v3)] == [
        (1, "Beijing", FactStatus.SUPERSEDED),
        (2, "Shenzhen", FactStatus.RETRACTED),
        (3, "Hangzhou", FactStatus.ACTIVE),
    ]
    assert (v1.pull_id, v1.retired_by_pull_id) == (first.pk, second.pk)
    assert (v2.pull_id, v2.retired_by_pull_id) == (second.pk, third.pk)
    assert (v3.pull_id, v3.retired_by_pull_id) == (fourth.pk, None)
    # and a version starts exactly when its predecessor ends, at the KPR's merge time
    assert v1.created_at == first.merged_at and v1.retired_at == second.merged_at == v2.created_at
    assert v2.retired_at == third.merged_at and v3.created_at == fourth.merged_at and v3.retired_at is None
    assert list(FactEdge.objects.values_list("source_id", "target_id", "edge_type")) == [
        (v2.pk, v1.pk, EdgeType.UPDATES)
    ]
    assert v2.operation.action == "UPDATE" and v2.operation.pull_id == second.pk
    # and the audit trail tells each step, old → new
    created = events(first, "fact.created")[0].payload
    assert created["factId"] == v1.pk and created["newValue"] == "Beijing" and created["previous"] is None
    updated = events(second, "fact.updated")[0].payload
    assert updated["previous"] == {"factId": v1.pk, "version": 1, "value": "Beijing", "to": "superseded"}
    assert updated["newValue"] == "Shenzhen" and updated["factId"] == v2.pk
    retracted = events(third, "fact.retracted")[0].payload
    assert retracted["previous"] == {"factId": v2.pk, "version": 2, "value": "Shenzhen", "to": "retracted"}
    for pull in (first, second, third, fourth):
        assert pull.merge_status == MergeStatus.MERGED and pull.merged_at is not None
        [done] = events(pull, "pull.merged")
        assert done.actor == "system:merge"


def test_every_written_version_gets_its_embedding_and_search_text(proposer, namespace):
    # when
    merged(proposer, namespace, create("home_city", "上个月我举家搬迁到了深圳"), create("likes_tea", True))
    # then the embedding is the model's embedding of the fact text
    fact = active(namespace, "home_city")
    expected = embed_texts([fact_text(key="home_city", value="上个月我举家搬迁到了深圳")])[0]
    assert len(fact.embedding) == 384
    assert math.isclose(sum(a * b for a, b in zip(fact.embedding, expected, strict=True)), 1.0, abs_tol=1e-4)
    # and the search text carries key words and segmented Chinese
    assert {"home", "city", "深圳", "搬迁"} <= set(fact.search_text.split())
    assert active(namespace, "likes_tea").search_text.split() == ["likes", "tea", "true"]


@pytest.mark.django_db(transaction=True)
def test_embeddings_are_computed_before_the_transaction_opens(
    proposer, namespace, monkeypatch, no_merge_handoff
):
    # given an approved KPR, and a record of whether a transaction is open at each embedding
    pull = approved(proposer, namespace, create("a", "x"), create("b", "y"), create("c", "z"))
    in_transaction: list[bool] = []

    def embed_and_note(texts, **kwargs):  # type: ignore[no-untyped-def]
        in_transaction.append(connection.in_atomic_block)
        return embed_texts(texts, **kwargs)

    monkeypatch.setattr(vector_store, "embed_texts", embed_and_note)
    # when it is merged
    outcome = merge(pull)
    # then its texts were embedded once, in one batch, while no transaction was open
    assert outcome.merged and outcome.operations == 3
    assert in_transaction == [False]
    assert 0 < outcome.embed_seconds < outcome.seconds


@pytest.mark.parametrize(
    ("existing", "operation", "reason", "current"),
    [
        ("Beijing", create("home_city", "Shanghai"), "already has an active value", '"Beijing" (v1)'),
        (
            "Beijing",
            update("home_city", "Guangzhou", "Shanghai"),
            "oldValue is not the current value",
            '"Beijing" (v1)',
        ),
        ("Beijing", delete("home_city", "Guangzhou"), "oldValue is not the current value", '"Beijing" (v1)'),
        (None, update("home_city", "Beijing", "Shanghai"), "no active value to update", "none"),
        (None, delete("home_city", "Beijing"), "no active value to delete", "none"),
    ],
)
def test_a_changed_base_is_a_conflict_and_nothing_is_written(
    proposer, namespace, existing, operation, reason, current
):
    # given
    if existing is not None:
        merged(proposer, namespace, create("home_city", existing))
    pull = approved(proposer, namespace, create("unrelated", "kept out"), operation)
    facts_before, edges_before = FactVersion.objects.count(), FactEdge.objects.count()
    # when
    outcome = merge(pull)
    # then
    assert outcome.merge_status == MergeStatus.CONFLICT and not outcome.merged
    assert pull.merge_status == MergeStatus.CONFLICT and pull.merged_at is None
    assert reason in pull.merge_feedback and f"current value {current}" in pull.merge_feedback
    assert "operations[1]" in pull.merge_feedback
    assert (FactVersion.objects.count(), FactEdge.objects.count()) == (facts_before, edges_before)
    assert active(namespace, "unrelated") is None
    [conflict] = events(pull, "pull.merge_conflict")
    assert conflict.payload["conflicts"][0]["operation"] == 1
    assert conflict.payload["conflicts"][0]["current"] == existing
    assert not [e for e in events(pull) if e.event_type.startswith("fact.") or e.event_type == "pull.merged"]


def test_a_conflicted_kpr_is_not_merged_later(proposer, namespace):
    # given a conflict
    merged(proposer, namespace, create("home_city", "Beijing"))
    pull = approved(proposer, namespace, update("home_city", "Shanghai", "Shenzhen"))
    merge(pull)
    # when the base comes back and the merge runs again
    merged(proposer, namespace, update("home_city", "Beijing", "Shanghai"))
    outcome = merge(pull)
    # then the conflict stands: the proposer resubmits against the current value
    assert not outcome.merged and pull.merge_status == MergeStatus.CONFLICT
    assert active(namespace, "home_city").value == "Shanghai"


@pytest.mark.parametrize("review_status", ["PENDING", "REJECTED", "NEEDS_HUMAN_REVIEW"])
def test_only_approved_kprs_merge(proposer, namespace, review_status):
    # given
    pull = submit(proposer, namespace, create("home_city", "Beijing"))
    if review_status != "PENDING":
        from memorypr.pulls.models import KnowledgePullRequest

        KnowledgePullRequest.objects.filter(pk=pull.pk).update(review_status=review_status)
    # when
    outcome = merge(pull)
    # then
    assert not outcome.merged and review_status in outcome.detail
    assert pull.merge_status == MergeStatus.UNMERGED
    assert FactVersion.objects.count() == 0
    assert not events(pull, "pull.merged")


def test_merging_twice_is_a_no_op(proposer, namespace):
    # given
    pull = merged(proposer, namespace, create("home_city", "Beijing"), create("likes_tea", True))
    merged_at = pull.merged_at
    # when
    again = merge(pull)
    # then
    assert not again.merged and again.detail == "already merged"
    assert pull.merge_status == MergeStatus.MERGED and pull.merged_at == merged_at
    assert FactVersion.objects.count() == 2
    assert len(events(pull, "pull.merged")) == 1 and len(events(pull, "fact.created")) == 2


def test_unknown_kpr_is_skipped(db):
    outcome = pull_merge(pull_id="00000000-0000-0000-0000-000000000000")
    assert not outcome.merged and outcome.detail == "unknown KPR"


def test_excluded_operations_are_not_merged(proposer, namespace):
    # given a human approved the KPR without its second operation
    pull = submit(
        proposer, namespace, create("home_city", "Beijing"), create("salary", 1000), create("likes_tea", True)
    )
    approve(pull, excluded=[1], kind="human")
    # when
    outcome = merge(pull)
    # then
    assert outcome.merged and outcome.operations == 2
    assert (
        active(namespace, "home_city")
        and active(namespace, "likes_tea")
        and not versions(namespace, "salary")
    )
    assert "excluded by review: [1]" in pull.merge_feedback
    [done] = events(pull, "pull.merged")
    assert done.payload["operations"] == [0, 2] and done.payload["excludedOperations"] == [1]


def test_the_latest_approval_decides_what_is_excluded(proposer, namespace):
    # given an earlier approval excluded one operation, the final one excluded another
    pull = submit(proposer, namespace, create("a", 1), create("b", 2))
    approve(pull, excluded=[0])
    approve(pull, excluded=[1], kind="human")
    # when
    merge(pull)
    # then
    assert active(namespace, "a") and not versions(namespace, "b")


def test_qualifies_keeps_the_qualified_fact_active_and_links_both(proposer, namespace):
    # given
    merged(proposer, namespace, create("likes_scifi_movies", "likes science-fiction films"))
    # when
    pull = merged(
        proposer,
        namespace,
        update(
            "likes_scifi_movies",
            "likes science-fiction films",
            "except horror science fiction",
            relation="QUALIFIES",
        ),
    )
    # then both are active, linked by QUALIFIES
    base = active(namespace, "likes_scifi_movies")
    qualifier = active(namespace, "likes_scifi_movies:qualifier")
    assert base.version == 1 and base.value == "likes science-fiction films"
    assert qualifier.value == "except horror science fiction" and qualifier.embedding is not None
    assert list(FactEdge.objects.values_list("source_id", "target_id", "edge_type")) == [
        (qualifier.pk, base.pk, EdgeType.QUALIFIES)
    ]
    [event] = events(pull, "fact.qualified")
    assert event.payload["qualified"] == {"factId": base.pk, "key": "likes_scifi_movies"}
    # and a second qualifier replaces the first, the base still active
    merged(
        proposer,
        namespace,
        update(
            "likes_scifi_movies",
            "likes science-fiction films",
            "except horror and space opera",
            relation="QUALIFIES",
        ),
    )
    first, second = versions(namespace, "likes_scifi_movies:qualifier")
    assert (first.status, second.status) == (FactStatus.SUPERSEDED, FactStatus.ACTIVE)
    assert active(namespace, "likes_scifi_movies").pk == base.pk
    assert {(e.target_id, e.edge_type) for e in second.out_edges.all()} == {
        (base.pk, EdgeType.QUALIFIES),
        (first.pk, EdgeType.UPDATES),
    }


def test_relations_add_typed_edges(proposer, namespace):
    # given
    merged(proposer, namespace, create("drinks", "coffee every morning"), create("sleep", "sleeps badly"))
    # when an UPDATE contradicts its base, and a CREATE supports what it is derived from
    merged(
        proposer,
        namespace,
        update("drinks", "coffee every morning", "no coffee at all", relation="CONTRADICTS"),
        create("tired_mornings", "often tired in the morning", relation="SUPPORTS", derived_from=["sleep"]),
    )
    # then
    old, new = versions(namespace, "drinks")
    tired, sleep = active(namespace, "tired_mornings"), active(namespace, "sleep")
    assert {(e.target_id, e.edge_type) for e in new.out_edges.all()} == {
        (old.pk, EdgeType.UPDATES),
        (old.pk, EdgeType.CONTRADICTS),
    }
    assert {(e.target_id, e.edge_type) for e in tired.out_edges.all()} == {
        (sleep.pk, EdgeType.DERIVED_FROM),
        (sleep.pk, EdgeType.SUPPORTS),
    }


def test_derived_from_links_the_active_version_in_any_category(proposer, namespace):
    # given a base fact in another category
    merged(proposer, namespace, create("diet", "vegetarian", category="domain_fact"))
    # when a derived policy and the fact it rests on are written by the same KPR
    merged(
        proposer,
        namespace,
        create("likes_coffee", "likes coffee"),
        create(
            "offer_menu",
            "offer vegetarian dishes with coffee",
            category="derived",
            derived_from=["likes_coffee", "diet"],
        ),
    )
    # then
    policy = active(namespace, "offer_menu")
    targets = {e.target.key: e.target for e in policy.out_edges.filter(edge_type=EdgeType.DERIVED_FROM)}
    assert set(targets) == {"likes_coffee", "diet"}
    assert targets["diet"].category == "domain_fact" and targets["likes_coffee"].status == FactStatus.ACTIVE


def test_derived_from_a_missing_fact_is_a_conflict(proposer, namespace):
    pull = approved(
        proposer, namespace, create("offer_tea", "offer tea", category="derived", derived_from=["likes_tea"])
    )
    merge(pull)
    assert pull.merge_status == MergeStatus.CONFLICT
    assert "derivedFrom 'likes_tea' has no active fact" in pull.merge_feedback
    assert FactVersion.objects.count() == 0


def test_an_update_without_derived_from_keeps_its_dependencies(proposer, namespace):
    # given a policy derived from a preference
    merged(
        proposer,
        namespace,
        create("likes_coffee", "likes coffee"),
        create("offer_coffee", "offer coffee", category="derived", derived_from=["likes_coffee"]),
    )
    # when the policy is reworded without naming its basis
    merged(
        proposer,
        namespace,
        update("offer_coffee", "offer coffee", "offer a flat white", category="derived"),
    )
    # then it still rests on the preference, so it goes stale when that changes
    reworded = active(namespace, "offer_coffee")
    assert [e.target.key for e in reworded.out_edges.filter(edge_type=EdgeType.DERIVED_FROM)] == [
        "likes_coffee"
    ]
    merged(proposer, namespace, update("likes_coffee", "likes coffee", "no longer drinks coffee"))
    reworded.refresh_from_db()
    assert reworded.status == FactStatus.STALE


@pytest.mark.parametrize(
    "trigger_sql",
    [
        # after the versions are written and retired, before any edge
        "CREATE TRIGGER crash_mid_merge BEFORE INSERT ON facts_factedge "
        "FOR EACH ROW EXECUTE FUNCTION crash_mid_merge()",
        # at the very end, after versions, edges, stale propagation and vectors
        "CREATE TRIGGER crash_mid_merge BEFORE INSERT ON audit_auditevent "
        "FOR EACH ROW WHEN (NEW.event_type = 'pull.merged') EXECUTE FUNCTION crash_mid_merge()",
    ],
    ids=["before-edges", "at-the-end"],
)
def test_a_crash_mid_merge_leaves_nothing_behind(proposer, namespace, trigger_sql):
    # given a fact with a derived policy, and an approved update of the fact
    merged(
        proposer,
        namespace,
        create("likes_coffee", "likes coffee"),
        create("offer_coffee", "offer coffee when tired", category="derived", derived_from=["likes_coffee"]),
    )
    pull = approved(proposer, namespace, update("likes_coffee", "likes coffee", "no longer drinks coffee"))
    facts_before = list(FactVersion.objects.order_by("pk").values_list("pk", "status", "retired_at"))
    edges_before = FactEdge.objects.count()
    audit_before = AuditEvent.objects.order_by("-sequence").values_list("sequence", flat=True).first()
    # and a database fault injected in the middle of the merge
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE FUNCTION crash_mid_merge() RETURNS trigger AS $$ BEGIN "
            "RAISE EXCEPTION 'injected crash'; END; $$ LANGUAGE plpgsql"
        )
        cursor.execute(trigger_sql)
    # when
    outcome = merge(pull)
    # then nothing of the merge is left, and the failure is on record
    assert outcome.merge_status == MergeStatus.FAILED and not outcome.merged
    assert pull.merge_status == MergeStatus.FAILED and pull.merged_at is None
    assert "injected crash" in pull.merge_feedback
    assert list(FactVersion.objects.order_by("pk").values_list("pk", "status", "retired_at")) == facts_before
    assert FactEdge.objects.count() == edges_before
    new_events = list(
        AuditEvent.objects.filter(sequence__gt=audit_before).values_list("event_type", flat=True)
    )
    assert new_events == ["pull.merge_failed"]
    # and once the fault is gone, the same KPR merges (a failure is retried, not final)
    with connection.cursor() as cursor:
        cursor.execute("DROP FUNCTION crash_mid_merge() CASCADE")
    assert merge(pull).merged
    assert active(namespace, "likes_coffee").value == "no longer drinks coffee"
    assert FactVersion.objects.get(key="offer_coffee").status == FactStatus.STALE


def test_the_merge_reads_the_facts_it_replaces_without_their_vectors(proposer, namespace):
    # given a merged fact, and a KPR updating it
    pull_merge(pull_id=str(approved(proposer, namespace, create("home_city", "Beijing")).pk))
    pull = approved(proposer, namespace, update("home_city", "Beijing", "Shenzhen"))
    # when the update merges
    with CaptureQueriesContext(connection) as merge:
        outcome = pull_merge(pull_id=str(pull.pk))
    # then the rows it read and locked came without the vector store's columns (most of a row's
    # bytes), and the version it wrote has its own vector
    reads = [
        q["sql"]
        for q in merge.captured_queries
        if q["sql"].startswith("SELECT") and "facts_factversion" in q["sql"]
    ]
    assert outcome.merged and reads
    assert not [sql for sql in reads if "embedding" in sql or "search_text" in sql or "search_vector" in sql]
    assert active(namespace, "home_city").embedding is not None


def test_a_batch_of_kprs_is_read_in_two_queries_in_the_order_given(proposer, namespace):
    # given two approved KPRs, one merged already, one only submitted, an unknown id and a malformed one
    first = approved(proposer, namespace, create("home_city", "Beijing"), create("pet", "cat"))
    done = approved(proposer, namespace, create("job", "nurse"), subject="user-2")
    pull_merge(pull_id=str(done.pk))
    pending = submit(proposer, namespace, create("car", "bike"), subject="user-3")
    second = approved(proposer, namespace, create("hobby", "chess"), subject="user-4")
    ids = [second.pk.hex, "not-a-uuid", str(done.pk), str(first.pk), str(pending.pk), "0" * 32]
    # when they are read for their merge
    with CaptureQueriesContext(connection) as queries:
        read = pull_merge_read_many(pull_ids=ids, started=0.0)
    # then two queries read them all, in the order given, each with its own operations or why it is skipped
    assert len(queries.captured_queries) == 2
    assert [p.pull_id for p in read] == [str(second.pk), "not-a-uuid", str(done.pk), str(first.pk),
                                         str(pending.pk), "0" * 32]  # fmt: skip
    assert [[op.key for op in p.operations] for p in read] == [
        ["hobby"],
        [],
        [],
        ["home_city", "pet"],
        [],
        [],
    ]
    assert [p.skip.detail if p.skip else "" for p in read] == [
        "",
        "unknown KPR",
        "already merged",
        "",
        f"review status is {pending.review_status}; only APPROVED KPRs merge",
        "unknown KPR",
    ]
