"""Quoted titles: one thing to the rules, in their marks in the values."""

from __future__ import annotations

import pytest

from memorypr.formation.extract import Turn, extract_facts
from memorypr.formation.quotes import quotes_balanced


@pytest.mark.parametrize(
    ("value", "sentence", "expected"),
    [
        (
            'Bohemian Rhapsody" by Queen',
            'It is "Bohemian Rhapsody" by Queen.',
            '"Bohemian Rhapsody" by Queen',
        ),
        (
            'likes The Girl with the Dragon Tattoo" by Stieg Larsson',
            'I like "The Girl with the Dragon Tattoo" by Stieg Larsson.',
            'likes "The Girl with the Dragon Tattoo" by Stieg Larsson',
        ),
        ('likes the song "Reflection', 'I love the song "Reflection".', 'likes the song "Reflection"'),
        ('likes the song "Reflection', 'I love the song "Reflection', 'likes the song "Reflection"'),
        ("Dune” by Frank Herbert", "It is “Dune” by Frank Herbert.", "“Dune” by Frank Herbert"),
        ('"Dune" by Frank Herbert', 'It is "Dune" by Frank Herbert.', '"Dune" by Frank Herbert'),
        # a mark the sentence places nowhere: dropped
        ('likes Gorgeous" a lot', 'I love Gorgeous" a lot.', "likes Gorgeous a lot"),
        ("pizza", "I love pizza.", "pizza"),
    ],
)
def test_quotes_balanced_puts_back_the_mark_an_edge_lost(value: str, sentence: str, expected: str) -> None:
    # when / then
    assert quotes_balanced(value, sentence=sentence) == expected


def test_a_quoted_title_keeps_both_its_quote_marks() -> None:
    # given: the edges' clean-up took the opening mark and left the closing one
    # when
    facts = extract_facts([Turn("user", 'My favorite rock song is "Bohemian Rhapsody" by Queen.')]).facts
    # then
    assert [(f.key, f.value) for f in facts] == [("favorite_rock_song", '"Bohemian Rhapsody" by Queen')]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'I also love "Under My Thumb," "Paint It Black," and "Sympathy for the Devil."',
            [
                ("likes_under_thumb", 'likes "Under My Thumb"'),
                ("likes_paint_it_black", 'likes "Paint It Black"'),
                ("likes_sympathy_for_devil", 'likes "Sympathy for the Devil"'),
            ],
        ),
        (
            'I like "The Girl with the Dragon Tattoo" by Stieg Larsson.',
            [("likes_girl_with_dragon_tattoo", 'likes "The Girl with the Dragon Tattoo" by Stieg Larsson')],
        ),
        (
            'I love "Can\'t Smile Without You".',
            [("likes_cant_smile_without_you", 'likes "Can\'t Smile Without You"')],
        ),
        (
            "I love the Fast and Furious movies.",
            [("likes_fast_furious_movie", "likes the Fast and Furious movies")],
        ),
        ("I love Paris and Rome.", [("likes_paris", "likes Paris"), ("likes_rome", "likes Rome")]),
    ],
)
def test_a_title_is_read_as_one_thing(text: str, expected: list[tuple[str, str]]) -> None:
    # given: the words of a title were read as a list ("Paint It Black" as a pronoun's doing,
    # "Sympathy for the Devil" cut at "for", "the Fast and Furious movies" as two likes)
    # when
    facts = extract_facts([Turn("user", text)]).facts
    # then
    assert [(f.key, f.value) for f in facts] == expected


def test_no_statement_is_read_inside_a_quoted_title() -> None:
    # when
    facts = extract_facts(
        [Turn("user", 'My favorite song is "I Will Always Love You" by Whitney Houston.')]
    ).facts
    # then
    assert [(f.key, f.value) for f in facts] == [
        ("favorite_song", '"I Will Always Love You" by Whitney Houston')
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'My favorite book is "The Great Gatsby" by F. Scott Fitzgerald.',
            [("favorite_book", '"The Great Gatsby" by F. Scott Fitzgerald')],
        ),
        (
            "I love Harry Potter by J. K. Rowling.",
            [("likes_harry_potter", "likes Harry Potter by J. K. Rowling")],
        ),
        ("I live in Washington D.C. now.", [("home_city", "Washington D.C.")]),
        ("I live in St. Louis.", [("home_city", "St. Louis")]),
    ],
)
def test_a_value_does_not_end_at_the_full_stop_inside_a_name(
    text: str, expected: list[tuple[str, str]]
) -> None:
    # given: values ended at the first full stop ('"The Great Gatsby" by F', 'Washington D')
    # when
    facts = extract_facts([Turn("user", text)]).facts
    # then
    assert [(f.key, f.value) for f in facts] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My name is John F. Kennedy.", [("name", "John F. Kennedy")]),
        ("I love D&D.", [("likes_d_d", "likes D&D")]),
    ],
)
def test_a_name_keeps_its_initials_and_ampersands(text: str, expected: list[tuple[str, str]]) -> None:
    # when
    facts = extract_facts([Turn("user", text)]).facts
    # then
    assert [(f.key, f.value) for f in facts] == expected
