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
