from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reviewer.rules import future_plan
from reviewer.rules.base import Verdict
from tests.reviewer.builders import op_view, pull_view


@pytest.mark.parametrize(
    "quote",
    ["I'm going to work on Mars tomorrow", "I’m gonna work on Mars", "We’ll move soon, next year", "Next month I'll move to Shenzhen",
     "I plan to learn Japanese", "I want to become a pilot", "We will live in Tokyo",
     "我明天要去火星上班", "下个月我打算搬到深圳", "我准备学日语", "明年我要去东京"],
)  # fmt: skip
def test_plans_escalate(quote):
    outcome = future_plan.check(pull_view(), op_view(quote=quote))
    assert outcome.verdict == Verdict.ESCALATE
    assert "a future plan" in outcome.reason


@pytest.mark.parametrize(
    "quote", ["I moved to Shenzhen last month", "I work on Mars", "上个月我举家搬迁到了深圳", "我在深圳上班"]
)
def test_present_and_past_facts_pass(quote):
    assert future_plan.check(pull_view(), op_view(quote=quote)).verdict == Verdict.PASS


def test_a_plan_with_its_own_valid_time_passes():
    op = op_view(quote="I'm working from home next week", valid_from=datetime(2026, 12, 1, tzinfo=UTC))
    assert future_plan.check(pull_view(), op).verdict == Verdict.PASS
