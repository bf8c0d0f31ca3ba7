from __future__ import annotations

import pytest

from reviewer.rules import protected
from reviewer.rules.base import Verdict
from tests.reviewer.builders import current, op_view, pull_view


@pytest.mark.parametrize(
    ("key", "topic"),
    [("food_allergy", "allergy"), ("allergies", "allergy"), ("过敏源", "allergy"), ("blood_type", "health"),
     ("medical_history", "health"), ("病史", "health"), ("passport_number", "identity"), ("date_of_birth", "identity"),
     ("身份证号", "identity"), ("annual_salary", "finance"), ("bank", "finance"), ("银行", "finance"),
     ("medications", "health"), ("medicine.daily", "health"), ("mental_health", "health"), ("bank_account", "finance"),
     ("bankaccount_number", "finance"), ("online_banking", "finance"), ("taxes", "finance"), ("tax_id", "finance")],
)  # fmt: skip
def test_protected_keys_escalate(key, topic):
    outcome = protected.check(pull_view(), op_view(key=key))
    assert outcome.verdict == Verdict.ESCALATE
    assert outcome.reason == f"protected key ({topic}): '{key}' always needs a person"


@pytest.mark.parametrize("key", ["home_city", "favorite_food", "syntax_style", "家乡", "喜欢的颜色"])
def test_ordinary_keys_pass(key):
    assert protected.check(pull_view(), op_view(key=key)).verdict == Verdict.PASS


@pytest.mark.parametrize(
    "key",
    ["gordon_banks.position_played", "big_yellow_taxi.performer", "taxman.performer",
     "cosimo_ii_de_medici.place_of_death", "the_mentalist.original_broadcaster", "favorite_taxi_company"],
)  # fmt: skip
def test_a_name_that_starts_like_a_protected_word_passes(key):
    # given a key about an entity whose name begins like a protected word (Banks, Taxman, Medici)
    # when the rule checks it, then the name is no protected topic
    assert protected.check(pull_view(), op_view(key=key)).verdict == Verdict.PASS


@pytest.mark.parametrize("value", ["severe peanut allergy", "对花生过敏", {"notes": "Allergic to shrimp"}])
def test_allergy_in_a_value_escalates(value):
    outcome = protected.check(
        pull_view(), op_view(key="notes", old_value="none", new_value=value, current=None)
    )
    assert outcome.verdict == Verdict.ESCALATE


def test_high_importance_escalates():
    assert protected.check(pull_view(), op_view(importance=0.9)).verdict == Verdict.ESCALATE
    assert protected.check(pull_view(), op_view(importance=0.89)).verdict == Verdict.PASS


def test_changing_a_critical_current_fact_escalates():
    outcome = protected.check(pull_view(), op_view(current=current("Beijing", importance=0.95)))
    assert outcome.verdict == Verdict.ESCALATE
    assert "the current value is critical" in outcome.reason


def test_namespace_patterns_replace_the_defaults():
    pull = pull_view(protected_key_patterns=(r"\bhome city\b",), protected_importance=0.99)
    assert protected.check(pull, op_view()).verdict == Verdict.ESCALATE
    assert protected.check(pull, op_view(key="annual_salary")).verdict == Verdict.PASS
    assert protected.check(pull, op_view(key="annual_salary", importance=0.95)).verdict == Verdict.PASS
