from __future__ import annotations

import pytest

from memorypr.agents.models import Namespace
from memorypr.facts.models import EdgeType, FactEdge, FactStatus
from memorypr.retrieval.verification import draft_verify, sentences_split
from tests.retrieval.factories import fact_put, fact_replace

pytestmark = pytest.mark.django_db
URL = "/api/v1/verify"


@pytest.fixture
def moved(agent_client):
    demo = Namespace.objects.get(name="demo")
    beijing = fact_put(namespace=demo, key="home_city", value="Beijing")
    shenzhen = fact_replace(beijing, value="Shenzhen")
    return demo, beijing, shenzhen


def test_draft_naming_the_old_city_is_flagged_with_its_replacement(agent_client, moved):
    # given
    _, beijing, shenzhen = moved
    draft = "Good morning! Since you live in Beijing, the Forbidden City is close by. Enjoy your day."
    # when
    response = agent_client.post(URL, {"subject": "user-1", "text": draft}, format="json")
    # then
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["ok"] is False
    assert body["sentencesChecked"] == 3
    [flag] = body["flags"]
    assert flag["sentence"] == "Since you live in Beijing, the Forbidden City is close by."
    assert draft[flag["start"] : flag["end"]] == flag["sentence"]
    assert flag["reason"] == "value"
    assert flag["matchedValue"] == "Beijing"
    assert flag["fact"]["factId"] == beijing.pk
    assert flag["fact"]["status"] == "superseded"
    assert flag["replacement"]["factId"] == shenzhen.pk
    assert flag["replacement"]["value"] == "Shenzhen"


@pytest.mark.parametrize(
    "draft",
    [
        "You live in Shenzhen, so the sea is near.",
        "Since you moved from Beijing to Shenzhen, you may miss the northern winters.",
        "Nice weather today.",
    ],
)
def test_drafts_resting_on_current_facts_pass(agent_client, moved, draft):
    # when
    body = agent_client.post(URL, {"subject": "user-1", "text": draft}, format="json").json()
    # then
    assert body["ok"] is True, body["flags"]


def test_value_still_true_elsewhere_is_not_flagged(moved):
    # given: Beijing is no longer home, but still the user's workplace
    demo, _, _ = moved
    fact_put(namespace=demo, key="work_city", value="Beijing")
    # when
    checked = draft_verify(namespace=demo, subject="user-1", text="You work in Beijing.")
    # then
    assert checked.ok


def test_draft_following_a_stale_policy_is_flagged_by_meaning(agent_client):
    # given: "offer coffee when tired" rested on "likes coffee", which changed
    demo = Namespace.objects.get(name="demo")
    likes = fact_put(namespace=demo, key="likes_coffee", value="Likes coffee")
    policy = fact_put(
        namespace=demo,
        category="derived",
        key="offer_coffee_when_tired",
        value="Offer coffee when the user is tired",
        status=FactStatus.STALE,
    )
    FactEdge.objects.create(source=policy, target=likes, edge_type=EdgeType.DERIVED_FROM)
    fact_replace(likes, value="No longer drinks coffee")
    # when
    checked = draft_verify(
        namespace=demo, subject="user-1", text="You look tired; shall I offer you a coffee?"
    )
    # then
    assert [f.fact.pk for f in checked.flags] == [policy.pk]
    flag = checked.flags[0]
    assert flag.reason == "meaning"
    assert flag.replacement is None
    assert flag.similarity is not None and flag.best_active_similarity is not None
    assert flag.similarity > flag.best_active_similarity


def test_sentences_split_keeps_offsets_and_handles_chinese():
    text = "你住在北京。那里冬天很冷！ OK? a"
    parts = sentences_split(text)
    assert [s for _, _, s in parts] == ["你住在北京。", "那里冬天很冷！", "OK?"]
    assert all(text[start:end] == s for start, end, s in parts)


def test_chinese_draft_with_the_old_city_is_flagged(agent_client):
    # given
    demo = Namespace.objects.get(name="demo")
    old = fact_put(namespace=demo, key="home_city", value="北京")
    fact_replace(old, value="深圳")
    # when
    checked = draft_verify(namespace=demo, subject="user-1", text="你住在北京，冬天记得保暖。")
    # then
    assert [f.fact.pk for f in checked.flags] == [old.pk]
    assert checked.flags[0].replacement is not None and checked.flags[0].replacement.value == "深圳"


def test_verify_is_tenant_scoped(agent_client, client_for, moved):
    # given
    outsider = client_for(name="outsider", namespaces=["elsewhere"])
    # when
    body = outsider.post(URL, {"subject": "user-1", "text": "You live in Beijing."}, format="json").json()
    # then: the other tenant's history is not consulted
    assert body["ok"] is True
    assert agent_client.post(URL, {"subject": "user-1"}, format="json").status_code == 400
