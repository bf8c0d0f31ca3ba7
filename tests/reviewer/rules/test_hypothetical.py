from __future__ import annotations

import pytest

from reviewer.rules import hypothetical
from reviewer.rules.base import Verdict
from tests.reviewer.builders import op_view, pull_view


@pytest.mark.parametrize(
    "quote",
    ["If I lived in Shenzhen I'd surf every day", "Suppose I moved to Shenzhen", "Imagine I was a vegan",
     "Maybe I'll like sushi", "I might be moving", "I wish I lived in Paris", "假如我住在深圳", "如果我是素食者",
     "要是我搬到深圳就好了", "我也许会喜欢寿司", "我可能住在深圳", "IF I LIVED IN PARIS I WOULD PAINT"],
)  # fmt: skip
def test_hypotheticals_escalate(quote):
    outcome = hypothetical.check(pull_view(), op_view(quote=quote))
    assert outcome.verdict == Verdict.ESCALATE
    assert outcome.reason.startswith("evidence reads as ")


@pytest.mark.parametrize(
    "quote",
    [
        "I moved to Shenzhen last month",
        "I live in Shenzhen",
        "上个月我举家搬迁到了深圳",
        "我是素食者",
        "Different",
        "Alta IF is associated with the sport of association football.",
    ],
)
def test_plain_statements_pass(quote):
    assert hypothetical.check(pull_view(), op_view(quote=quote)).verdict == Verdict.PASS
