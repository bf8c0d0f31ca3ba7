from __future__ import annotations

import pytest

from reviewer.rules import confidence
from reviewer.rules.base import Verdict
from tests.reviewer.builders import op_view, pull_view


@pytest.mark.parametrize(
    ("value", "verdict"),
    [(0.0, Verdict.REJECT), (0.29, Verdict.REJECT), (0.3, Verdict.ESCALATE), (0.69, Verdict.ESCALATE),
     (0.7, Verdict.PASS), (1.0, Verdict.PASS)],
)  # fmt: skip
def test_default_floor_and_bar(value, verdict):
    assert confidence.check(pull_view(), op_view(confidence=value)).verdict == verdict


def test_thresholds_come_from_the_policy():
    pull = pull_view(confidence_reject_floor=0.5, confidence_approve_bar=0.95)
    assert confidence.check(pull, op_view(confidence=0.4)).verdict == Verdict.REJECT
    outcome = confidence.check(pull, op_view(confidence=0.92))
    assert outcome.verdict == Verdict.ESCALATE
    assert outcome.reason == "confidence 0.92 is below the approve bar 0.95"


def test_lowering_the_confidence_of_a_kept_value_passes():
    from tests.reviewer.builders import current

    system = pull_view(agent_name="system")
    lowered = op_view(
        old_value="Shenzhen",
        new_value="Shenzhen",
        confidence=0.25,
        current=current("Shenzhen", confidence=0.45),
    )
    outcome = confidence.check(system, lowered)
    assert outcome.verdict == Verdict.PASS
    assert outcome.reason == "keeps the value and lowers its confidence 0.45 → 0.25"
    raised = op_view(
        old_value="Shenzhen",
        new_value="Shenzhen",
        confidence=0.5,
        current=current("Shenzhen", confidence=0.45),
    )
    assert confidence.check(system, raised).verdict == Verdict.ESCALATE
