"""Reported speech: facts about someone else.

Protects the subject's memory from other people's facts: "my friend likes sushi", "she said",
"I heard that", 我朋友, 听说, 据说. "My wife and I moved" is about the user and passes.
"""

from __future__ import annotations

from reviewer.rules.base import OperationView, Outcome, PullView
from reviewer.rules.speech import quote_check
from reviewer.rules.text import patterns

NAME = "reported_speech"

_PEOPLE_EN = (
    r"friends?|wife|husband|partner|boyfriend|girlfriend|brother|sister|mom|mum|mother|dad|father|parents|"
    r"son|daughter|kids?|colleagues?|coworkers?|co-workers?|boss|roommate|neighbou?r|cousin|uncle|aunt"
)
_PEOPLE_ZH = r"朋友|妈妈|妈|爸爸|爸|老婆|老公|妻子|丈夫|女朋友|男朋友|哥哥|哥|姐姐|姐|弟弟|弟|妹妹|妹|儿子|女儿|同事|老板|室友|邻居"

PATTERNS = patterns(
    "reported speech",
    rf"\bmy (best )?({_PEOPLE_EN})('s)?\b(?! and i\b)(?! and me\b)",
    r"\b(he|she|they) (says|said|thinks|thought|told|likes|loves|lives|works)\b",
    r"\b(someone|somebody|people) (says|said|told)\b",
    r"\btold me\b",
    r"\bi heard\b",
    r"\baccording to\b",
    rf"(?<!和)(?<!跟)我的?({_PEOPLE_ZH})(?!和我)(?!跟我)",
    r"(他|她|他们|她们|别人|有人)(说|觉得|认为|告诉)",
    r"听说",
    r"据说",
    r"告诉我",
)


def check(pull: PullView, op: OperationView) -> Outcome:
    return quote_check(op, PATTERNS, what="reported speech")
