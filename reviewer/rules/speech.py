"""Shared check for the rules that read the evidence quote for what kind of speech it is."""

from __future__ import annotations

from reviewer.rules.base import OperationView, Outcome, escalate, passed
from reviewer.rules.text import Pattern, first_match, normalize


def quote_check(op: OperationView, candidates: list[Pattern], *, what: str) -> Outcome:
    hit = first_match(normalize(op.quote), candidates)
    if hit is None:
        return passed(f"no sign of {what} in the evidence")
    return escalate(f"evidence reads as {hit[0].label} ('{hit[1]}'), not as a fact stated by the user")
