from __future__ import annotations

from datetime import timedelta

import pytest

from memorypr.facts.models import FactStatus
from memorypr.facts.selectors import (
    fact_history,
    fact_latest_versions,
    fact_list,
    fact_status_at,
    fact_versions_by_id,
    fact_versions_replaced,
    fact_versions_with_replaced,
)
from tests.facts.kprs import create, delete, merged, update

pytestmark = pytest.mark.django_db

TICK = timedelta(microseconds=1)


def values(namespace, **kwargs):
    return {f.key: f.value for f in fact_list(namespace_id=namespace.pk, subject="user-1", **kwargs)}


def test_as_of_answers_what_was_true_then(proposer, namespace):
    # given Beijing, then Shenzhen (with a derived policy going stale), then deleted
    first = merged(
        proposer,
        namespace,
        create("home_city", "Beijing"),
        create("commute", "takes the Beijing subway", category="derived", derived_from=["home_city"]),
    )
    second = merged(proposer, namespace, update("home_city", "Beijing", "Shenzhen"))
    third = merged(proposer, namespace, delete("home_city", "Shenzhen"))
    # then each moment has its own truth, to the microsecond
    assert values(namespace, as_of=first.merged_at - TICK) == {}
    assert values(namespace, as_of=first.merged_at) == {
        "home_city": "Beijing",
        "commute": "takes the Beijing subway",
    }
    assert values(namespace, as_of=second.merged_at - TICK) == {
        "home_city": "Beijing",
        "commute": "takes the Beijing subway",
    }
    assert values(namespace, as_of=second.merged_at) == {"home_city": "Shenzhen"}
    assert values(namespace, as_of=third.merged_at) == {}
    assert values(namespace) == {}


def test_as_of_respects_valid_time(proposer, namespace):
    # given a fact true for one week only
    pull = merged(
        proposer,
        namespace,
        create("works_from", "home", valid_from=None, valid_to=None),
    )
    at = pull.merged_at
    merged(
        proposer,
        namespace,
        create("travel", "in Hangzhou", valid_from=at + timedelta(days=1), valid_to=at + timedelta(days=8)),
    )
    # then
    assert "travel" not in values(namespace, as_of=at + timedelta(hours=1))
    assert values(namespace, as_of=at + timedelta(days=2))["travel"] == "in Hangzhou"
    assert "travel" not in values(namespace, as_of=at + timedelta(days=9))


def test_status_filters(proposer, namespace):
    merged(proposer, namespace, create("home_city", "Beijing"), create("pet", "cat", category="domain_fact"))
    merged(proposer, namespace, update("home_city", "Beijing", "Shenzhen"))
    assert values(namespace) == {"home_city": "Shenzhen", "pet": "cat"}
    assert values(namespace, status=FactStatus.SUPERSEDED) == {"home_city": "Beijing"}
    assert len(fact_list(namespace_id=namespace.pk, status=None)) == 3
    assert values(namespace, category="domain_fact") == {"pet": "cat"}


def test_history_with_status_at_a_moment(proposer, namespace):
    # given
    first = merged(proposer, namespace, create("home_city", "Beijing"))
    second = merged(proposer, namespace, update("home_city", "Beijing", "Shenzhen"))
    # when
    now = fact_history(namespace_id=namespace.pk, subject="user-1", key="home_city")
    then = fact_history(
        namespace_id=namespace.pk, subject="user-1", key="home_city", as_of=second.merged_at - TICK
    )
    # then
    assert [(f.version, fact_status_at(fact=f, at=None)) for f in now] == [(1, "superseded"), (2, "active")]
    assert [(f.version, fact_status_at(fact=f, at=second.merged_at - TICK)) for f in then] == [(1, "active")]
    assert [e.edge_type for e in now[1].out_edges.all()] == ["UPDATES"] and not then[0].in_edges.all()
    assert now[0].pull_id == first.pk and now[0].retired_by_pull_id == second.pk


def test_versions_with_replaced_reads_each_version_and_the_newest_it_replaced(proposer, namespace):
    # given a city updated twice, and a fact that never changed
    merged(proposer, namespace, create("home_city", "Beijing"), create("pet", "cat"))
    merged(proposer, namespace, update("home_city", "Beijing", "Hangzhou"))
    merged(proposer, namespace, update("home_city", "Hangzhou", "Shenzhen"))
    current = {f.key: f for f in fact_list(namespace_id=namespace.pk, subject="user-1")}
    ids = [current["home_city"].pk, current["pet"].pk]
    # when
    found, replaced = fact_versions_with_replaced(ids=ids)
    # then both versions are read, and only the city replaced one: the version just before it
    assert {pk: f.value for pk, f in found.items()} == {ids[0]: "Shenzhen", ids[1]: "cat"}
    assert {pk: (f.value, f.version) for pk, f in replaced.items()} == {ids[0]: ("Hangzhou", 2)}
    # and it reads what the two separate reads read
    assert found.keys() == fact_versions_by_id(ids=ids).keys()
    assert {k: v.pk for k, v in replaced.items()} == {
        k: v.pk for k, v in fact_versions_replaced(ids=ids).items()
    }


def test_latest_versions_count_every_status_of_the_keys_asked_for(proposer, namespace):
    # given a fact updated once, a fact deleted, a fact of another subject and one not asked for
    merged(proposer, namespace, create("pet", "cat"), create("job", "nurse"), create("city", "Oslo"))
    merged(proposer, namespace, update("pet", "cat", "dog"), delete("job", "nurse"))
    merged(proposer, namespace, create("pet", "fish"), subject="user-2")
    # when the latest version numbers of some keys are read
    latest = fact_latest_versions(namespace_id=namespace.pk, subject="user-1", keys=["pet", "job", "home"])
    # then each (category, key) asked for has its highest version, retired versions included
    assert latest == {("user_profile", "pet"): 2, ("user_profile", "job"): 1}
