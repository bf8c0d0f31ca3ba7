"""The importance gate: how much a statement deserves long-term memory, 0..1 (keep ≥ 0.7).

A fact starts from the importance of what it is about (an allergy more than a taste in
tea) and is discounted by how it was said: a question is no statement, a joke or a
hypothetical is not a fact, a future plan is not yet true, someone else's fact is not the
user's, a hedge is weak. Markers are read in the sentence's own words, with the names it
carries masked out, so "Will Smith" is no future tense and "Alta IF" no hypothetical.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

IMPORTANCE_GATE = 0.7

_PEOPLE_EN = (
    r"friends?|wife|husband|partner|boyfriend|girlfriend|brother|sister|mom|mum|mother|dad|father|parents|"
    r"son|daughter|kids?|colleagues?|coworkers?|boss|roommate|neighbou?r|cousin|uncle|aunt"
)
_PEOPLE_ZH = r"朋友|妈妈|妈|爸爸|爸|老婆|老公|妻子|丈夫|女朋友|男朋友|哥哥|姐姐|弟弟|妹妹|儿子|女儿|同事|老板|室友|邻居"


@dataclass(frozen=True)
class Marker:
    label: str
    factor: float
    regex: re.Pattern[str]


def _markers(label: str, factor: float, *sources: str) -> list[Marker]:
    return [Marker(label, factor, re.compile(source, re.IGNORECASE)) for source in sources]


SENTENCE_MARKERS = (
    _markers(
        "a question",
        0.0,
        r"[?？]\s*[\"'”’)]*\s*$",
        r"^\s*(?:do|does|did|is|are|am|was|were|can|could|should|would|have|has)\s+(?:i|you|we|my)\b",
        r"[吗么呢]\s*[。.!！]?\s*$",
        r"是不是|是否|难道|会不会|有没有",
    )
    + _markers(
        "a hypothetical",
        0.3,
        r"\bif\b",
        r"\bsuppos(?:e|ing)\b",
        r"\bimagine\b",
        r"\bpretend",
        r"\bi wish\b",
        r"\bwould\b",
        r"\bi'?d (?:love|like|want)\b",
        r"假如|如果|要是|假设|想象|但愿|万一",
    )
    + _markers(
        "reported speech",
        0.2,
        # Another person as the subject of what they say, do or like ("my friend says", "my
        # sister's dog"), not an object of the user's own statement ("I hang out with my
        # friends"), nor who the user's people are ("my father is in the army", "my son's name is John").
        rf"\bmy (?:best |older |younger |little |big )?(?:{_PEOPLE_EN})(?:'s\b(?!\s+(?:first\s+|full\s+)?names?\b)|(?! and i\b)\s+(?:\w+ly\s+)?"
        r"(?:says?|said|thinks?|thought|told|tells|likes?|loves?|lives?|lived|works?|worked|"
        r"does|did|wants?|wanted|gets?|got|makes?|made|goes|went|can|could|will|would|"
        r"believes?|feels?|felt|calls?|called|plays?|played)\b)",
        r"\b(?:he|she|they) (?:says|said|thinks|told|likes|loves|lives|works)\b",
        r"\btold me\b",
        r"\bi heard\b",
        r"\baccording to\b",
        rf"我的?(?:{_PEOPLE_ZH})(?!和我)(?!跟我)",
        r"(?:他|她|他们|她们|别人|有人)(?:说|觉得|认为|告诉)",
        r"听说|据说",
    )
    + _markers(
        "a future plan",
        0.5,
        r"\btomorrow\b",
        r"\bnext (?:week|month|year|summer|winter|spring|autumn|fall|time)\b",
        r"\bgoing to\b",
        r"\bgonna\b",
        r"\bwill\b",
        r"\bi'll\b",
        r"\bplan(?:s|ning)? (?:to|on)\b",
        r"\bthinking (?:about|of)\b",
        r"\bsomeday\b",
        r"明天|后天|下周|下个?星期|下个?月|明年|将来|打算|准备|计划|将要|即将|要去|想去",
    )
    + _markers(
        "a hedge",
        0.6,
        r"\bmaybe\b",
        r"\bmight\b",
        r"\bperhaps\b",
        r"\bprobably\b",
        r"\bnot sure\b",
        r"\bi guess\b",
        r"也许|可能|或许|大概|不确定|说不定",
    )
)

# Jokes are often flagged after the fact ("I moved to Mars. Just kidding!"): these are read
# in the whole sentence and the one after it.
JOKE_MARKERS = _markers(
    "a joke",
    0.1,
    r"\bjok(?:e|es|ed|ing)\b",
    r"\bkidding\b",
    r"\bj/?k\b",
    r"\blol\b",
    r"\blmao\b",
    r"\bha(?:ha)+\b",
    r"\bhehe\b",
    r"\byeah,? right\b",
    r"[😂🤣😜😝😛🙃😏]",
    r"开玩笑|玩笑|哈哈|嘿嘿|逗你|说着玩|闹着玩|骗你的|吹牛|才怪|呵呵",
)

# What the seed's rule-based scorer raises: the user asking to be remembered.
_EMPHASIS = re.compile(r"\bremember\b|\bimportant\b|\bdon't forget\b|记住|记得|重要|别忘", re.IGNORECASE)


@dataclass(frozen=True)
class Score:
    importance: float
    reasons: tuple[str, ...]

    @property
    def passes(self) -> bool:
        return self.importance >= IMPORTANCE_GATE


def mask(text: str, spans: list[tuple[int, int]]) -> str:
    """The text with the given spans (names, values) blanked out, same length."""
    chars = list(text)
    for start, end in spans:
        for index in range(max(0, start), min(len(chars), end)):
            chars[index] = " "
    return "".join(chars)


def score(
    *, base: float, sentence: str, following: str = "", spans: list[tuple[int, int]] | None = None
) -> Score:
    """The importance of a fact of base importance `base` stated in `sentence`."""
    own_words = mask(sentence, spans or [])
    value, reasons = base, []
    seen: set[str] = set()
    for marker in SENTENCE_MARKERS:
        if marker.label in seen:
            continue
        found = marker.regex.search(own_words)
        if found:
            seen.add(marker.label)
            value *= marker.factor
            reasons.append(f"reads as {marker.label} ('{found.group(0).strip()}')")
    for marker in JOKE_MARKERS:
        # Laughter sticks to the words it follows ("搬到火星了哈哈"): read the whole sentence.
        found = marker.regex.search(sentence) or marker.regex.search(following)
        if found:
            value *= marker.factor
            reasons.append(f"reads as {marker.label} ('{found.group(0).strip()}')")
            break
    if not reasons and _EMPHASIS.search(own_words):
        value = min(1.0, value + 0.1)
        reasons.append("the user asked for it to be remembered")
    return Score(importance=round(value, 3), reasons=tuple(reasons))
