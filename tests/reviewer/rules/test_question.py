from __future__ import annotations

import pytest

from reviewer.rules import question
from reviewer.rules.base import Verdict
from tests.reviewer.builders import op_view, pull_view


@pytest.mark.parametrize(
    "quote",
    ["Do I like sushi?", "Should I move to Shenzhen", "Is Shenzhen nice?", "Am I allergic to shrimp",
     "我是不是对花生过敏？", "深圳好吗", "我应该搬到深圳吗？", "你觉得我会喜欢寿司吗", "难道我不喜欢咖啡"],
)  # fmt: skip
def test_questions_escalate(quote):
    assert question.check(pull_view(), op_view(quote=quote)).verdict == Verdict.ESCALATE


@pytest.mark.parametrize(
    "quote", ["I moved to Shenzhen last month.", "I like sushi!", "上个月我举家搬迁到了深圳", "我喜欢寿司。"]
)
def test_statements_pass(quote):
    assert question.check(pull_view(), op_view(quote=quote)).verdict == Verdict.PASS


def test_a_question_in_another_clause_than_the_fact_passes_and_names_the_clause():
    quote = (
        "Been busy volunteering at the homeless shelter… Just started doing aerial yoga, have you tried it?"
    )
    outcome = question.check(pull_view(), op_view(quote=quote, key="hobby", new_value="aerial yoga"))
    assert outcome.verdict == Verdict.PASS
    assert outcome.reason == "no sign of a question in the clause “Just started doing aerial yoga”"
    assert outcome.clause == "Just started doing aerial yoga"


@pytest.mark.parametrize(
    ("quote", "value"),
    [
        ("Do you think I have a turtle named Timothy?", "a turtle named timothy"),
        ("你还记得我只喝绿茶吗？", "绿茶"),
    ],
)
def test_a_fact_asked_about_escalates_with_its_clause_and_cue(quote, value):
    outcome = question.check(pull_view(), op_view(quote=quote, key="pet", new_value=value))
    assert outcome.verdict == Verdict.ESCALATE
    assert outcome.cue
    assert f"«{outcome.cue}»" in outcome.reason or outcome.cue in outcome.reason


def test_a_chinese_question_to_the_other_speaker_after_the_fact_passes():
    outcome = question.check(pull_view(), op_view(quote="你好！我住在深圳，你呢？", new_value="深圳"))
    assert outcome.verdict == Verdict.PASS
