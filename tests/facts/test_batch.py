from __future__ import annotations

import psycopg
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memorypr.audit.models import AuditEvent
from memorypr.common.locks import MERGE_DRAIN_LOCK
from memorypr.facts.services import pull_merge, pull_merge_batch, pull_merge_drain
from memorypr.facts.services.batch import merge_lanes
from memorypr.pulls.models import MergeStatus
from memorypr.pulls.selectors import pull_merge_lane
from memorypr.vectors import store
from tests.facts.kprs import active, approved, create, submit, update, versions

pytestmark = pytest.mark.django_db


def _merged_in(pulls) -> list[str]:
    """KPR ids in the order their pull.merged audit events were written."""
    wanted = {str(p.pk) for p in pulls}
    events = AuditEvent.objects.filter(event_type="pull.merged").order_by("sequence")
    return [str(e.pull_id) for e in events if str(e.pull_id) in wanted]


def test_a_batch_embeds_once_and_merges_each_kpr_in_order(proposer, namespace, monkeypatch):
    # given three approved KPRs, the second updating what the first creates, and a count of embedding calls
    first = approved(proposer, namespace, create("home_city", "Beijing"), create("pet", "cat"))
    second = approved(proposer, namespace, update("home_city", "Beijing", "Shenzhen"))
    third = approved(proposer, namespace, create("job", "nurse"), subject="user-2")
    calls: list[int] = []
    real = store.embed_texts
    monkeypatch.setattr(
        store, "embed_texts", lambda texts, **kw: calls.append(len(texts)) or real(texts, **kw)
    )
    # when they are merged as one batch
    outcomes = pull_merge_batch(pull_ids=[str(first.pk), str(second.pk), str(third.pk)])
    # then the four values were embedded in one call, and every KPR merged, in the order given
    assert calls == [4]
    assert [o.merge_status for o in outcomes] == [MergeStatus.MERGED] * 3
    assert _merged_in([first, second, third]) == [str(first.pk), str(second.pk), str(third.pk)]
    city = active(namespace, "home_city")
    assert city.value == "Shenzhen" and city.embedding is not None
    assert [v.value for v in versions(namespace, "home_city")] == ["Beijing", "Shenzhen"]
    assert active(namespace, "job", subject="user-2").embedding is not None


def test_a_conflict_in_a_batch_leaves_the_other_kprs_merged(proposer, namespace):
    # given a KPR whose base will not match, between two good ones
    good = approved(proposer, namespace, create("home_city", "Beijing"))
    stale = approved(proposer, namespace, update("home_city", "Shanghai", "Hangzhou"))
    later = approved(proposer, namespace, create("pet", "cat"))
    # when they are merged as one batch
    outcomes = pull_merge_batch(pull_ids=[str(good.pk), str(stale.pk), str(later.pk)])
    # then the conflict wrote nothing and was audited; the others merged
    assert [o.merge_status for o in outcomes] == [
        MergeStatus.MERGED,
        MergeStatus.CONFLICT,
        MergeStatus.MERGED,
    ]
    assert active(namespace, "home_city").value == "Beijing" and active(namespace, "pet").value == "cat"
    assert AuditEvent.objects.filter(pull_id=stale.pk, event_type="pull.merge_conflict").exists()


def test_the_drain_merges_every_waiting_kpr_in_approval_order(proposer, namespace, settings):
    # given four approved KPRs waiting, a batch size of two, and a KPR still pending review
    settings.MEMORYPR_MERGE_BATCH = 2
    waiting = [approved(proposer, namespace, create(f"fact_{i}", f"value {i}")) for i in range(4)]
    pending = submit(proposer, namespace, create("pending", "not reviewed"))
    # when the task of the last one drains the queue
    outcomes = pull_merge_drain(pull_id=str(waiting[-1].pk))
    # then all four merged in two batches, oldest approval first; the pending one was left alone
    assert [o.pull_id for o in outcomes] == [str(p.pk) for p in waiting]
    assert _merged_in(waiting) == [str(p.pk) for p in waiting]
    pending.refresh_from_db()
    assert pending.merge_status == MergeStatus.UNMERGED and versions(namespace, "pending") == []


def test_the_drain_of_a_merged_kpr_is_a_no_op(proposer, namespace):
    # given a KPR merged already
    pull = approved(proposer, namespace, create("home_city", "Beijing"))
    pull_merge_drain(pull_id=str(pull.pk))
    events = AuditEvent.objects.count()
    # when its task runs again
    [outcome] = pull_merge_drain(pull_id=str(pull.pk))
    # then nothing is written and the outcome says why
    assert not outcome.merged and outcome.detail == "already merged"
    assert AuditEvent.objects.count() == events


def test_the_task_of_a_kpr_merged_by_another_batch_does_not_wait_for_the_drain(proposer, namespace):
    # given a KPR merged already, and another session draining the queue (holding the drain lock)
    pull = approved(proposer, namespace, create("home_city", "Beijing"))
    pull_merge_drain(pull_id=str(pull.pk))
    params = connection.get_connection_params()
    with psycopg.connect(**params, autocommit=True) as drainer:
        for lane in range(merge_lanes()):  # every lane's drain is taken
            drainer.execute("SELECT pg_advisory_lock(%s, %s)", [MERGE_DRAIN_LOCK, lane])
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '1s'")  # waiting for the lock would fail the test
        # when its task runs again
        [outcome] = pull_merge_drain(pull_id=str(pull.pk))
    # then it ends at once, saying why
    assert not outcome.merged and outcome.detail == "already merged"


def test_a_task_waiting_for_the_drain_embeds_ahead_what_the_drain_then_reads(
    proposer, namespace, settings, monkeypatch
):
    # given a batch size of one, four approved KPRs, and the Redis cache as the shared store
    from memorypr.facts.services.batch import merge_embed_ahead
    from memorypr.vectors import embedding
    from memorypr.vectors.shared_cache import shared_vectors_clear

    settings.MEMORYPR_MERGE_BATCH = 1
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": settings.TEST_REDIS_URL,
                    "KEY_PREFIX": "embed-ahead-test"}
    }  # fmt: skip
    shared_vectors_clear()
    waiting = [approved(proposer, namespace, create(f"ahead_{i}", f"value ahead {i}")) for i in range(4)]
    # when a waiting task embeds ahead until nothing is left
    rounds = 0
    lane = pull_merge_lane(pull_id=str(waiting[0].pk), lanes=merge_lanes())
    while merge_embed_ahead(lane=lane):
        rounds += 1
    # then it took the KPRs past the two the drain works on, one batch at a time
    assert rounds == 2
    # and the drain finds their vectors: the model runs for the first two KPRs' values only
    embedding.embedding_cache().__init__(embedding.embedding_cache().maxsize)
    calls: list[list[str]] = []
    backend = embedding._backend()
    real = backend.encode
    monkeypatch.setattr(backend, "encode", lambda texts, **kw: calls.append(list(texts)) or real(texts, **kw))
    outcomes = pull_merge_drain(pull_id=str(waiting[-1].pk))
    assert [o.merge_status for o in outcomes] == [MergeStatus.MERGED] * 4
    assert sorted(text for batch in calls for text in batch) == [
        "ahead 0: value ahead 0",
        "ahead 1: value ahead 1",
    ]
    for i in range(4):
        assert active(namespace, f"ahead_{i}").embedding is not None
    shared_vectors_clear()


def test_while_the_drain_is_taken_the_waiting_work_runs_until_the_lock_is_free(proposer, namespace):
    # given another session holding the drain lock
    from memorypr.common.locks import lock_merge_drain

    params = connection.get_connection_params()
    drainer = psycopg.connect(**params, autocommit=True)
    drainer.execute("SELECT pg_advisory_lock(%s, 0)", [MERGE_DRAIN_LOCK])
    calls = []

    def work() -> bool:
        calls.append(1)
        if len(calls) == 3:
            drainer.execute("SELECT pg_advisory_unlock(%s, 0)", [MERGE_DRAIN_LOCK])
        return True

    try:
        # when a task takes the lock with work to do meanwhile
        with lock_merge_drain(lane=0, while_waiting=work):
            # then it worked until the other session let go, and holds the lock now
            assert len(calls) == 3
            assert drainer.execute("SELECT pg_try_advisory_lock(%s, 0)", [MERGE_DRAIN_LOCK]).fetchone() == (
                False,
            )
    finally:
        drainer.close()


def test_two_lanes_drain_side_by_side(proposer, namespace, settings):
    # given two lanes, a KPR in each, and another session draining the first KPR's lane
    settings.MEMORYPR_MERGE_LANES = 2
    subjects = [f"user-{i}" for i in range(40)]
    pulls = [approved(proposer, namespace, create("home_city", "Beijing"), subject=s) for s in subjects]
    lanes = {pull_merge_lane(pull_id=str(p.pk), lanes=2): p for p in pulls}
    assert set(lanes) == {0, 1}  # forty subjects fall into both lanes
    busy, free = lanes[0], lanes[1]
    params = connection.get_connection_params()
    with psycopg.connect(**params, autocommit=True) as drainer:
        drainer.execute("SELECT pg_advisory_lock(%s, 0)", [MERGE_DRAIN_LOCK])
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '2s'")  # waiting for the busy lane would fail the test
        try:
            # when the task of the KPR in the other lane runs
            outcomes = pull_merge_drain(pull_id=str(free.pk))
        finally:
            with connection.cursor() as cursor:
                cursor.execute("RESET lock_timeout")
    # then it merged its lane's KPRs, oldest approval first, and left the busy lane's alone
    merged = [o.pull_id for o in outcomes if o.merged]
    assert str(free.pk) in merged and str(busy.pk) not in merged
    lane_one = [str(p.pk) for p in pulls if pull_merge_lane(pull_id=str(p.pk), lanes=2) is None]
    assert merged == lane_one
    busy.refresh_from_db()
    assert busy.merge_status == MergeStatus.UNMERGED


def test_a_kpr_waits_for_one_of_its_subject_approved_before_it(proposer, namespace):
    # given two approved KPRs of one subject, the later one updating what the earlier one creates
    earlier = approved(proposer, namespace, create("home_city", "Beijing"))
    later = approved(proposer, namespace, update("home_city", "Beijing", "Shenzhen"))
    events = AuditEvent.objects.count()
    # when the later one is merged first (two workers that disagree on the lanes, say)
    outcome = pull_merge(pull_id=str(later.pk))
    # then it waits: nothing written, nothing audited, still approved and unmerged
    assert not outcome.merged and outcome.merge_status == MergeStatus.UNMERGED
    assert outcome.detail == f"waits for KPR {earlier.pk}, approved earlier for the same subject"
    assert versions(namespace, "home_city") == [] and AuditEvent.objects.count() == events
    later.refresh_from_db()
    assert later.merge_status == MergeStatus.UNMERGED
    # and once the earlier one merged, it merges on its turn
    assert pull_merge(pull_id=str(earlier.pk)).merged
    assert pull_merge(pull_id=str(later.pk)).merged
    assert active(namespace, "home_city").value == "Shenzhen"
    assert _merged_in([earlier, later]) == [str(earlier.pk), str(later.pk)]


def test_a_kpr_of_another_subject_does_not_wait(proposer, namespace):
    # given an approved KPR of one subject waiting, and a later one of another subject
    approved(proposer, namespace, create("home_city", "Beijing"))
    other = approved(proposer, namespace, create("home_city", "Lisbon"), subject="user-2")
    # when the later one is merged first
    outcome = pull_merge(pull_id=str(other.pk))
    # then it merges: order holds within a subject only
    assert outcome.merged and active(namespace, "home_city", subject="user-2").value == "Lisbon"


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("no_merge_handoff")
def test_a_batch_waits_for_the_disk_once_after_its_last_merge(proposer, namespace):
    # given three approved KPRs of three subjects
    pulls = [approved(proposer, namespace, create("pet", "cat"), subject=f"user-{n}") for n in range(3)]
    # when they are merged as one batch, each in its own transaction
    with CaptureQueriesContext(connection) as queries:
        outcomes = pull_merge_batch(pull_ids=[str(p.pk) for p in pulls])
    # then every KPR merged, and the flush was waited for once, after the last merge's commit
    assert [(o.merged, o.merge_status) for o in outcomes] == [(True, MergeStatus.MERGED)] * 3
    statements = [query["sql"] for query in queries]
    flushed = [i for i, sql in enumerate(statements) if "pg_logical_emit_message" in sql]
    assert flushed == [len(statements) - 1]
    assert _merged_in(pulls) == [str(p.pk) for p in pulls]
