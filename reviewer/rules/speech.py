"""Shared check for the rules that read the evidence quote for what kind of speech it is."""

from __future__ import annotations

import re

from reviewer.rules.base import OperationView, Outcome, escalate, passed
from reviewer.rules.text import Pattern, first_match, normalize

# In mixed-case text, words written all in capitals are names and acronyms ("Alta IF",
# "MAY Ltd"), not speech cues. A quote shouted in capitals throughout is read as it is.
_CAPITALS = re.compile(r"\b[A-Z]{2,}\b")


def _without_acronyms(quote: str) -> str:
    return _CAPITALS.sub(" ", quote) if any(ch.islower() for ch in quote) else quote


def quote_check(op: OperationView, candidates: list[Pattern], *, what: str) -> Outcome:
    hit = first_match(normalize(_without_acronyms(op.quote)), candidates)
    if hit is None:
        return passed(f"no sign of {what} in the evidence")
    return escalate(f"evidence reads as {hit[0].label} ('{hit[1]}'), not as a fact stated by the user")
