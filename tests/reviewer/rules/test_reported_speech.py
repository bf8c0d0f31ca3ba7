from __future__ import annotations

import pytest

from reviewer.rules import reported_speech
from reviewer.rules.base import Verdict
from tests.reviewer.builders import op_view, pull_view


@pytest.mark.parametrize(
    "quote",
    ["My friend likes sushi", "my wife's favourite food is dumplings", "She said she moved to Shenzhen",
     "I heard that the office is moving", "According to my doctor I'm fine", "Someone told me I'm allergic",
     "我朋友喜欢寿司", "我的同事住在深圳", "听说他搬到了深圳", "他说他对花生过敏", "据说明天下雨"],
)  # fmt: skip
def test_facts_about_someone_else_escalate(quote):
    assert reported_speech.check(pull_view(), op_view(quote=quote)).verdict == Verdict.ESCALATE


@pytest.mark.parametrize(
    "quote",
    ["I moved to Shenzhen last month", "My wife and I moved to Shenzhen", "I like sushi", "上个月我举家搬迁到了深圳",
     "我和我老婆搬到了深圳", "我喜欢寿司"],
)  # fmt: skip
def test_facts_about_the_user_pass(quote):
    assert reported_speech.check(pull_view(), op_view(quote=quote)).verdict == Verdict.PASS


@pytest.mark.parametrize(
    ("quote", "key", "value"),
    [("My partner Alex and I went hiking.", "hobby", "hiking"),
     ("Seeing my kids' faces so happy at the beach was the best!", "kids", "beach"),
     ("My father was a pilot.", "father", "a pilot"),
     ("I love my dog. My sister hates dogs, but I walk dogs for a living.", "job", "walk dogs")],
)  # fmt: skip
def test_the_user_with_others_or_a_fact_about_the_named_person_passes(quote, key, value):
    outcome = reported_speech.check(pull_view(), op_view(quote=quote, key=key, new_value=value))
    assert outcome.verdict == Verdict.PASS


@pytest.mark.parametrize(
    "quote", ["Apparently I am a vegan, according to my mom.", "My sister keeps saying I am a vegan."]
)
def test_attribution_before_or_after_the_facts_clause_escalates(quote):
    outcome = reported_speech.check(pull_view(), op_view(quote=quote, key="diet", new_value="vegan"))
    assert outcome.verdict == Verdict.ESCALATE


def test_attribution_at_the_end_of_a_later_clause_escalates():
    quote = "Apparently my name is Jordan and I am a veterinarian, according to my mom."
    outcome = reported_speech.check(pull_view(), op_view(quote=quote, key="job", new_value="veterinarian"))
    assert outcome.verdict == Verdict.ESCALATE
    assert outcome.cue == "according to"
