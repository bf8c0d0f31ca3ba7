"""Confidence floor and approve bar.

Protects against storing what the proposer itself doubts: below the floor (default 0.3)
the operation is rejected; below the approve bar (default 0.7) a person decides. An update
that keeps the value and lowers its confidence (consolidation of conflicting facts) moves in
the cautious direction: its confidence is the target, not a doubt, and it passes.
"""

from __future__ import annotations

from reviewer.rules.base import (
    OperationView,
    Outcome,
    PullView,
    escalate,
    is_noop,
    keeps_value,
    passed,
    reject,
)

NAME = "confidence"


def check(pull: PullView, op: OperationView) -> Outcome:
    floor, bar = pull.policy.confidence_reject_floor, pull.policy.confidence_approve_bar
    current = op.current
    if (
        current is not None
        and keeps_value(op)
        and not is_noop(pull, op)
        and op.confidence <= current.confidence
    ):
        return passed(
            f"keeps the value and lowers its confidence {current.confidence:.2f} → {op.confidence:.2f}"
        )
    if op.confidence < floor:
        return reject(f"confidence {op.confidence:.2f} is below the floor {floor:.2f}")
    if op.confidence < bar:
        return escalate(f"confidence {op.confidence:.2f} is below the approve bar {bar:.2f}")
    return passed(f"confidence {op.confidence:.2f} ≥ {bar:.2f}")
