"""Value clean-up of the rules' readings."""

from __future__ import annotations

import pytest

from memorypr.formation.extract import Turn, extract_facts
from memorypr.formation.patterns import quotes_balanced


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
