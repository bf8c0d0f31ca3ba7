from __future__ import annotations

from reviewer.rules import duplicate
from reviewer.rules.base import Verdict
from tests.reviewer.builders import current, op_view, pull_view


def test_new_value_equal_to_the_current_one_is_a_noop():
    outcome = duplicate.check(pull_view(), op_view(current=current("Shenzhen", version=2)))
    assert (outcome.verdict, outcome.noop) == (Verdict.PASS, True)
    assert outcome.reason == 'no-op: "Shenzhen" is already the current value (v2)'


def test_create_repeating_the_current_value_is_a_noop():
    op = op_view(action="CREATE", old_value=None, new_value="深圳", current=current("深圳"))
    assert duplicate.check(pull_view(), op).noop


def test_a_change_is_not_a_noop():
    assert not duplicate.check(pull_view(), op_view()).noop
    assert not duplicate.check(pull_view(), op_view(action="CREATE", old_value=None, current=None)).noop


def test_delete_is_never_a_noop():
    op = op_view(action="DELETE", new_value=None, current=current("Beijing"))
    assert not duplicate.check(pull_view(), op).noop


def test_a_stated_change_of_importance_or_valid_time_is_not_a_noop():
    from datetime import UTC, datetime

    same = {"new_value": "Shenzhen", "current": current("Shenzhen", importance=0.5)}
    assert duplicate.check(pull_view(), op_view(**same, importance=0.5)).noop
    assert not duplicate.check(pull_view(), op_view(**same, importance=0.8)).noop
    until = datetime(2027, 1, 1, tzinfo=UTC)
    outcome = duplicate.check(pull_view(), op_view(**same, valid_to=until))
    assert (outcome.noop, outcome.reason) == (
        False,
        "keeps the value; changes its confidence, importance or valid time",
    )


def test_the_system_proposers_same_value_updates_are_changes():
    # consolidation lowers the confidence of two conflicting facts without touching their values
    op = op_view(old_value="Shenzhen", new_value="Shenzhen", confidence=0.6, current=current("Shenzhen"))
    assert duplicate.check(pull_view(), op).noop
    assert not duplicate.check(pull_view(agent_name="system"), op).noop
