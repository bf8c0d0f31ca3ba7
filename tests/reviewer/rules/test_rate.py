from __future__ import annotations

from reviewer.rules import rate
from reviewer.rules.base import Verdict
from tests.reviewer.builders import op_view, pull_view


def test_within_the_hourly_limit_passes():
    assert rate.check(pull_view(pulls_last_hour=600), op_view()).verdict == Verdict.PASS


def test_over_the_hourly_limit_escalates():
    outcome = rate.check(pull_view(pulls_last_hour=11, agent_hourly_limit=10), op_view())
    assert outcome.verdict == Verdict.ESCALATE
    assert outcome.reason == "agent 'proposer' submitted 11 KPRs in the past hour (limit 10)"
