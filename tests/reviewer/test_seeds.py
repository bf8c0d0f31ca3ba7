"""The seed's cases, submitted through the proposer API and reviewed when the submission commits."""

from __future__ import annotations

import copy

import pytest

from tests.pulls.test_api import SEED_KPR
from tests.reviewer.builders import fact


def submit_and_review(client, body, capture):  # type: ignore[no-untyped-def]
    with capture(execute=True):
        response = client.post("/api/v1/pulls", body, format="json")
    assert response.status_code == 201, response.content
    return client.get(f"/api/v1/pulls/{response.json()['id']}").json()


def seed(**op_overrides: object) -> dict[str, object]:
    body = copy.deepcopy(SEED_KPR)
    body["operations"][0].update(op_overrides)  # type: ignore[index]
    return body


@pytest.mark.django_db
@pytest.mark.parametrize("quote", ["上个月我举家搬迁到了深圳", "I moved to Shenzhen last month"])
def test_moving_to_shenzhen_is_approved(agent_client, merges, django_capture_on_commit_callbacks, quote):
    fact(key="home_city", value="Beijing", subject="default")
    body = seed(evidence={"rawMessageQuote": quote, "timestamp": 1732096800000})
    detail = submit_and_review(agent_client, body, django_capture_on_commit_callbacks)
    assert detail["reviewStatus"] == "APPROVED"
    assert merges == [detail["id"]]


@pytest.mark.django_db
@pytest.mark.parametrize("quote", ["I'm going to work on Mars tomorrow", "我明天要去火星上班"])
def test_working_on_mars_is_not_approved(agent_client, merges, django_capture_on_commit_callbacks, quote):
    body = seed(
        action="CREATE",
        key="work_location",
        oldValue=None,
        newValue="Mars",
        evidence={"rawMessageQuote": quote, "timestamp": 1732096800000},
    )
    detail = submit_and_review(agent_client, body, django_capture_on_commit_callbacks)
    assert detail["reviewStatus"] == "NEEDS_HUMAN_REVIEW"
    assert "future_plan" in detail["reviewerFeedback"]
    assert merges == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("key", "old", "new", "quote"),
    [
        ("allergy", "peanut", "shrimp", "Actually it's shrimp I'm allergic to, not peanuts."),
        ("过敏", "花生", "虾", "其实我是对虾过敏，不是花生"),
    ],
)
def test_allergy_update_needs_a_person(
    agent_client, merges, django_capture_on_commit_callbacks, key, old, new, quote
):
    fact(key=key, value=old, subject="default", importance=0.95)
    body = seed(
        key=key, oldValue=old, newValue=new, evidence={"rawMessageQuote": quote, "timestamp": 1732096800000}
    )
    detail = submit_and_review(agent_client, body, django_capture_on_commit_callbacks)
    assert detail["reviewStatus"] == "NEEDS_HUMAN_REVIEW"
    assert "protected key (allergy)" in detail["reviewerFeedback"]
    assert merges == []
