"""Shared check for the rules that read the evidence for what kind of speech states the fact.

They judge the clause that carries the operation's fact (reviewer.rules.clause), with the
words that govern it, not every sentence of the quote. A cue that the fact itself states
("wants to become a pilot", "will graduate in two years", a key about the user's father) is
what the fact says, not a sign that it is not one. The outcome names the clause and the cue, marked «like this».
"""

from __future__ import annotations

import re

from reviewer.rules.base import OperationView, Outcome, Verdict
from reviewer.rules.clause import Alignment, clause_align, fact_words, part_of_fact
from reviewer.rules.text import Pattern, normalize

# In mixed-case text, words written all in capitals are names and acronyms ("Alta IF",
# "MAY Ltd"), not speech cues. A quote shouted in capitals throughout is read as it is.
_CAPITALS = re.compile(r"\b[A-Z]{2,}\b")

LEAD = "lead"  # the clause and the clauses before it in its sentence
OWN = "own"  # the clause alone


def _without_acronyms(text: str) -> str:
    return _CAPITALS.sub(" ", text) if any(ch.islower() for ch in text) else text


def operation_alignment(op: OperationView) -> Alignment:
    value = op.new_value if op.new_value is not None else op.old_value
    key, words = fact_words(key=op.key, value=value)
    return clause_align(quote=op.quote, key=key, value=words)


def _cue(text: str, candidates: list[Pattern], fact: str) -> tuple[Pattern, str] | None:
    judged = normalize(_without_acronyms(text))
    fact_n = normalize(fact)
    for pattern in candidates:
        if fact_n and pattern.regex.search(fact_n):
            # The fact itself says so ("will graduate in two years", "wants to travel"): a
            # statement of that kind is what supports it.
            continue
        for found in pattern.regex.finditer(judged):
            if not part_of_fact(found.group(0), fact):
                return pattern, found.group(0)
    return None


def cue_span(text: str, cue: str) -> tuple[int, int] | None:
    """Where the cue (found in normalised text) is in the text as written, or None."""
    cue_n = normalize(cue).strip()
    if not cue_n:
        return None
    for start in range(len(text)):
        if text[start].isspace():
            continue
        for end in range(start + 1, min(len(text), start + len(cue) + 8) + 1):
            if normalize(text[start:end]).strip() == cue_n:
                return start, end
    return None


def mark(text: str, cue: str) -> str:
    """The text with the cue marked «…» where it occurs (case and width ignored)."""
    span = cue_span(text, cue)
    if span is None:
        return text
    start, end = span
    return f"{text[:start]}«{text[start:end]}»{text[end:]}"


def quote_check(
    op: OperationView,
    candidates: list[Pattern],
    *,
    what: str,
    scope: str = LEAD,
    tail: list[Pattern] | None = None,
) -> Outcome:
    alignment = operation_alignment(op)
    key, value = fact_words(key=op.key, value=op.new_value if op.new_value is not None else op.old_value)
    fact = f"{key} {value}"
    judged = alignment.own() if scope == OWN else alignment.lead()
    hit = _cue(judged, candidates, fact)
    if hit is None and tail:
        judged = alignment.tail()
        hit = _cue(judged, tail, fact)
    clause = alignment.own().strip()
    where = "the evidence" if alignment.whole else f"the clause “{clause}”"
    if hit is None:
        return Outcome(
            Verdict.PASS, f"no sign of {what} in {where}", clause=None if alignment.whole else clause
        )
    pattern, cue = hit
    marked = mark(judged.strip(), cue)
    if alignment.whole:
        reason = f"evidence reads as {pattern.label} ('{cue}'): “{marked}”, not as a fact stated by the user"
    else:
        reason = (
            f"the clause “{clause}” that states the fact reads as {pattern.label} ('{cue}'): “{marked}”, "
            "not as a fact stated by the user"
        )
    return Outcome(Verdict.ESCALATE, reason, clause=clause, cue=cue)
