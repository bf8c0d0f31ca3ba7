"""Key resolution: a restatement in other words finds the key it restates."""

from __future__ import annotations

from memorypr.formation.vocabulary import canonical_key, resolve_key, stems


def test_an_alias_of_an_existing_key_resolves_to_it():
    # when
    found = resolve_key(key="occupation", value="nurse", existing={"job": "teacher"})
    # then
    assert (found.key, found.how) == ("job", "alias")
    assert canonical_key("city") == "home_city"


def test_the_same_thing_in_other_words_resolves_to_the_existing_key():
    # when
    by_stem = resolve_key(
        key="likes_dance", value="likes to dance", existing={"likes_dancing": "likes dancing"}
    )
    by_containment = resolve_key(key="has.library", value="a library", existing={"has.big_library": "x"})
    # then
    assert (by_stem.key, by_stem.how) == ("likes_dancing", "stem")
    assert (by_containment.key, by_containment.how) == ("has.big_library", "contains")


def test_another_thing_of_the_same_family_is_a_new_key():
    # when
    found = resolve_key(key="pet.cat", value="a cat", existing={"pet.dog": "a dog"})
    # then
    assert (found.key, found.how, found.ambiguous_with) == ("pet.cat", "new", ())


def test_a_close_key_of_another_family_is_ambiguous_not_silent():
    # given: an embedder that finds the two texts the same
    def embed(texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]

    # when
    found = resolve_key(
        key="identity.kayaker", value="avid kayaker", existing={"likes_kayaking": "x"}, embed=embed
    )
    # then
    assert found.key == "identity.kayaker"
    assert [key for key, _ in found.ambiguous_with] == ["likes_kayaking"]
    assert "likes_kayaking" in found.note


def test_values_compare_by_their_words_whatever_the_spelling():
    # then
    assert stems("three kids") == stems("three children")
    assert stems("两个小孩") == stems("两个孩子")
    assert stems("likes dancing") == stems("likes to dance")
