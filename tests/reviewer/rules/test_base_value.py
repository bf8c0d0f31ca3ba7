from __future__ import annotations

from reviewer.rules import base_value
from reviewer.rules.base import Verdict
from tests.reviewer.builders import current, op_view, pull_view


def check(**overrides):  # type: ignore[no-untyped-def]
    return base_value.check(pull_view(), op_view(**overrides))


def test_update_on_the_current_value_passes():
    assert check().verdict == Verdict.PASS


def test_update_on_a_stale_base_is_a_conflict_naming_the_current_value():
    outcome = check(current=current("上海", version=4))
    assert outcome.verdict == Verdict.REJECT
    assert outcome.reason == (
        'conflict (409): oldValue "Beijing" is not the current value "上海" (v4); re-read and resubmit'
    )


def test_create_of_an_existing_key_is_a_conflict():
    outcome = check(action="CREATE", old_value=None, current=current("Beijing"))
    assert outcome.verdict == Verdict.REJECT
    assert 'already exists with current value "Beijing"' in outcome.reason


def test_create_of_a_new_key_passes():
    assert check(action="CREATE", old_value=None, current=None).verdict == Verdict.PASS


def test_update_of_a_missing_key_is_a_conflict():
    outcome = check(current=None)
    assert outcome.verdict == Verdict.REJECT
    assert "has no current value" in outcome.reason


def test_delete_on_a_stale_base_is_a_conflict():
    assert check(action="DELETE", new_value=None, current=current("Shanghai")).verdict == Verdict.REJECT
    assert check(action="DELETE", new_value=None, current=current("Beijing")).verdict == Verdict.PASS


def test_structured_values_compare_as_json():
    op = {"old_value": {"city": "Beijing", "since": 2020}, "new_value": {"city": "Shenzhen"}}
    assert check(**op, current=current({"since": 2020, "city": "Beijing"})).verdict == Verdict.PASS
    assert check(**op, current=current({"city": "Beijing"})).verdict == Verdict.REJECT


def test_a_value_already_current_makes_the_base_moot():
    assert check(old_value="Guangzhou", current=current("Shenzhen")).verdict == Verdict.PASS
