"""Duplicate of the current value.

Protects the history from empty versions: a CREATE or UPDATE whose newValue is already the
current value, and that states no other change (importance, valid time), changes nothing.
It is marked no-op: it is excluded from the merge, and other rules' findings on it are kept
for the record but do not decide the KPR. (The `system` proposer's same-value updates adjust
confidence or importance on purpose: see base.is_noop.)
"""

from __future__ import annotations

from reviewer.rules.base import OperationView, Outcome, PullView, Verdict, is_noop, keeps_value, passed, show

NAME = "duplicate"


def check(pull: PullView, op: OperationView) -> Outcome:
    current = op.current
    if current is not None and is_noop(pull, op):
        return Outcome(
            Verdict.PASS,
            f"no-op: {show(current.value)} is already the current value (v{current.version})",
            noop=True,
        )
    if keeps_value(op):
        return passed("keeps the value; changes its confidence, importance or valid time")
    return passed("changes the stored value")
