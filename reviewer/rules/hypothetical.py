"""Hypotheticals and hedges stated as facts.

Protects against storing what the user only imagined or was unsure of: "if I lived in
Paris…", "suppose", "maybe", 假如, 如果, 要是, 也许. A person decides.
"""

from __future__ import annotations

from reviewer.rules.base import OperationView, Outcome, PullView
from reviewer.rules.speech import quote_check
from reviewer.rules.text import patterns

NAME = "hypothetical"

PATTERNS = patterns(
    "a hypothetical",
    r"\bif\b",
    r"\bsuppos(e|ing)\b",
    r"\bimagine\b",
    r"\bhypothetical(ly)?\b",
    r"\bpretend(ing)?\b",
    r"\bin theory\b",
    r"\bi wish\b",
    r"\bdream(ing)? (of|about)\b",
    r"假如",
    r"如果",
    r"假设",
    r"要是",
    r"万一",
    r"设想",
    r"想象",
    r"但愿",
) + patterns(
    "uncertain",
    r"\bmaybe\b",
    r"\bmight\b",
    r"\bperhaps\b",
    r"\bprobably\b",
    r"\bnot sure\b",
    r"也许",
    r"可能",
    r"或许",
    r"大概",
    r"不确定",
    r"说不定",
)


def check(pull: PullView, op: OperationView) -> Outcome:
    return quote_check(op, PATTERNS, what="a hypothetical")
