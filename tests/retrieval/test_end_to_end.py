"""What users do: submit KPRs, have them approved, merged, then retrieve, verify and evolve."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone

from memorypr.agents.models import Agent, Namespace
from memorypr.audit.models import AuditEvent
from memorypr.common.locks import lock_pull
from memorypr.evolution.models import ForgettingMark
from memorypr.evolution.services.consolidation import consolidation_run
from memorypr.evolution.services.expiry import expiry_run
from memorypr.evolution.services.forgetting import forgetting_run
from memorypr.facts.models import FactStatus, FactVersion
from memorypr.facts.services import pull_merge
from memorypr.pulls.models import KnowledgePullRequest
from memorypr.pulls.services import pull_record_review, pull_submit
from memorypr.pulls.specs import OperationSpec, PullSpec

pytestmark = pytest.mark.django_db
RETRIEVE = "/api/v1/retrieve"


def _op(action: str, key: str, new: Any = None, old: Any = None, **extra: Any) -> OperationSpec:
    extra.setdefault("category", "user_profile")
    return OperationSpec(
        action=action,
        key=key,
        old_value=old,
        new_value=new,
        confidence=extra.pop("confidence", 0.92),
        evidence={"rawMessageQuote": f"about {key}", "timestamp": 1732096800000},
        **extra,
    )


def _approve_and_merge(pull: KnowledgePullRequest) -> KnowledgePullRequest:
    with transaction.atomic():
        locked = lock_pull(pull_id=str(pull.pk))
        pull_record_review(
            pull=locked,
            reviewer_kind="system",
            reviewer="test",
            verdict="APPROVE",
            status_after="APPROVED",
            reasons="approved",
        )
    pull_merge(pull_id=str(pull.pk))
    pull.refresh_from_db()
    assert pull.merge_status == "MERGED", pull.merge_feedback
    return pull


def _merged(agent: Agent, namespace: Namespace, *ops: OperationSpec) -> KnowledgePullRequest:
    pull, _ = pull_submit(
        agent=agent,
        namespace=namespace,
        spec=PullSpec(subject="user-1", operations=list(ops), proposed_by="proposer"),
    )
    return _approve_and_merge(pull)


@pytest.fixture
def world(agent_and_token, agent_client):
    agent, _ = agent_and_token
    return agent, Namespace.objects.get(name="demo"), agent_client


def _retrieve(client, query: str, **extra: Any) -> dict[str, Any]:
    response = client.post(RETRIEVE, {"subject": "user-1", "query": query, **extra}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_merged_update_serves_shenzhen_never_beijing_and_as_of_still_knows_beijing(world):
    # given
    agent, demo, client = world
    _merged(agent, demo, _op("CREATE", "home_city", "Beijing"))
    _merged(agent, demo, _op("CREATE", "favorite_drink", "green tea"))
    between = timezone.now()
    _merged(agent, demo, _op("UPDATE", "home_city", "Shenzhen", old="Beijing"))
    # when
    now = _retrieve(client, "where does the user live")
    past = _retrieve(client, "where does the user live", asOf=between.isoformat())
    # then
    assert now["results"][0]["value"] == "Shenzhen"
    assert all(r["value"] != "Beijing" for r in now["results"])
    assert now["results"][0]["updates"]["value"] == "Beijing"
    assert "this updates an older memory: home city: Beijing" in now["context"]
    assert [r["value"] for r in past["results"] if r["key"] == "home_city"] == ["Beijing"]


def test_stale_derived_policy_is_never_returned_after_its_basis_changes(world):
    # given
    agent, demo, client = world
    _merged(agent, demo, _op("CREATE", "likes_coffee", "Likes coffee"))
    _merged(
        agent,
        demo,
        _op(
            "CREATE",
            "offer_coffee_when_tired",
            "Offer coffee when the user is tired",
            category="derived",
            derived_from=["likes_coffee"],
        ),
    )
    assert _retrieve(client, "the user is tired, what should I offer?")["results"][0]["key"] == (
        "offer_coffee_when_tired"
    )
    # when
    _merged(agent, demo, _op("UPDATE", "likes_coffee", "No longer drinks coffee", old="Likes coffee"))
    # then
    body = _retrieve(client, "the user is tired, what should I offer?", topK=10)
    assert "offer_coffee_when_tired" not in [r["key"] for r in body["results"]]
    assert FactVersion.objects.get(key="offer_coffee_when_tired").status == FactStatus.STALE
    verdict = client.post(
        "/api/v1/verify",
        {"subject": "user-1", "text": "You look tired, shall I offer you a coffee?"},
        format="json",
    ).json()
    assert [f["fact"]["key"] for f in verdict["flags"]] == ["offer_coffee_when_tired"]


def test_verify_flags_a_draft_that_says_beijing(world):
    # given
    agent, demo, client = world
    _merged(agent, demo, _op("CREATE", "home_city", "Beijing"))
    _merged(agent, demo, _op("UPDATE", "home_city", "Shenzhen", old="Beijing"))
    # when
    body = client.post(
        "/api/v1/verify",
        {"subject": "user-1", "text": "Since you live in Beijing, dress warmly."},
        format="json",
    ).json()
    # then
    [flag] = body["flags"]
    assert flag["fact"]["value"] == "Beijing" and flag["replacement"]["value"] == "Shenzhen"


def test_expired_fact_leaves_retrieval_at_once_and_the_store_through_a_system_kpr(world):
    # given: "working from home" was true until an hour ago
    agent, demo, client = world
    now = timezone.now()
    _merged(
        agent,
        demo,
        _op(
            "CREATE",
            "work_location",
            "working from home this week",
            valid_from=now - timedelta(days=6),
            valid_to=now - timedelta(hours=1),
        ),
    )
    assert _retrieve(client, "where does the user work")["results"] == []
    # when
    report = expiry_run()
    pull = KnowledgePullRequest.objects.get(pk=report.pulls[0])
    _approve_and_merge(pull)
    # then
    fact = FactVersion.objects.get(key="work_location")
    assert fact.status == FactStatus.EXPIRED
    assert AuditEvent.objects.filter(
        pull_id=pull.pk, event_type="pull.submitted", actor="agent:system"
    ).exists()
    assert AuditEvent.objects.filter(pull_id=pull.pk, event_type="fact.expired").exists()
    assert expiry_run().proposed == 0


def test_feedback_marks_then_forgetting_kpr_merges_and_retrieval_stops_serving(world):
    # given
    agent, demo, client = world
    _merged(agent, demo, _op("CREATE", "home_city", "Beijing", confidence=0.6))
    fact = FactVersion.objects.get(key="home_city", status=FactStatus.ACTIVE)
    # when: a failed task says the memory was wrong
    response = client.post("/api/v1/feedback", {"factIds": [fact.pk], "outcome": "failure"}, format="json")
    # then
    assert response.json()["facts"][0]["confidence"] == pytest.approx(0.4)
    assert _retrieve(client, "home city")["reformationNeeded"] is True
    client.post("/api/v1/feedback", {"factIds": [fact.pk], "outcome": "failure"}, format="json")
    assert ForgettingMark.objects.filter(fact=fact).exists()
    report = forgetting_run()
    assert report.proposed == 1
    _approve_and_merge(KnowledgePullRequest.objects.get(pk=report.pulls[0]))
    fact.refresh_from_db()
    assert fact.status == FactStatus.RETRACTED
    assert _retrieve(client, "home city")["results"] == []
    assert forgetting_run().proposed == 0


def test_consolidation_conflict_merges_as_lower_confidence_versions(world, settings):
    # given
    settings.MEMORYPR_CONSOLIDATION_SIMILARITY = 0.7
    agent, demo, client = world
    _merged(agent, demo, _op("CREATE", "home_city", "Beijing", confidence=0.9))
    _merged(agent, demo, _op("CREATE", "current_city", "Shanghai", confidence=0.8))
    # when
    report = consolidation_run()
    _approve_and_merge(KnowledgePullRequest.objects.get(pk=report.pulls[0]))
    # then: both still there, both less sure, values unchanged
    active = {f.key: f for f in FactVersion.objects.filter(status=FactStatus.ACTIVE)}
    assert (active["home_city"].value, active["home_city"].confidence, active["home_city"].version) == (
        "Beijing",
        0.7,
        2,
    )
    assert (active["current_city"].value, active["current_city"].confidence) == ("Shanghai", 0.6)
    # a later run sees the same pair and proposes nothing new
    assert consolidation_run().proposed == 0
