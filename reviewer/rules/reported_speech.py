"""Reported speech: facts about someone else, or someone else's word for them.

Protects the subject's memory from other people's facts: "my friend likes sushi", "she said",
"I heard that", "…, according to my mom", 我朋友, 听说, 据说. Read in the clause that states the
fact and the words that govern it. "My wife and I moved", "My partner Alex and I went hiking"
and "seeing my kids at the beach was the best" are about the user and pass; so does a fact
whose key or value names the person ("my father was a pilot" for the key `father`).
"""

from __future__ import annotations

from reviewer.rules.base import OperationView, Outcome, PullView
from reviewer.rules.speech import quote_check
from reviewer.rules.text import patterns

NAME = "reported_speech"

_PEOPLE_EN = (
    r"friends?|wife|husband|partner|boyfriend|girlfriend|brother|sister|mom|mum|mother|dad|father|parents|"
    r"son|daughter|kids?|children|colleagues?|coworkers?|co-workers?|boss|roommate|neighbou?r|cousin|uncle|aunt"
)
_PEOPLE_ZH = r"朋友|妈妈|妈|爸爸|爸|老婆|老公|妻子|丈夫|女朋友|男朋友|哥哥|哥|姐姐|姐|弟弟|弟|妹妹|妹|儿子|女儿|同事|老板|室友|邻居"
_MY_PERSON = rf"\bmy (best |older |younger |little |big |ex-?)?({_PEOPLE_EN})\b"
# "my friend Sam and I", "my wife and me": the user is in the subject.
_NOT_WITH_ME = r"(?!( [a-z]+)? and (i|me)\b)"
_VERBS = (
    r"is|are|was|were|says|said|thinks|thought|told|believes|likes|loves|hates|lives|lived|works|worked|"
    r"has|had|wants|knows|keeps saying|always says"
)

PATTERNS = patterns(
    "reported speech",
    # The other person is the subject of the clause: at its start, or followed by a verb.
    rf"^\W*((and|but|so|also|well|oh|yes|yeah) )?{_MY_PERSON}('s?)?{_NOT_WITH_ME}",
    rf"{_MY_PERSON}(('s|s')( [a-z]+){{1,2}})?{_NOT_WITH_ME} ({_VERBS})\b",
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
# Attribution that follows the statement it governs: "…, according to my mom", "…, she said".
TRAILING = patterns(
    "reported speech",
    r"(^|[,;:，；：]\s*)(according to|or so (i|they) (heard|say)|(he|she|they|someone) (says|said|told me))\b",
    r"(^|[,;:，；：]\s*)(据说|听说|(他|她|他们|她们|别人|有人)(说|告诉我))",
)


def check(pull: PullView, op: OperationView) -> Outcome:
    return quote_check(op, PATTERNS, what="reported speech", tail=TRAILING)
