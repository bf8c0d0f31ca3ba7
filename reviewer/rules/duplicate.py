"""Duplicate of the current value.

Protects the history from empty versions: a CREATE or UPDATE whose newValue is already the
current value changes nothing. It is marked no-op: it is excluded from the merge, and other
rules' findings on it are kept for the record but do not decide the KPR.
"""

from __future__ import annotations

from memorypr.pulls.models import Action
from reviewer.rules.base import OperationView, Outcome, PullView, Verdict, passed, same_value, show

NAME = "duplicate"


def check(pull: PullView, op: OperationView) -> Outcome:
    current = op.current
    if op.action != Action.DELETE and current is not None and same_value(op.new_value, current.value):
        return Outcome(
            Verdict.PASS,
            f"no-op: {show(current.value)} is already the current value (v{current.version})",
            noop=True,
        )
    return passed("changes the stored value")
