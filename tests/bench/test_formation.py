"""The formation benchmark's measures."""

from __future__ import annotations

from bench.formation import noisy_value


def test_a_value_that_leans_on_its_turn_is_noise() -> None:
    # when / then
    assert noisy_value("likes it")
    assert noisy_value("likes their energy")
    assert not noisy_value("likes jazz")


def test_a_pronoun_inside_a_quoted_title_is_no_noise() -> None:
    # given: a title's words are a name, whatever they are
    # when / then
    assert not noisy_value('likes "Paint It Black"')
    assert not noisy_value("likes “The Way You Look Tonight”")
    assert noisy_value('likes it "a lot"')
