from __future__ import annotations

import pytest

from reviewer.rules import joke
from reviewer.rules.base import Verdict
from tests.reviewer.builders import op_view, pull_view


@pytest.mark.parametrize(
    "quote",
    ["I'm a billionaire, just kidding", "I live on the moon lol", "I'm joking, I hate cats", "hahaha I'm 200 years old",
     "Oh yeah, right, I LOVE Mondays", "I totally love traffic /s", "I'm the king of France 😂",
     "我开玩笑的，我住在火星", "哈哈，我是亿万富翁", "我最喜欢加班了，才怪", "逗你的，我不吃辣"],
)  # fmt: skip
def test_jokes_and_sarcasm_escalate(quote):
    assert joke.check(pull_view(), op_view(quote=quote)).verdict == Verdict.ESCALATE


@pytest.mark.parametrize(
    "quote", ["I moved to Shenzhen last month", "I love cats", "我不吃辣", "我在深圳工作"]
)
def test_plain_statements_pass(quote):
    assert joke.check(pull_view(), op_view(quote=quote)).verdict == Verdict.PASS


def test_laughter_in_an_earlier_sentence_passes():
    outcome = joke.check(pull_view(), op_view(quote="哈哈，你说得对。我其实住在深圳。", new_value="深圳"))
    assert outcome.verdict == Verdict.PASS


@pytest.mark.parametrize("quote", ["I live on Mars. Just kidding!", "I live on Mars, lol"])
def test_a_joke_marker_after_the_fact_escalates(quote):
    outcome = joke.check(pull_view(), op_view(quote=quote, key="home_city", new_value="Mars"))
    assert outcome.verdict == Verdict.ESCALATE
    assert outcome.clause in ("I live on Mars.", "I live on Mars")
