"""Base check: the proposer's oldValue must be the current active value.

Protects against lost updates (a KPR written against a value that has changed since) and
silent overwrites: a CREATE of a key that exists, or an UPDATE/DELETE whose base differs from
the current value, is a conflict like a git merge conflict; the feedback names the current
value so the proposer can re-read and resubmit. DELETE of a missing fact is its own rule.
"""

from __future__ import annotations

from memorypr.pulls.models import Action
from reviewer.rules.base import OperationView, Outcome, PullView, is_noop, passed, reject, same_value, show

NAME = "base_value"


def check(pull: PullView, op: OperationView) -> Outcome:
    current = op.current
    if current is not None and is_noop(pull, op):
        return passed(f"base moot: {show(current.value)} is already the current value (v{current.version})")
    if op.action == Action.CREATE:
        if current is None:
            return passed("new key: no current value")
        return reject(
            f"conflict (409): '{op.key}' already exists with current value {show(current.value)} "
            f"(v{current.version}); send an UPDATE with that value as oldValue"
        )
    if current is None:
        if op.action == Action.DELETE:
            return passed("no current value (see delete_missing)")
        return reject(
            f"conflict (409): '{op.key}' has no current value, so oldValue {show(op.old_value)} is stale; "
            "send a CREATE"
        )
    if same_value(op.old_value, current.value):
        return passed(f"base {show(current.value)} matches the current value (v{current.version})")
    return reject(
        f"conflict (409): oldValue {show(op.old_value)} is not the current value {show(current.value)} "
        f"(v{current.version}); re-read and resubmit"
    )
