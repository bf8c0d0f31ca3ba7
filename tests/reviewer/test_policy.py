"""The policy table: how the rules' verdict, the LLM's opinion and the namespace policy combine."""

from __future__ import annotations

import pytest

from reviewer.policy import LlmOpinion, LlmPlan, OperationDecision, llm_plan, operation_decide, pull_verdict
from reviewer.rules.base import Verdict
from tests.reviewer.builders import policy

P, E, R = Verdict.PASS, Verdict.ESCALATE, Verdict.REJECT
FAILED = LlmOpinion(E, "time-out", failed=True)


def llm(verdict: Verdict) -> LlmOpinion:
    return LlmOpinion(verdict, "because")


@pytest.mark.parametrize(
    ("mode", "rules", "opinion", "expected"),
    [
        # rules_and_llm: most severe wins, and the LLM can only add severity
        ("rules_and_llm", P, None, P),
        ("rules_and_llm", P, llm(P), P),
        ("rules_and_llm", P, llm(E), E),
        ("rules_and_llm", P, llm(R), R),
        ("rules_and_llm", E, llm(P), E),
        ("rules_and_llm", E, llm(R), R),
        ("rules_and_llm", R, llm(P), R),
        ("rules_and_llm", P, FAILED, E),
        ("rules_and_llm", R, FAILED, R),
        # rules_only: the LLM's opinion, if any, is ignored
        ("rules_only", P, llm(R), P),
        ("rules_only", E, llm(P), E),
        # llm_required: a failed (or unavailable) LLM escalates
        ("llm_required", P, llm(P), P),
        ("llm_required", P, FAILED, E),
        ("llm_required", E, llm(P), E),
        ("llm_required", P, llm(R), R),
    ],
)
def test_operation_verdict_table(mode, rules, opinion, expected):
    verdict, _ = operation_decide(
        policy=policy(mode=mode),
        category="user_profile",
        rules_verdict=rules,
        rules_reasons=[],
        noop=False,
        llm=opinion,
    )
    assert verdict == expected


def test_reasons_name_every_source_that_held_the_operation():
    verdict, reasons = operation_decide(
        policy=policy(human_categories=frozenset({"user_profile"})),
        category="user_profile",
        rules_verdict=E,
        rules_reasons=["confidence: below the bar"],
        noop=False,
        llm=llm(R),
    )
    assert verdict == R
    assert reasons == [
        "confidence: below the bar",
        "policy: category 'user_profile' always goes to a person",
        "llm: because",
    ]


@pytest.mark.parametrize(("category", "expected"), [("user_profile", E), ("domain_fact", P)])
def test_always_human_for_a_category(category, expected):
    verdict, _ = operation_decide(
        policy=policy(human_categories=frozenset({"user_profile"})),
        category=category,
        rules_verdict=P,
        rules_reasons=[],
        noop=False,
        llm=llm(P),
    )
    assert verdict == expected


def test_a_noop_decides_nothing():
    verdict, reasons = operation_decide(
        policy=policy(human_categories=frozenset({"user_profile"})),
        category="user_profile",
        rules_verdict=R,
        rules_reasons=["x"],
        noop=True,
        llm=llm(R),
    )
    assert (verdict, reasons) == (P, [])


@pytest.mark.parametrize(
    ("mode", "rules", "changing", "configured", "plan"),
    [
        ("rules_and_llm", P, 1, True, LlmPlan.ASK),
        ("rules_and_llm", E, 1, True, LlmPlan.ASK),
        ("rules_and_llm", R, 1, True, LlmPlan.SKIP),
        ("rules_and_llm", P, 0, True, LlmPlan.SKIP),
        ("rules_and_llm", P, 1, False, LlmPlan.SKIP),
        ("rules_only", P, 1, True, LlmPlan.SKIP),
        ("llm_required", P, 1, True, LlmPlan.ASK),
        ("llm_required", P, 1, False, LlmPlan.UNAVAILABLE),
        ("llm_required", R, 1, False, LlmPlan.SKIP),
    ],
)
def test_when_the_llm_is_asked(mode, rules, changing, configured, plan):
    assert llm_plan(mode=mode, rules_verdict=rules, changing=changing, configured=configured) == plan


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [([P, P], P), ([P, E], E), ([E, R], R), ([R, P, E], R), ([], P)],
)
def test_the_most_severe_operation_decides_the_kpr(verdicts, expected):
    decisions = [OperationDecision(position=i, verdict=v, noop=False) for i, v in enumerate(verdicts)]
    assert pull_verdict(decisions) == expected


def test_noops_do_not_count_for_the_kpr():
    decisions = [
        OperationDecision(position=0, verdict=R, noop=True),
        OperationDecision(position=1, verdict=P, noop=False),
    ]
    assert pull_verdict(decisions) == P
