from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from memorypr.agents.services import namespace_get_or_create
from memorypr.facts.models import FactVersion
from memorypr.retrieval.services import fact_accesses_record
from tests.retrieval.factories import fact_put

# Committed transactions: a dead row version is reclaimed only once no open transaction sees it.
pytestmark = pytest.mark.django_db(transaction=True)


def _pages(ids: list[int]) -> dict[int, int]:
    """The heap page of each fact's current row version."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, (ctid::text::point)[0]::int FROM facts_factversion WHERE id = ANY(%s)", [ids]
        )
        return dict(cursor.fetchall())


def test_recording_accesses_updates_each_fact_in_place_on_its_page():
    # given facts written one after another (each row about 2 kB, nearly all of it the vector)
    demo = namespace_get_or_create(name="demo")
    ids = [fact_put(namespace=demo, key=f"fact_{i}", value=f"value number {i}").pk for i in range(12)]
    before = _pages(ids)
    one_per_page = sorted({page: fact_id for fact_id, page in before.items()}.values())
    assert len(one_per_page) > 1
    # when a retrieval serves one fact of each page, and then each fact is served on its own, twice
    assert fact_accesses_record(fact_ids=one_per_page) == len(one_per_page)
    for _ in range(2):
        for fact_id in ids:
            assert fact_accesses_record(fact_ids=[fact_id]) == 1
    # then every new row version stayed on its page: in-place (HOT) updates, no index entries
    assert _pages(ids) == before
    counts = dict(FactVersion.objects.filter(pk__in=ids).values_list("pk", "access_count"))
    assert counts == {fact_id: 3 if fact_id in one_per_page else 2 for fact_id in ids}


def test_access_counts_commit_without_waiting_for_the_disk_and_the_connection_keeps_its_setting():
    # given a fact, and a connection that commits durably
    demo = namespace_get_or_create(name="demo")
    fact = fact_put(namespace=demo, key="favorite_tea", value="oolong")
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"
    # when an access is recorded
    with CaptureQueriesContext(connection) as queries:
        assert fact_accesses_record(fact_ids=[fact.pk]) == 1
    # then its transaction alone did not wait for the flush: a counter, not memory content;
    # one statement, its own transaction
    (statement,) = [query["sql"] for query in queries]
    assert "set_config('synchronous_commit', 'off', true)" in statement
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"
    assert FactVersion.objects.get(pk=fact.pk).access_count == 1


def test_inside_a_callers_transaction_the_callers_commit_decides_and_a_failure_spoils_nothing():
    # given a fact, and a caller's open transaction
    demo = namespace_get_or_create(name="demo")
    fact = fact_put(namespace=demo, key="favorite_tea", value="oolong")
    with transaction.atomic():
        # when an access is recorded, and then one whose statement fails
        assert fact_accesses_record(fact_ids=[fact.pk]) == 1
        assert fact_accesses_record(fact_ids=[fact.pk], at="not a time") == 0  # type: ignore[arg-type]
        # then the transaction still works and still commits durably
        with connection.cursor() as cursor:
            cursor.execute("SHOW synchronous_commit")
            assert cursor.fetchone()[0] == "on"
        FactVersion.objects.filter(pk=fact.pk).update(importance=0.9)
    fact.refresh_from_db()
    assert (fact.access_count, fact.importance) == (1, 0.9)
