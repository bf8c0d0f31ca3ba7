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


@pytest.mark.parametrize(
    ("quote", "key", "value"),
    [("It was an awesome time! We explored nature, roasted marshmallows… We'll go again next year.", "camping",
      "roasted marshmallows"),
     ("I have three children and I love going to the park with them.", "children", "three children"),
     ("I want to be a lawyer, but I'm currently working on my family's horse farm.", "work", "family horse farm"),
     ("I'm going to graduate from high school in two years.", "will_graduate", "graduate in two years")],
)  # fmt: skip
def test_a_plan_outside_the_facts_clause_or_stated_by_the_fact_passes(quote, key, value):
    assert (
        future_plan.check(pull_view(), op_view(quote=quote, key=key, new_value=value)).verdict == Verdict.PASS
    )


def test_a_plan_that_governs_the_facts_clause_escalates_naming_clause_and_cue():
    quote = "I had a great week. Next year, I will live in Tokyo."
    outcome = future_plan.check(pull_view(), op_view(quote=quote, key="home_city", new_value="Tokyo"))
    assert outcome.verdict == Verdict.ESCALATE
    assert outcome.clause == "I will live in Tokyo."
    assert outcome.cue == "next year"
    assert "“«Next year», I will live in Tokyo.”" in outcome.reason


@pytest.mark.parametrize("quote", ["我今晚要看一部动画片。", "我想尝尝绿茶。", "我这周末要去爬山"])
def test_near_future_in_chinese_escalates(quote):
    assert future_plan.check(pull_view(), op_view(quote=quote, new_value="x")).verdict == Verdict.ESCALATE
