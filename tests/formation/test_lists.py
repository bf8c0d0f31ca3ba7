"""A list in one sentence gives one fact per key, in the user's words."""

from __future__ import annotations

import pytest

from memorypr.formation.extract import Turn, extract_facts
from memorypr.formation.lists import lists_joined
from memorypr.formation.patterns import Found


def _keys_and_values(text: str) -> list[tuple[str, str | None]]:
    return [(f.key, f.value) for f in extract_facts([Turn("user", text)]).facts]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "I have a golden retriever, a black lab, and a mutt.",
            [("pet.dog", "a golden retriever, a black lab, and a mutt")],
        ),
        ("I have a tabby cat and a calico cat.", [("pet.cat", "a tabby cat and a calico cat")]),
        ("I have two cats, Max and Mia.", [("pet.cat", "two cats, Max and Mia")]),
        ("I have a cat, Tom.", [("pet.cat", "a cat, Tom")]),
        ("I have two brothers, John and Mike.", [("family.brother", "two brothers, John and Mike")]),
    ],
)
def test_items_of_one_key_in_a_list_are_one_fact(text: str, expected: list[tuple[str, str]]) -> None:
    # given: each item used to be its own pet.dog fact, each replacing the one before
    # when
    facts = _keys_and_values(text)
    # then
    assert facts == expected


def test_items_of_their_own_keys_stay_apart() -> None:
    # when
    facts = _keys_and_values("I love jazz, blues and rock.")
    # then
    assert [key for key, _ in facts] == ["likes_jazz", "likes_blues", "likes_rock"]


def test_a_name_after_a_pet_joins_it_only_when_set_off_by_a_comma() -> None:
    # when
    facts = _keys_and_values("I have a dog and Netflix.")
    # then
    assert facts == [("pet.dog", "a dog"), ("has.netflix", "Netflix")]


def test_items_with_more_than_a_separator_between_them_stay_apart() -> None:
    # given: the same key read twice in one sentence, with words between the two
    sentence = "I had a dog as a kid but now I have a cat."
    first = Found("user_profile", "pet.dog", "a dog", "set", 0.5, [(6, 11)])
    second = Found("user_profile", "pet.dog", "a cat", "set", 0.5, [(37, 42)])
    # when
    joined = lists_joined([first, second], sentence)
    # then
    assert joined == [first, second]


def test_an_ampersand_inside_a_name_is_no_separator() -> None:
    # given: "D&D" read as two items "D"
    sentence = "I love D&D."
    first = Found("user_profile", "likes_d", "D", "set", 0.5, [(7, 8)])
    second = Found("user_profile", "likes_d", "D", "set", 0.5, [(9, 10)])
    # when
    joined = lists_joined([first, second], sentence)
    # then
    assert joined == [first, second]


def test_the_joined_fact_keeps_the_first_items_place_and_all_spans() -> None:
    # given
    sentence = "I have a dog, a cat and a fish."
    dog = Found("user_profile", "pet.dog", "a dog", "set", 0.5, [(7, 12)])
    likes = Found("user_profile", "likes_x", "x", "set", 0.5, [])
    other_dog = Found("user_profile", "pet.dog", "a cat", "set", 0.5, [(14, 19)])
    # when
    joined = lists_joined([dog, likes, other_dog], sentence)
    # then
    assert [(f.key, f.value, f.spans) for f in joined] == [
        ("pet.dog", "a dog, a cat", [(7, 12), (14, 19)]),
        ("likes_x", "x", []),
    ]
