from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from memorypr.agents.models import Agent, Namespace
from memorypr.agents.services import reviewer_create
from memorypr.facts.models import FactVersion
from reviewer.dashboard.memory_selectors import (
    memory_fact_get,
    memory_fact_graph,
    memory_fact_timeline,
    memory_facts,
    memory_namespace_get,
    memory_subjects,
)
from tests.dashboard.memory_story import coffee_story
from tests.factories import agent_with_token

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(proposer: Agent) -> Namespace:
    return Namespace.objects.get(name="demo")


@pytest.fixture
def proposer(db: None) -> Agent:
    agent, _ = agent_with_token(name="proposer", namespaces=["demo", "elsewhere"])
    return agent


def test_the_facts_active_now_and_as_they_stood_before_the_update(proposer, demo):
    # given a fact, a policy derived from it, and an update of the fact that made the policy stale
    story = coffee_story(proposer, demo)
    # when reading the subject's active facts now
    now = {r.fact.key: (r.fact.value, r.status) for r in memory_facts(namespace=demo, subject="user-1")}
    # then the new value is served and the stale policy is not
    assert now == {"home_city": ("Beijing", "active"), "likes_coffee": ("drinks tea now", "active")}
    # when reading them as of a moment between the two merges
    then = memory_facts(namespace=demo, subject="user-1", as_of=story.between)
    # then the old value and the policy were active, each with only the versions written by then
    assert {r.fact.key: r.fact.value for r in then} == {
        "home_city": "Beijing",
        "likes_coffee": "user likes coffee",
        "offer_coffee_when_tired": "offer coffee when tired",
    }
    assert {r.status for r in then} == {"active"}
    assert all(len(r.timeline) == 1 for r in then)


def test_status_and_category_filters(proposer, demo):
    story = coffee_story(proposer, demo)
    stale = memory_facts(namespace=demo, subject="user-1", status="stale")
    assert [(r.fact.key, r.status) for r in stale] == [("offer_coffee_when_tired", "stale")]
    superseded = memory_facts(namespace=demo, subject="user-1", status="superseded")
    # each fact beside its key's versions, and the KPR behind each
    assert [[(v.version, v.pull_id) for v in r.timeline] for r in superseded] == [
        [(1, story.first.pk), (2, story.second.pk)]
    ]
    derived = memory_facts(namespace=demo, subject="user-1", category="derived", status="all")
    assert [r.fact.key for r in derived] == ["offer_coffee_when_tired"]
    # before the update nothing was stale yet
    assert memory_facts(namespace=demo, subject="user-1", status="stale", as_of=story.between) == []


def test_the_timeline_says_which_kpr_wrote_and_retired_each_version(proposer, demo):
    story = coffee_story(proposer, demo)
    old = FactVersion.objects.get(namespace=demo, key="likes_coffee", version=1)
    rows = memory_fact_timeline(fact=old)
    assert [(r.version.version, r.status, r.version.pull_id, r.retired_by_pull_id) for r in rows] == [
        (1, "superseded", story.first.pk, story.second.pk),
        (2, "active", story.second.pk, None),
    ]
    # as of before the update, v1 was active and v2 did not exist
    then = memory_fact_timeline(fact=old, as_of=story.between)
    assert [(r.version.version, r.status, r.retired_by_pull_id) for r in then] == [(1, "active", None)]


def test_the_graph_shows_what_went_stale_with_the_fact(proposer, demo):
    # given the policy derived from likes_coffee v1, stale since v2 replaced it
    coffee_story(proposer, demo)
    new = FactVersion.objects.get(namespace=demo, key="likes_coffee", version=2)
    # when drawing the edges around the fact
    graph = memory_fact_graph(fact=new)
    # then its two versions share a row, the stale policy sits below, and the edges are drawn
    rows = {p.node.label: (p.y, p.node.status, p.node.focus) for p in graph.nodes}
    assert rows["likes_coffee v1"][0] == rows["likes_coffee v2"][0]
    assert rows["offer_coffee_when_tired v1"][0] > rows["likes_coffee v1"][0]
    assert rows["offer_coffee_when_tired v1"][1] == "stale"
    assert rows["likes_coffee v2"][2] and not rows["likes_coffee v1"][2]
    edges = {(e.source.label, e.edge_type, e.target.label) for e in graph.edges}
    assert edges == {
        ("likes_coffee v2", "UPDATES", "likes_coffee v1"),
        ("offer_coffee_when_tired v1", "DERIVED_FROM", "likes_coffee v1"),
    }
    assert all(e.path.startswith("M ") for e in graph.edges)


def test_the_graph_as_of_a_moment_draws_only_what_existed_then(proposer, demo):
    story = coffee_story(proposer, demo)
    old = FactVersion.objects.get(namespace=demo, key="likes_coffee", version=1)
    graph = memory_fact_graph(fact=old, as_of=story.between)
    assert {(p.node.label, p.node.status) for p in graph.nodes} == {
        ("likes_coffee v1", "active"),
        ("offer_coffee_when_tired v1", "active"),
    }
    assert [(e.source.label, e.edge_type) for e in graph.edges] == [
        ("offer_coffee_when_tired v1", "DERIVED_FROM")
    ]


def test_subjects_and_namespaces_are_the_reviewers_own(proposer, demo):
    # given memory in two namespaces, and a reviewer of one
    coffee_story(proposer, demo, subject="alice")
    coffee_story(proposer, Namespace.objects.get(name="elsewhere"), subject="bob")
    reviewer_create(username="ann", password="ann-password-1", namespaces=["demo"])
    ann = get_user_model().objects.get(username="ann")
    # then ann sees demo's subject only, and cannot reach the other namespace or its facts
    rows = memory_subjects(user=ann)
    assert [(r.namespace, r.subject, r.active_facts, r.versions) for r in rows] == [("demo", "alice", 2, 4)]
    assert memory_subjects(user=ann, query="ALI")[0].subject == "alice"
    assert memory_subjects(user=ann, query="bob") == []
    assert memory_namespace_get(user=ann, name="elsewhere") is None
    bobs = FactVersion.objects.filter(subject="bob").first()
    assert bobs is not None
    assert memory_fact_get(namespace=demo, fact_id=bobs.pk) is None
