"""Text helpers of formation: the singular a key is made of."""

from __future__ import annotations

import pytest

from memorypr.formation.text import singular, split_sentences


@pytest.mark.parametrize(
    ("plural", "one"),
    [
        ("peanuts", "peanut"),
        ("possibilities", "possibility"),
        ("movies", "movie"),
        ("watches", "watch"),
        ("tomatoes", "tomato"),
        ("shoes", "shoe"),
        ("headaches", "headache"),
        ("blues", "blues"),
        ("physics", "physics"),
        ("class", "class"),
    ],
)
def test_a_plural_in_a_key_is_its_singular(plural, one):
    # when / then
    assert singular(plural) == one


@pytest.mark.parametrize("word", ["tennis", "hummus", "nervous", "Travis", "Paris", "chorus", "delicious"])
def test_a_word_ending_in_us_or_is_is_no_plural(word):
    # when / then: "likes_tennis", not "likes_tenni"
    assert singular(word) == word


def test_a_letter_joined_by_an_ampersand_ends_a_sentence_as_any_word() -> None:
    # given: "D." read as an initial ran "I love D&D." into the next sentence
    # when / then
    assert split_sentences("I love D&D. I'm running a campaign.") == [
        "I love D&D.",
        "I'm running a campaign.",
    ]
    assert split_sentences("I love Ursula K. Le Guin.") == ["I love Ursula K. Le Guin."]
