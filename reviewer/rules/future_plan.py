"""Future plans stated as present facts.

Protects against the seed's "I'm going to work on Mars tomorrow" (我明天要去火星上班):
plans and intentions ("tomorrow", "next month", "going to", 明天, 打算, 下个月) are not yet
true. An operation that states its own valid time (validFrom) is scoped, and passes.
"""

from __future__ import annotations

from reviewer.rules.base import OperationView, Outcome, PullView, passed
from reviewer.rules.speech import quote_check
from reviewer.rules.text import patterns

NAME = "future_plan"

PATTERNS = patterns(
    "a future plan",
    r"\btomorrow\b",
    r"\btonight\b",
    r"\bnext (week|month|year|time|summer|winter|spring|autumn|fall|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)\b",
    # One pattern for the future tense ("will", "I'll", "gonna", "going to" + a verb; "going to
    # the park" is a place), so that a fact that says "will" is supported by "going to".
    r"\b(will|(i|we|you|he|she|they)'ll|gonna|going to (be|have|get|go|do|make|take|move|start|buy|try|work|live|visit|see|study|learn|become|need|"
    r"play|stay|travel|quit|join|retire|marry|meet|open|eat|watch|write|build|leave|come|spend|call|ask|give|"
    r"find|graduate|change|sell|run|apply|adopt|switch|keep|teach|finish|begin|look|hire|fly|drive|use|pay|"
    r"bring|cook|read|train|compete|enter|attend|celebrate|throw|host|plan|retake|return|head))\b",
    r"\bplan(s|ning|ned)? (to|on)\b",
    r"\bintend(s|ing)? to\b",
    r"\babout to\b",
    r"\bsomeday\b",
    r"\bone day\b",
    r"\bin the future\b",
    r"\bthinking (about|of)\b",
    r"\bconsidering\b",
    r"\bhop(e|ing) to\b",
    r"\bwant(s)? to\b",
    r"明天",
    r"后天",
    r"下周",
    r"下个?星期",
    r"下个?月",
    r"明年",
    r"将来",
    r"未来",
    r"打算",
    r"计划",
    r"准备",
    r"将要",
    r"即将",
    r"要去",
    r"想去",
    r"想要",
    r"希望",
    r"下次",
    r"过几天",
    r"今晚",
    r"今天晚上",
    r"这个?周末(要|打算|准备|想)",
    r"等会",
    r"快要",
    r"想(尝|试|学|买|换|搬|养|开|报|考)",
)


def check(pull: PullView, op: OperationView) -> Outcome:
    if op.valid_from is not None:
        return passed(f"scoped in time (validFrom {op.valid_from.isoformat()})")
    return quote_check(op, PATTERNS, what="a future plan")
