"""The memory browser's pages: what a reviewer sees, and what another namespace's reviewer does not."""

from __future__ import annotations

import pytest

from memorypr.agents.models import Agent, Namespace
from memorypr.agents.services import reviewer_create
from memorypr.facts.models import FactVersion
from tests.dashboard.memory_story import coffee_story
from tests.factories import agent_with_token

pytestmark = pytest.mark.django_db


@pytest.fixture
def proposer(db: None) -> Agent:
    agent, _ = agent_with_token(name="proposer", namespaces=["demo"])
    return agent


@pytest.fixture
def story(proposer):  # type: ignore[no-untyped-def]
    return coffee_story(proposer, Namespace.objects.get(name="demo"))


@pytest.fixture
def outsider_client(client):  # type: ignore[no-untyped-def]
    reviewer_create(username="olga", password="olga-password-1", namespaces=["elsewhere"])
    client.login(username="olga", password="olga-password-1")
    return client


def test_pages_need_a_login(client, story):
    fact = FactVersion.objects.first()
    for url in ("/review/memory/", "/review/memory/demo/user-1/", f"/review/memory/demo/facts/{fact.pk}/"):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/review/login/")


def test_the_subject_picker_lists_the_reviewers_subjects(reviewer_client, story):
    response = reviewer_client.get("/review/memory/", {"q": "user"})
    assert response.status_code == 200
    assert [(r.namespace, r.subject) for r in response.context["subjects"]] == [("demo", "user-1")]
    assert 'href="/review/memory/demo/user-1/"' in response.content.decode()


def test_a_subjects_facts_now_and_as_of_a_moment(reviewer_client, story):
    # when the reviewer opens the subject
    now = reviewer_client.get("/review/memory/demo/user-1/")
    # then the active facts show, each with its versions and the KPR behind each
    html = now.content.decode()
    assert now.status_code == 200
    assert [r.fact.key for r in now.context["rows"]] == ["home_city", "likes_coffee"]
    assert "drinks tea now" in html and "offer coffee when tired" not in html
    assert f'href="/review/pulls/{story.second.pk}/"' in html
    # when asking for the moment before the update (the datetime-local input's format)
    then = reviewer_client.get(
        "/review/memory/demo/user-1/", {"asOf": story.between.strftime("%Y-%m-%dT%H:%M:%S.%f")}
    )
    # then the old value and the policy derived from it were active
    assert then.status_code == 200
    assert {r.fact.key: r.fact.value for r in then.context["rows"]}["likes_coffee"] == "user likes coffee"
    assert "offer coffee when tired" in then.content.decode()


def test_filters_by_status_and_category(reviewer_client, story):
    response = reviewer_client.get("/review/memory/demo/user-1/", {"status": "stale", "category": "derived"})
    assert [(r.fact.key, r.status) for r in response.context["rows"]] == [
        ("offer_coffee_when_tired", "stale")
    ]


@pytest.mark.parametrize(
    ("params", "field"),
    [({"asOf": "yesterday"}, "asOf"), ({"status": "happy"}, "status"), ({"category": "nope"}, "category")],
)
def test_a_bad_filter_is_a_400_that_names_it(reviewer_client, story, params, field):
    response = reviewer_client.get("/review/memory/demo/user-1/", params)
    assert response.status_code == 400
    assert f'data-field="{field}"' in response.content.decode()


def test_a_fact_page_shows_its_versions_and_the_graph(reviewer_client, story):
    old = FactVersion.objects.get(key="likes_coffee", version=1)
    response = reviewer_client.get(f"/review/memory/demo/facts/{old.pk}/")
    html = response.content.decode()
    assert response.status_code == 200
    assert [(r.version.version, r.status) for r in response.context["timeline"]] == [
        (1, "superseded"),
        (2, "active"),
    ]
    assert '<svg id="fact-graph"' in html
    assert html.count('class="edge e-DERIVED_FROM"') == 1 and html.count('class="edge e-UPDATES"') == 1
    assert 'class="node s-stale"' in html
    assert "<script" not in html.split("</head>")[1].split("</main>")[0]  # no inline script in the page


def test_another_namespaces_reviewer_sees_nothing_of_it(outsider_client, story):
    fact = FactVersion.objects.first()
    assert outsider_client.get("/review/memory/").context["subjects"] == []
    assert outsider_client.get("/review/memory/demo/user-1/").status_code == 404
    response = outsider_client.get(f"/review/memory/demo/facts/{fact.pk}/")
    assert response.status_code == 404
    assert b"likes_coffee" not in response.content
    # nor through its own namespace's address
    assert outsider_client.get(f"/review/memory/elsewhere/facts/{fact.pk}/").status_code == 404
