"""DELETE of a missing fact.

Protects against deletes that do nothing or that target the wrong key (a typo, another
subject, a fact already retracted): there must be an active fact to retract.
"""

from __future__ import annotations

from memorypr.pulls.models import Action
from reviewer.rules.base import OperationView, Outcome, PullView, passed, reject

NAME = "delete_missing"


def check(pull: PullView, op: OperationView) -> Outcome:
    if op.action != Action.DELETE:
        return passed("not a DELETE")
    if op.current is None:
        return reject(
            f"DELETE of a missing fact: '{op.category}/{op.key}' has no active value for '{pull.subject}'"
        )
    return passed(f"deletes the active v{op.current.version}")
