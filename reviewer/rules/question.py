"""Questions stated as facts.

Protects against storing what the user asked rather than said: "Do I like sushi?",
"我是不是对花生过敏？", "…吗". A person decides. Only the clause that states the fact is
read: in "I just started aerial yoga, have you tried it?" the question is the other clause.
"""

from __future__ import annotations

from reviewer.rules.base import OperationView, Outcome, PullView
from reviewer.rules.speech import OWN, quote_check
from reviewer.rules.text import patterns

NAME = "question"

PATTERNS = patterns(
    "a question",
    r"\?\s*[\"')\]]*\s*$",
    r"^(do|does|did|is|are|am|was|were|can|could|should|would|will|shall|have|has) "
    r"(i|you|we|he|she|it|they|my|your)\b",
    r"[吗么呢]\s*[。.!！]?\s*$",
    r"是不是",
    r"是否",
    r"难道",
    r"会不会",
    r"有没有",
    r"要不要",
)


def check(pull: PullView, op: OperationView) -> Outcome:
    return quote_check(op, PATTERNS, what="a question", scope=OWN)
