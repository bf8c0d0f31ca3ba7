from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memorypr.agents.services import namespace_get_or_create
from memorypr.evolution.models import JobCursor
from memorypr.evolution.services.consolidation import consolidation_run, same_attribute
from memorypr.pulls.models import KnowledgePullRequest
from memorypr.vectors import nearest
from tests.retrieval.factories import fact_put

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo():
    return namespace_get_or_create(name="demo")


def _system_pulls():
    return KnowledgePullRequest.objects.filter(agent__name="system").prefetch_related("operations")


def _ops(pull):
    return [(op.action, op.key, op.old_value, op.new_value, op.confidence) for op in pull.operations.all()]


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("home_city", "current_city", True),
        ("favorite_drink", "favourite_drink", True),
        ("dog_name", "name_of_dog", True),
        ("home_city", "favorite_drink", False),
        ("birthday", "blood_type", False),
    ],
)
def test_same_attribute(a, b, same):
    assert same_attribute(a, b) is same


def test_duplicates_merge_into_one_fact_once(demo):
    # given: the same preference stored under two keys
    keep = fact_put(namespace=demo, key="favorite_drink", value="coffee", confidence=0.9)
    drop = fact_put(namespace=demo, key="favorite_beverage", value="coffee", confidence=0.7)
    fact_put(namespace=demo, key="home_city", value="Shenzhen")
    fact_put(namespace=demo, subject="user-2", key="favorite_drink", value="coffee")
    # when
    report = consolidation_run()
    # then: the weaker one is deleted; the survivor already carries the best confidence
    assert report.proposed == 1
    [pull] = _system_pulls()
    assert pull.proposed_by == "system:consolidation"
    assert pull.idempotency_key.startswith("evolution:consolidate:")
    assert _ops(pull) == [("DELETE", drop.key, "coffee", None, 0.9)]
    assert f"kept as {keep.key}" in pull.operations.get().evidence["rawMessageQuote"]
    # and when it runs again, even from the start, it proposes nothing new
    assert consolidation_run().proposed == 0
    JobCursor.objects.filter(job="consolidation").update(position=0)
    rerun = consolidation_run()
    assert rerun.proposed == 0 and rerun.already_proposed == 1
    assert _system_pulls().count() == 1


def test_merge_keeps_the_fuller_value_and_the_best_confidence(demo, settings):
    # given
    settings.MEMORYPR_CONSOLIDATION_SIMILARITY = 0.8
    keep = fact_put(namespace=demo, key="favorite_drink", value="coffee", confidence=0.9, importance=0.4)
    drop = fact_put(
        namespace=demo, key="favourite_drink", value="black coffee", confidence=0.7, importance=0.6
    )
    # when
    consolidation_run()
    # then
    [pull] = _system_pulls()
    ops = list(pull.operations.all())
    assert [(o.action, o.key) for o in ops] == [("UPDATE", keep.key), ("DELETE", drop.key)]
    assert ops[0].old_value == "coffee" and ops[0].new_value == "black coffee"
    assert ops[0].confidence == 0.9 and ops[0].importance == 0.6


def test_conflicting_attribute_lowers_confidence_instead_of_merging(demo, settings):
    # given: two cities for one person, similar enough to pair at this threshold
    settings.MEMORYPR_CONSOLIDATION_SIMILARITY = 0.7
    beijing = fact_put(namespace=demo, key="home_city", value="Beijing", confidence=0.9)
    shanghai = fact_put(namespace=demo, key="current_city", value="Shanghai", confidence=0.8)
    # when
    report = consolidation_run()
    # then: both kept, both less certain, expressed as value-preserving UPDATEs
    assert report.proposed == 1
    [pull] = _system_pulls()
    assert pull.idempotency_key.startswith("evolution:conflict:")
    assert sorted(_ops(pull)) == [
        ("UPDATE", shanghai.key, "Shanghai", "Shanghai", 0.6),
        ("UPDATE", beijing.key, "Beijing", "Beijing", 0.7),
    ]
    assert "different values" in pull.operations.first().evidence["rawMessageQuote"]
    JobCursor.objects.filter(job="consolidation").update(position=0)
    assert consolidation_run().proposed == 0


def test_scan_is_bounded_and_resumes_from_the_cursor(demo):
    # given
    for i in range(5):
        fact_put(namespace=demo, key=f"topic_{i}", value=f"unrelated subject number {i} about {'xyz' * i}")
    # when
    first = consolidation_run(scan=3)
    second = consolidation_run(scan=3)
    third = consolidation_run(scan=3)
    # then
    assert (first.examined, second.examined, third.examined) == (3, 2, 0)


def test_in_a_subject_searched_through_its_graph_duplicates_are_found_by_a_walk(demo, settings):
    # given a duplicate among other facts of its category, in a subject searched through the
    # HNSW graph (above the exact-scan ceiling), not by a scan of all its rows
    others = {
        "home_city": "Shenzhen", "pet": "a grey cat", "employer": "a shipping firm", "sport": "tennis",
        "allergy": "peanuts", "birthday": "March 3", "car": "a red hatchback", "language": "Portuguese",
    }  # fmt: skip
    for key, value in others.items():
        fact_put(namespace=demo, key=key, value=value)
    fact_put(namespace=demo, key="favorite_drink", value="coffee", confidence=0.9)
    drop = fact_put(namespace=demo, key="favorite_beverage", value="coffee", confidence=0.7)
    settings.MEMORYPR_EXACT_SEARCH_MAX_ROWS = 0
    nearest._COUNTS.clear()
    # when consolidation runs
    with CaptureQueriesContext(connection) as queries:
        report = consolidation_run()
    # then the pair is proposed once, found by walks of the graph (fact_nearest()) and no exact scan
    assert report.proposed == 1
    [pull] = _system_pulls()
    assert [(op.action, op.key) for op in pull.operations.all()] == [("DELETE", drop.key)]
    searches = [q["sql"] for q in queries.captured_queries if "v_near" in q["sql"]]
    assert searches and all("fact_nearest(" in sql for sql in searches)


def test_a_fact_whose_valid_time_has_ended_is_no_duplicate_of_a_fact_alive_now(demo):
    # given the same drink twice, once in a fact whose valid time ended yesterday (not yet expired)
    fact_put(
        namespace=demo, key="favorite_beverage", value="coffee", confidence=0.7,
        valid_from=timezone.now() - timedelta(days=30), valid_to=timezone.now() - timedelta(days=1),
    )  # fmt: skip
    fact_put(namespace=demo, key="favorite_drink", value="coffee", confidence=0.9)
    # when consolidation runs
    report = consolidation_run()
    # then nothing is merged: what held in the past is history, not a duplicate (expiry retires it)
    assert report.proposed == 0
    assert not _system_pulls().exists()
