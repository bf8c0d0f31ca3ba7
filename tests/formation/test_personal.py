"""Structural reading of first-person statements: keys from what is said, not from its wording."""

from __future__ import annotations

import pytest

from memorypr.formation.extract import Turn, extract_facts


def _facts(*turns: Turn) -> list[tuple[str, str | None, str]]:
    return [(f.key, f.value, f.polarity) for f in extract_facts(list(turns)).facts]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I have a big pet dog.", ("pet.dog", "a big pet dog", "set")),
        ("My favorite type of food is italian.", ("favorite_food", "italian", "set")),
        ("Blue is my favorite color.", ("favorite_color", "Blue", "set")),
        ("I want to be an actor when i grow up.", ("career_goal", "actor", "set")),
        ("I'm a baby delivery nurse.", ("occupation", "baby delivery nurse", "set")),
        ("I work as a nurse.", ("occupation", "nurse", "set")),
        ("I have three kids.", ("family.children", "three kids", "set")),
        ("I grew up in Kansas.", ("hometown", "Kansas", "set")),
        ("I'm diabetic.", ("health.diabetes", "diabetes", "set")),
        ("I am 25 years old.", ("age", "25", "set")),
        ("I'm vegan.", ("diet", "vegan", "set")),
        ("I no longer have a dog.", ("pet.dog", None, "unset")),
        ("I'm not a farmer anymore.", ("occupation", None, "unset")),
        ("我养了一只狗。", ("pet.dog", "一只狗", "set")),
        ("我最喜欢的颜色是蓝色。", ("favorite_color", "蓝色", "set")),
        ("我是老师。", ("occupation", "老师", "set")),
        ("我有两个孩子。", ("family.children", "两个孩子", "set")),
        ("我有糖尿病。", ("health.diabetes", "糖尿病", "set")),
    ],
)
def test_statements_are_keyed_by_what_they_are_about(text, expected):
    # when
    facts = _facts(Turn("user", text))
    # then
    assert facts == [expected]


def test_a_list_of_likes_is_one_fact_per_item():
    # when
    facts = _facts(Turn("user", "I like to grow roses, read books, and drink fancy tea."))
    # then
    assert [key for key, _, _ in facts] == ["likes_grow_rose", "likes_read_book", "likes_fancy_tea"]


@pytest.mark.parametrize(
    "text",
    [
        "I love making it.",
        "I like the way it can make you feel.",
        "I love their energy.",
        "I love them!",
        "我喜欢它",
    ],
)
def test_a_pronoun_object_with_nothing_to_stand_for_is_no_fact(text):
    # when
    facts = _facts(Turn("assistant", "Hello there."), Turn("user", text))
    # then
    assert facts == []


def test_a_pronoun_stands_for_what_the_previous_turn_asked_about():
    # when
    facts = _facts(Turn("assistant", "Do you like jazz?"), Turn("user", "I love it."))
    # then
    assert facts == [("likes_jazz", "likes jazz", "set")]


@pytest.mark.parametrize("text", ["Do you have a dog?", "Is your favorite color blue?", "你养狗吗？"])
def test_questions_give_no_fact(text):
    # when
    facts = _facts(Turn("user", text))
    # then
    assert facts == []


def test_assistant_turns_give_no_fact():
    # when
    facts = _facts(Turn("assistant", "I have a big pet dog and I'm a nurse."), Turn("user", "Nice."))
    # then
    assert facts == []
