"""The diff: CREATE / UPDATE / DELETE against current facts, with the current value as the base."""

from __future__ import annotations

from typing import Any

from memorypr.formation.diff import diff_facts
from memorypr.formation.extract import Turn, extract_facts


def _current(*pairs: tuple[str, Any], category: str = "user_profile") -> list[dict[str, Any]]:
    return [{"category": category, "key": key, "value": value, "status": "active"} for key, value in pairs]


def _diff(text: str, current: list[dict[str, Any]]):  # type: ignore[no-untyped-def]
    facts = extract_facts([Turn("user", text, 1732096800000)]).facts
    return diff_facts(extracted=facts, current=current, timestamp_ms=1)


def _ops(diff) -> list[tuple[str, str, Any, Any]]:  # type: ignore[no-untyped-def]
    return [(op["action"], op["key"], op["oldValue"], op["newValue"]) for op in diff.operations]


def test_a_new_key_is_a_create_without_a_base():
    # when
    diff = _diff("I live in Beijing.", [])
    # then
    assert _ops(diff) == [("CREATE", "home_city", None, "Beijing")]
    (op,) = diff.operations
    assert op["evidence"] == {"rawMessageQuote": "I live in Beijing.", "timestamp": 1732096800000}
    assert op["category"] == "user_profile"
    assert 0.7 <= op["importance"] < 0.9
    assert op["confidence"] == 0.9


def test_a_changed_value_is_an_update_based_on_the_current_value():
    # when
    diff = _diff("I moved to Shenzhen last month.", _current(("home_city", "Beijing")))
    # then
    assert _ops(diff) == [("UPDATE", "home_city", "Beijing", "Shenzhen")]


def test_an_unchanged_value_is_skipped_whatever_its_case():
    # when
    diff = _diff("i live in beijing", _current(("home_city", "Beijing")))
    # then
    assert diff.operations == []
    assert [s.reason for s in diff.skipped] == ["unchanged: already the current value"]


def test_no_longer_true_deletes_the_current_fact_when_it_is_that_value():
    # when
    diff = _diff("I no longer live in Beijing.", _current(("home_city", "Beijing")))
    # then
    assert _ops(diff) == [("DELETE", "home_city", "Beijing", None)]


def test_no_longer_true_of_another_value_changes_nothing():
    # when
    diff = _diff("I no longer live in Paris.", _current(("home_city", "Beijing")))
    # then
    assert diff.operations == []
    assert "memory holds 'Beijing'" in diff.skipped[0].reason


def test_an_allergy_that_ended_deletes_its_key_whatever_the_stored_wording():
    # when
    diff = _diff("我对花生不过敏了，但对虾过敏", _current(("allergy.花生", "花生过敏（严重）")))
    # then
    assert _ops(diff) == [
        ("DELETE", "allergy.花生", "花生过敏（严重）", None),
        ("CREATE", "allergy.虾", None, "对虾过敏"),
    ]


def test_the_last_statement_about_a_key_wins():
    # given
    turns = [Turn("user", "I live in Beijing."), Turn("user", "Actually, I moved from Beijing to Shenzhen.")]
    facts = extract_facts(turns).facts
    # when
    diff = diff_facts(extracted=facts, current=[], timestamp_ms=1)
    # then: one operation per key, as the API requires
    assert _ops(diff) == [("CREATE", "home_city", None, "Shenzhen")]


def test_a_key_of_another_category_or_a_retired_fact_is_not_the_current_value():
    # given
    current = [
        {"category": "domain_fact", "key": "home_city", "value": "Paris", "status": "active"},
        {"category": "user_profile", "key": "home_city", "value": "Beijing", "status": "superseded"},
    ]
    # when
    diff = _diff("I live in Shenzhen.", current)
    # then
    assert _ops(diff) == [("CREATE", "home_city", None, "Shenzhen")]


def test_world_facts_update_per_entity_and_relation():
    # given
    current = _current(("fatah.chairperson", "Mahmoud Abbas"), category="domain_fact")
    # when
    diff = _diff("The chairperson of Fatah is Yasser Arafat.", current)
    # then
    assert _ops(diff) == [("UPDATE", "fatah.chairperson", "Mahmoud Abbas", "Yasser Arafat")]
    assert diff.operations[0]["category"] == "domain_fact"


def test_a_restatement_in_other_words_is_no_operation():
    # when
    diff = _diff("I've got a dog.", _current(("pet.dog", "a big pet dog")))
    # then
    assert diff.operations == []
    assert [s.reason for s in diff.skipped] == ["unchanged: already the current value"]


def test_a_change_in_other_words_updates_the_key_it_changes():
    # when
    diff = _diff("I became a flight attendant.", _current(("job", "waitress")))
    # then
    assert _ops(diff) == [("UPDATE", "job", "waitress", "flight attendant")]


def test_a_new_key_that_may_restate_another_goes_to_a_person_with_a_note():
    # given
    facts = extract_facts([Turn("user", "I'm an avid kayaker.", 1)]).facts

    def embed(texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]

    # when
    diff = diff_facts(extracted=facts, current=_current(("likes_kayaking", "likes kayaking")), embed=embed)
    # then
    (op,) = diff.operations
    assert (op["action"], op["key"]) == ("CREATE", "identity.kayaker")
    assert op["confidence"] < 0.7
    assert diff.notes and "likes_kayaking" in diff.notes[0]
