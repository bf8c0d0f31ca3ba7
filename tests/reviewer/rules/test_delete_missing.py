from __future__ import annotations

from reviewer.rules import delete_missing
from reviewer.rules.base import Verdict
from tests.reviewer.builders import current, op_view, pull_view


def test_delete_of_a_missing_fact_is_rejected():
    outcome = delete_missing.check(pull_view(), op_view(action="DELETE", new_value=None, current=None))
    assert outcome.verdict == Verdict.REJECT
    assert (
        outcome.reason
        == "DELETE of a missing fact: 'user_profile/home_city' has no active value for 'user-1'"
    )


def test_delete_of_an_active_fact_passes():
    op = op_view(action="DELETE", new_value=None, current=current("Beijing", version=2))
    assert delete_missing.check(pull_view(), op).verdict == Verdict.PASS


def test_other_actions_pass():
    assert delete_missing.check(pull_view(), op_view(current=None)).verdict == Verdict.PASS
