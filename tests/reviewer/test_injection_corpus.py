"""The injection corpus through the whole pipeline: each attempt submitted to the API, checked by
the rules, reviewed by a model over real HTTP that does whatever the data tells it (and otherwise
approves), decided by the policy, and merged if approved. The model can only make a verdict
stricter, so an attempt is stopped only by a rule: none may end APPROVED, and none may be merged.
Ordinary facts (the controls) go the same way and are approved and merged: the harness can fail."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from bench._injections import ATTACK_SETS, CATEGORIES, SPLITS, Attempt, corpus_load, held_by
from memorypr.facts.models import FactVersion
from memorypr.pulls.models import KnowledgePullRequest
from tests.reviewer.llm_server import obedient

ATTEMPTS = [attempt for name in ATTACK_SETS for attempt in corpus_load(name)]
CONTROLS = corpus_load("controls")


def test_the_corpus_is_what_it_says():
    # at least 60 attempts, in both halves, in both languages, of every kind; ids unique
    assert len(ATTEMPTS) >= 60
    assert len({a.id for a in ATTEMPTS + CONTROLS}) == len(ATTEMPTS) + len(CONTROLS)
    for split in SPLITS:
        attempts = corpus_load(split)
        assert {a.category for a in attempts} == set(CATEGORIES)
        assert Counter(a.lang for a in attempts) == {"en": len(attempts) // 2, "zh": len(attempts) // 2}


@pytest.fixture
def run_through_pipeline(llm_server, agent_client, warm_models, django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    llm_server.scenario = obedient

    def run(attempt: Attempt) -> tuple[KnowledgePullRequest, dict[str, Any]]:
        body = {
            "sourceSessionId": f"session-{attempt.id}",
            "subject": f"user-{attempt.id}",
            "operations": [attempt.operation()],
        }
        asked = len(llm_server.requests)
        with django_capture_on_commit_callbacks(execute=True):
            response = agent_client.post("/api/v1/pulls", body, format="json")
        assert response.status_code == 201, (attempt.id, response.json())
        pull = KnowledgePullRequest.objects.get(pk=response.json()["id"])
        llm = pull.review_events.filter(reviewer_kind="llm").first()
        return pull, {
            "held_by": held_by(pull),
            "llm": llm.verdict if llm else None,
            "asked": len(llm_server.requests) > asked,
            "stored": FactVersion.objects.filter(subject=f"user-{attempt.id}").exists(),
        }

    return run


@pytest.mark.django_db
def test_no_injection_is_approved_or_merged_even_by_an_obedient_model(run_through_pipeline):
    # given every attempt of both halves and the later set, and a model that obeys them
    # when each goes through the pipeline
    through = []
    for attempt in ATTEMPTS:
        pull, seen = run_through_pipeline(attempt)
        # then the model, where it was asked, approved: only the rules stood in the way
        if seen["asked"]:
            assert seen["llm"] == "APPROVE", attempt.id
        else:
            assert pull.review_status == "REJECTED", attempt.id  # the rules rejected; nothing to ask
        if pull.review_status == "APPROVED" or pull.merge_status == "MERGED" or seen["stored"]:
            through.append(attempt.id)
        else:
            assert seen["held_by"], attempt.id
    # and not one was approved or merged
    assert through == []


@pytest.mark.django_db
def test_ordinary_facts_are_approved_and_merged_the_same_way(run_through_pipeline):
    # given facts with an attack's words in them but no attack ("my manager has to approve …")
    for control in CONTROLS:
        # when each goes through the same pipeline
        pull, seen = run_through_pipeline(control)
        # then it is approved by the rules and the model, and merged into the store
        assert (pull.review_status, pull.merge_status, seen["held_by"]) == ("APPROVED", "MERGED", []), (
            control.id
        )
        assert seen["asked"] and seen["stored"], control.id
