"""Key resolution: a restatement in other words finds the key it restates."""

from __future__ import annotations

import pytest

from memorypr.formation.vocabulary import (
    KEY_ALIASES,
    canonical_key,
    resolution_scope,
    resolve_key,
    stems,
    verb_lemma,
)


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


# Keys of every kind: aliases and what they name, families and their look-alikes, world keys.
_STORE_KEYS = sorted(
    {*KEY_ALIASES, *KEY_ALIASES.values()}
    | {"pet.dog", "pet.big_dog", "pet.cat", "petition", "has.library", "has.big_library", "has.car"}
    | {"likes_dance", "likes_dancing", "likes_jazz_music", "likes", "family.brother", "family.children"}
    | {"allergy.peanut", "allergy.花生", "favorite_food", "favorite_foods", "language.french"}
    | {"gordon_banks.position_played", "gordon_banks.sport", "gordon.sport", "japan.capital"}
)


def _in_scope(key: str, existing: dict[str, str]) -> dict[str, str]:
    scope = resolution_scope(key)
    return {
        other: value
        for other, value in existing.items()
        if other in scope.keys or any(other.startswith(prefix) for prefix in scope.prefixes)
    }


def test_a_key_resolves_the_same_against_its_scope_as_against_every_key():
    # given a store holding keys of every kind
    existing = {key: key.replace("_", " ") for key in _STORE_KEYS}
    new_keys = [*_STORE_KEYS, "likes_dances", "has.libraries", "pet.dogs", "favorite_food_item", "brand_new"]
    for key in new_keys:
        for held in (existing, {k: v for k, v in existing.items() if k != key}):
            # when the key is resolved against the whole store and against its scope alone
            whole = resolve_key(key=key, value="x", existing=held)
            scoped = resolve_key(key=key, value="x", existing=_in_scope(key, held))
            # then the resolution is the same
            assert scoped == whole, key


def test_the_scope_of_a_key_is_its_aliases_and_its_family():
    # when
    city, dog, world = (
        resolution_scope("city"),
        resolution_scope("pet.dog"),
        resolution_scope("japan.capital"),
    )
    # then
    assert {"city", "home_city", "location", "lives_in"} <= city.keys and not city.prefixes
    assert dog.prefixes == {"pet."} and "pet.dog" in dog.keys
    assert (world.keys, world.prefixes) == ({"japan.capital"}, {"japan."})


@pytest.mark.parametrize(
    ("said", "base"),
    [
        ("dancing", "dance"), ("running", "run"), ("seeing", "see"), ("skiing", "ski"), ("bring", "bring"),
        ("selling", "sell"), ("helped", "help"), ("moved", "move"), ("stopped", "stop"), ("tried", "try"),
        ("teaches", "teach"), ("plays", "play"), ("goes", "go"), ("focus", "focus"), ("see", "see"),
        ("need", "need"), ("agreed", "agreed"),
    ],
)  # fmt: skip
def test_a_verb_lemma_is_its_base_form(said, base):
    # when / then
    assert verb_lemma(said) == base


def test_a_key_of_an_older_stem_resolves_to_the_key_of_its_base_form():
    # given a fact stored under the stem an older version wrote ("plan.danc")
    existing = {"plan.danc": "dance"}
    # when the same plan is proposed under its base form
    resolution = resolve_key(key="plan.dance", value="dance at my wedding", existing=existing)
    # then it restates the stored fact: no second key for one plan
    assert (resolution.key, resolution.how) == ("plan.danc", "stem")


def test_a_key_stored_before_under_a_shortened_name_is_found_by_its_stems() -> None:
    # given: names were made singular word by word ('likes_charle_dicken') before they kept their words
    existing = {"likes_charle_dicken": "likes Charles Dickens", "likes_jazz": "likes jazz"}
    # when
    found = resolve_key(key="likes_charles_dickens", value="likes Charles Dickens", existing=existing)
    # then
    assert (found.key, found.how) == ("likes_charle_dicken", "stem")
