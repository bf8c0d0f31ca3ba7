from __future__ import annotations

from reviewer.dashboard.selectors import evidence_highlight


def test_the_clause_and_a_cue_inside_it_are_marked():
    parts = evidence_highlight(
        quote="Fine. Do you think I live in Paris?",
        aligned={"clause": "Do you think I live in Paris?", "cue": "?"},
    )
    assert parts == [("Fine. ", ""), ("Do you think I live in Paris", "clause"), ("?", "cue")]


def test_a_cue_in_the_words_that_govern_the_clause_is_marked_outside_it():
    parts = evidence_highlight(
        quote="Next year, I will live in Tokyo.",
        aligned={"clause": "I will live in Tokyo.", "cue": "next year"},
    )
    assert parts == [("Next year", "cue"), (", ", ""), ("I will live in Tokyo.", "clause")]


def test_without_an_alignment_the_quote_is_one_plain_run():
    assert evidence_highlight(quote="I live in Tokyo.", aligned=None) == [("I live in Tokyo.", "")]
