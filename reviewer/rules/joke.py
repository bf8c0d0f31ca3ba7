"""Jokes and sarcasm.

Protects against the seed's first failure mode: a user's joke stored as truth ("我明天要去
火星上班", "just kidding", "yeah right", 开玩笑, 哈哈, 才怪). A person decides. The cue is
looked for in the clause that states the fact, the words before it in its sentence, and what
follows it up to the end of the next sentence ("I live on Mars. Just kidding!"); laughter in
an earlier sentence answers the other speaker, not the fact.
"""

from __future__ import annotations

from reviewer.rules.base import OperationView, Outcome, PullView
from reviewer.rules.speech import quote_check
from reviewer.rules.text import patterns

NAME = "joke"

PATTERNS = patterns(
    "a joke",
    r"\bjok(e|es|ed|ing)\b",
    r"\bkidding\b",
    r"\bjust messing\b",
    r"\bj/?k\b",
    r"\blol\b",
    r"\blmao\b",
    r"\brofl\b",
    r"\bha(ha)+\b",
    r"\bhehe\b",
    r"[😂🤣😜😝😛]",
    r"开玩笑",
    r"玩笑",
    r"哈哈",
    r"嘿嘿",
    r"逗你",
    r"说着玩",
    r"闹着玩",
    r"骗你的",
    r"吹牛",
) + patterns(
    "sarcasm",
    r"\bsarcas",
    r"\byeah,? right\b",
    r"\bas if\b",
    r"(^|\s)/s\b",
    r"[🙃😏]",
    r"才怪",
    r"呵呵",
    r"讽刺",
    r"反话",
)


def check(pull: PullView, op: OperationView) -> Outcome:
    return quote_check(op, PATTERNS, what="a joke or sarcasm", tail=PATTERNS)
