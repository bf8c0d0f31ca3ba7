from __future__ import annotations

import pytest

from reviewer.rules import trust
from reviewer.rules.base import Verdict
from tests.reviewer.builders import op_view, pull_view


def test_low_trust_escalates():
    outcome = trust.check(pull_view(agent_trust="low"), op_view())
    assert outcome.verdict == Verdict.ESCALATE
    assert outcome.reason == "agent 'proposer' has low trust: its changes need a person"


@pytest.mark.parametrize("level", ["normal", "high"])
def test_other_levels_pass(level):
    assert trust.check(pull_view(agent_trust=level), op_view()).verdict == Verdict.PASS
