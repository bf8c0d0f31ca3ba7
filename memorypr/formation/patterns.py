"""The rule tables: first-person statements (English, Chinese) and templated world facts.

Each rule reads one sentence and yields (key, value, polarity) with the span of the value,
so the importance gate can read the sentence without the names in it. `polarity` "unset"
means the user said something stopped being true ("I no longer live in Beijing").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from memorypr.formation.quotes import NAME_STOP
from memorypr.formation.text import singular, slug

Polarity = Literal["set", "unset"]

USER_PROFILE = "user_profile"
SYSTEM_PREFERENCE = "system_preference"
DOMAIN_FACT = "domain_fact"


@dataclass(frozen=True)
class Found:
    category: str
    key: str
    value: str | None
    polarity: Polarity
    base: float
    spans: list[tuple[int, int]]
    entity: str | None = None
    relation: str = ""


# --- value clean-up ---------------------------------------------------------------------

_EN_TRAILERS = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\s+(?:last|this|past|earlier this)\s+(?:week|month|year|summer|winter|spring|fall|autumn)$",
        r"\s+(?:a|an|one|two|three|four|five|six|a few|few|several|a couple of|\d+)\s+(?:\w+\s+)?"
        r"(?:days?|weeks?|months?|years?)\s+ago$",
        r"\s+(?:recently|(?:right\s+|just\s+|as of\s+)?now|lately|these days|nowadays|already|again|anymore|any more|too|as well|"
        r"actually|though|instead|full[- ]time|part[- ]time|permanently|for good|for now|at the moment|"
        r"during the day|on the side)$",
        # "I'm a nurse myself", but not "… good about myself"
        r"(?<!\babout)(?<!\bof)(?<!\bfor)(?<!\bwith)(?<!\bto)(?<!\bby)(?<!\bin)(?<!\bon)(?<!\bat)"
        r"\s+(?:myself|ourselves)$",
        r"\s+in\s+\d{4}$",
        r"\s+(?:once|twice|(?:a few|a couple of|several|many|a lot of|\w+)\s+times)$",
        r"\s+(?:sometimes|often)$",
        r"\s+(?:yesterday|today|tonight|last night|this morning|this afternoon|this evening|the other day)$",
        # "do math like a 10 year old": a comparison, not the thing done
        r"\s+like\s+an?\s+.*$",
        r"\s+(?:with|for|because|since|and|but|so|where|which|who|when|after|before|from)\b.*$",
        r"^(?:the city of|the town of|a city called)\s+",
    )
]
_EN_EDGE = " \t\"'“”‘’()[]"
_PRONOUNS = frozenset({
    "you", "it", "that", "this", "them", "him", "her", "me", "us", "those", "these", "everything",
    "nothing", "all",
})  # fmt: skip
# "our local supermarket", "this country": whose, or which, the sentence does not say.
_LEANS_ON_SOMEONE = re.compile(r"^(?:our|their|his|her|its|your|this|that|these|those)\b", re.IGNORECASE)
_ZH_PRONOUNS = frozenset(
    {"它", "它们", "他", "她", "他们", "她们", "这", "那", "这个", "那个", "这些", "那些", "这样", "那样"}
)
_GERUND = re.compile(
    r"^(?:to\s+)?(?:drinking|eating|playing|watching|reading|listening to|doing|"
    r"drink|eat|play|watch|read|listen to)\s+",
    re.IGNORECASE,
)


# "Johnson and Johnson", "Barnes and Noble": two capitalised words joined by "and" are one name,
# which the "and …" trailer must not cut ("Google and I love it" still ends at "Google").
_NAME_AND_NAME = re.compile(r"\b[A-Z][\w'’.-]*\s+and\s+(?!I\b|I['’])[A-Z][\w'’.-]*")
_JOINED = "\x00and\x00"


# Pairs said as one thing ("rock and roll", "peace and quiet", "R&B"): neither a list of two
# things to split, nor a trailing "and …" clause to cut.
_BINOMIAL_TEXT = """rock/roll peace/quiet hustle/bustle rhythm/blues salt/pepper fish/chips mac/cheese
    macaroni/cheese arts/crafts washer/dryer pros/cons bread/butter peanut_butter/jelly dungeons/dragons
    black/white trial/error rest/relaxation sweet/sour hide/seek bed/breakfast surf/turf ebb/flow
    odds/ends nuts/bolts ups/downs cookies/cream fun/games ham/cheese spaghetti/meatballs
    chicken/waffles biscuits/gravy r/b b/b pb/j out/about"""
_AND = r"\s*(?:&|\s(?:and|n|'n'|’n’)\s)\s*"
_BINOMIAL = re.compile(
    r"\b(?:"
    + "|".join(pair.replace("_", r"\s+").replace("/", _AND) for pair in _BINOMIAL_TEXT.split())
    # letters joined by "&" are one name: "D&D", "AT&T", "H&M"
    + r"|(?-i:[A-Z]{1,3}&[A-Z]{1,3})"
    + r")\b",
    re.IGNORECASE,
)
# A title of two capitalised words joined by "and", between "the" and what it is: "the Fast and
# Furious movies" (where "I love Paris and Rome" stays a list of two).
_TITLE_PAIR = re.compile(r"(?<=\bthe\s)(?-i:[A-Z][\w'’-]*)\s+and\s+(?-i:[A-Z][\w'’-]*)(?=\s+(?-i:[a-z]))")
_HIDDEN = str.maketrans({" ": "\x02", "\t": "\x02", "&": "\x03"})
_SHOWN = str.maketrans({"\x02": " ", "\x03": "&"})


def binomials_joined(text: str) -> str:
    """The text with each pair said as one thing made one word (of the same length): no list
    split or clean-up cuts it. `binomials_shown` gives the text back. (Quoted titles are made one
    word in the whole sentence before any rule reads it: `memorypr.formation.quotes`.)"""
    hidden = _BINOMIAL.sub(lambda pair: pair.group(0).translate(_HIDDEN), text)
    return _TITLE_PAIR.sub(lambda pair: pair.group(0).translate(_HIDDEN), hidden)


def binomials_shown(text: str) -> str:
    return text.translate(_SHOWN)


# How sure the user is, said before the value: "my favorite genre is probably death metal".
_EN_HEDGES = re.compile(
    r"^(?:probably|definitely|maybe|perhaps|actually|honestly|basically)\s+", re.IGNORECASE
)


def clean_en(raw: str) -> str:
    value = binomials_joined(_EN_HEDGES.sub("", raw.strip(_EN_EDGE + ".,;:!?")))
    value = _NAME_AND_NAME.sub(lambda name: re.sub(r"\s+and\s+", f" {_JOINED} ", name.group(0)), value)
    changed = True
    while changed and value:
        changed = False
        for trailer in _EN_TRAILERS:
            shorter = trailer.sub("", value).strip(_EN_EDGE + ".,;:!?")
            if shorter != value:
                value, changed = shorter, True
    return binomials_shown(value.replace(_JOINED, "and"))[:120]


_ZH_TRAILERS = re.compile(r"(?:了|啦|呢|呀|哦|吧|啊|去了|住|定居|生活|工作)+$")


def clean_zh(raw: str) -> str:
    return _ZH_TRAILERS.sub("", raw.strip(" ，。,.!！?？；;、\"'“”")).strip()[:60]


# --- rules --------------------------------------------------------------------------------

Builder = Callable[[re.Match[str]], Found | None]


@dataclass(frozen=True)
class Rule:
    name: str
    regex: re.Pattern[str]
    build: Builder


def _span(match: re.Match[str], group: str = "v") -> list[tuple[int, int]]:
    return [match.span(group)] if match.group(group) is not None else []


_LIVE_IN = r"\bI\s+(?:(?:now|currently|still|actually|also|just|really)\s+)*live\s+in\s+"
_DWELLINGS = (
    r"(?:apartment|flat|house|home|condo|condominium|studio|loft|dorm|dormitory|trailer|cabin|mansion|townhouse|"
    r"bungalow|cottage|duplex|villa|tent|van|rv|shack|farmhouse|igloo)s?\b"
)
# "I live in a two bedroom apartment": a dwelling, not a city.
_DWELLING = re.compile(rf"^(?:an?|my|our|the)\s+(?:[\w-]+\s+){{0,4}}?{_DWELLINGS}", re.IGNORECASE)


def _home_or_city(match: re.Match[str]) -> Found | None:
    found = _simple("home_city", base=0.8)(match)
    if found is not None and _DWELLING.match(found.value or ""):
        return Found(found.category, "home", found.value, found.polarity, found.base, found.spans)
    return found


def _simple(
    key: str, *, category: str = USER_PROFILE, base: float, polarity: Polarity = "set", zh: bool = False
) -> Builder:
    def build(match: re.Match[str]) -> Found | None:
        value = (clean_zh if zh else clean_en)(match.group("v"))
        if not value or value.lower() in _PRONOUNS or _LEANS_ON_SOMEONE.match(value):
            return None
        return Found(category, key, value, polarity, base, _span(match))

    return build


def _likes(*, negative: bool, zh: bool = False, verb: str = "") -> Builder:
    def build(match: re.Match[str]) -> Found | None:
        thing = clean_zh(match.group("v")) if zh else _GERUND.sub("", clean_en(match.group("v")))
        if not thing or thing.lower() in _PRONOUNS or thing in _ZH_PRONOUNS or thing.startswith("的"):
            return None
        if zh:
            value = f"不再喜欢{thing}" if negative else f"喜欢{thing}"
        else:
            value = f"{verb or ('does not like' if negative else 'likes')} {thing}"
        return Found(USER_PROFILE, f"likes_{singular(slug(thing))}", value, "set", 0.7, _span(match))

    return build


def _allergy(*, unset: bool, zh: bool = False) -> Builder:
    def build(match: re.Match[str]) -> Found | None:
        thing = clean_zh(match.group("v")) if zh else clean_en(match.group("v"))
        if not thing or thing.lower() in _PRONOUNS or thing in _ZH_PRONOUNS:
            return None
        key = f"allergy.{singular(slug(thing))}"
        if unset:
            # The key names the allergen; whatever wording the value had, it stops being true.
            return Found(USER_PROFILE, key, None, "unset", 0.95, _span(match))
        value = f"对{thing}过敏" if zh else f"allergic to {thing}"
        return Found(USER_PROFILE, key, value, "set", 0.95, _span(match))

    return build


def _rule(name: str, pattern: str, build: Builder, *, flags: int = re.IGNORECASE) -> Rule:
    return Rule(name, re.compile(pattern, flags), build)


_V = r"(?P<v>[^,.;!?\n]+)"  # an English value: up to the clause's end, trimmed afterwards
_SHIFT = r"(?:full[- ]?time|part[- ]?time|nights|weekends)"  # "I work part time at Burger King"
_CAP = rf"(?P<v>(?-i:[A-Z0-9][\w&'’.{NAME_STOP}-]*)(?:\s+(?-i:[A-Z0-9&][\w&'’.{NAME_STOP}-]*|of|de|the|and))*)"  # a name
_ZV = r"(?P<v>[^\s，。,.!！?？；;、的了]+)"  # a Chinese value: up to punctuation

EN_RULES: list[Rule] = [
    # Home: unset before set, so "I moved from Beijing to Shenzhen" yields both in order.
    _rule("home_city.unset", rf"\bI\s+(?:no longer|don't|do not)\s+live\s+in\s+{_V}", _simple("home_city", base=0.8, polarity="unset")),
    _rule("home_city.moved_from", r"\bI(?:'ve| have)?\s+(?:just\s+)?moved\s+(?:away\s+)?(?:out of|from)\s+(?P<v>[^,.;!?\n]+?)(?=\s+to\b|[,.;!?\n]|$)", _simple("home_city", base=0.8, polarity="unset")),
    _rule("home_city.moved", rf"\b(?:I|we|my family and I|my \w+ and I)(?:'ve| have)?\s+(?:just\s+|recently\s+|finally\s+|already\s+)?(?:moved|relocated)\s+(?:back\s+)?(?:(?:out of|from)\s+[^,.;!?\n]+?\s+)?to\s+{_V}", _simple("home_city", base=0.8)),
    _rule("home_city.live", rf"{_LIVE_IN}{_V}", _home_or_city),
    # "I live in an apartment in Chicago": the dwelling is `home` (above), the city this
    _rule("home_city.dwelling_in", rf"{_LIVE_IN}(?:an?|my|our)\s+[^,.;!?\n]*?\b{_DWELLINGS}\s+in\s+{_CAP}", _simple("home_city", base=0.8)),
    _rule("home_city.living", rf"\bI(?:'m| am)\s+(?:now\s+|currently\s+)?(?:living|based)\s+in\s+{_V}", _simple("home_city", base=0.8)),
    # Allergies: protected, so importance is the highest.
    _rule("allergy.unset", rf"\bI(?:'m| am)\s+(?:no longer|not)\s+allergic\s+to\s+{_V}", _allergy(unset=True)),
    _rule("allergy.set", rf"\bI(?:'m| am)\s+(?:very\s+|severely\s+|seriously\s+|highly\s+|also\s+)?allergic\s+to\s+{_V}", _allergy(unset=False)),
    _rule("allergy.have", r"\bI\s+have\s+an?\s+(?:severe\s+|serious\s+)?(?P<v>[\w -]+?)\s+allergy\b", _allergy(unset=False)),
    # Identity and work.
    _rule("name", rf"\bmy name(?: is|'s|’s)\s+{_CAP}", _simple("name", base=0.85)),
    _rule("name.called", rf"\b(?:call me|I(?:'m| am) called)\s+{_CAP}", _simple("name", base=0.85)),
    _rule("employer.unset", rf"\bI\s+(?:no longer|don't|do not)\s+work\s+(?:at|for)\s+{_V}", _simple("employer", base=0.8, polarity="unset")),
    _rule("employer.left", rf"\bI(?:'ve| have)?\s+(?:just\s+)?(?:left|quit)\s+(?:my job at\s+)?{_CAP}", _simple("employer", base=0.8, polarity="unset")),
    _rule("employer.work", rf"\bI\s+(?:(?:now|currently|still|also|just)\s+)?work\s+(?:{_SHIFT}\s+)?(?:at|for)\s+{_V}", _simple("employer", base=0.8)),
    _rule("employer.working", rf"\bI(?:'m|’m| am|'ve been|’ve been| have been)\s+(?:(?:now|currently|still|also|just|actually)\s+)?working\s+(?:{_SHIFT}\s+)?(?:at|for)\s+{_V}", _simple("employer", base=0.8)),
    _rule("employer.joined", rf"\bI(?:'ve| have)?\s+(?:just\s+)?joined\s+{_CAP}", _simple("employer", base=0.8)),
    # How the assistant should answer.
    _rule("reply_language", r"\b(?:please\s+)?(?:always\s+)?(?:reply|answer|respond|write|talk|speak)\s+(?:to me\s+)?in\s+(?P<v>English|Chinese|Mandarin|Cantonese|Japanese|Korean|French|German|Spanish|Italian|Portuguese|Russian|Arabic)\b", _simple("reply_language", category=SYSTEM_PREFERENCE, base=0.75)),
]  # fmt: skip

ZH_RULES: list[Rule] = [
    _rule("home_city.unset", rf"我(?:们|家)?(?:已经)?不(?:再)?住在{_ZV}", _simple("home_city", base=0.8, polarity="unset", zh=True)),
    _rule("home_city.live", rf"我(?:们|家)?(?:现在|目前|一直|已经|还)*(?:住在|定居在|生活在){_ZV}", _simple("home_city", base=0.8, zh=True)),
    _rule("home_city.moved", rf"我[^，。,.!！?？；;]{{0,6}}?(?:搬迁|搬家|搬|迁居|移居)(?:到|去|至)了?{_ZV}", _simple("home_city", base=0.8, zh=True)),
    _rule("allergy.unset", rf"我(?:已经)?(?:不再|不)对{_ZV}过敏", _allergy(unset=True, zh=True)),
    _rule("allergy.unset_after", r"我对(?P<v>[^\s，。,.!！?？；;、不]+?)(?:已经)?(?:不再|不)过敏", _allergy(unset=True, zh=True)),
    _rule("allergy.clause", r"(?:但是?|而且?|还|却)(?:也)?对(?P<v>[^\s，。,.!！?？；;、不]+?)(?:也|严重|非常|很|有点|特别)*(?<!不)过敏", _allergy(unset=False, zh=True)),
    _rule("allergy.set", r"我对(?P<v>[^\s，。,.!！?？；;、不]+?)(?:也|严重|非常|很|有点|特别)*(?<!不)过敏", _allergy(unset=False, zh=True)),
    _rule("name", r"(?:我叫|我的名字(?:是|叫))(?P<v>[\u4e00-\u9fffA-Za-z·]{1,12}?)(?=[\s，。,.!！?？；;、]|$)", _simple("name", base=0.85, zh=True)),
    _rule("employer.unset", r"我(?:已经)?(?:从(?P<v>[^\s，。,.!！?？；;、]+?)离职|不(?:再)?在(?P<w>[^\s，。,.!！?？；;、]+?)(?:工作|上班))", lambda m: _zh_employer_unset(m)),
    _rule("employer.work", r"(?:我|^|[，,]\s*)(?:现在|目前|已经|还)?在(?P<v>[^\s，。,.!！?？；;、]+?)(?:工作|上班|任职)", _simple("employer", base=0.8, zh=True)),
    _rule("employer.joined", rf"我(?:已经)?(?:加入|入职)了?{_ZV}", _simple("employer", base=0.8, zh=True)),
    _rule("likes.no_longer", r"我(?:已经)?(?:不再|不)(?:喜欢|爱)(?:喝|吃|看|听|玩)?(?P<v>[^\s，。,.!！?？；;、了]+)", _likes(negative=True, zh=True)),
    _rule("likes.quit", r"我(?:已经)?(?:戒了|不再喝|不再吃|不喝|不吃)(?P<v>[^\s，。,.!！?？；;、了]+)", _likes(negative=True, zh=True)),
    _rule("likes", r"我(?:很|非常|特别|超|最|也|一直|真的|还是)*(?:喜欢|爱|热爱)(?:喝|吃|看|听|玩)?(?P<v>[^\s，。,.!！?？；;、了]+)", _likes(negative=False, zh=True)),
    _rule("reply_language", r"(?:请)?(?:用|说)(?P<v>中文|英文|英语|日语|汉语|普通话|粤语)(?:回答|回复|和我|跟我|交流)", _simple("reply_language", category=SYSTEM_PREFERENCE, base=0.75, zh=True)),
]  # fmt: skip

_ZH_NOT_AN_EMPLOYER = frozenset({"家", "家里", "这里", "那里", "这儿", "那儿"})
_ZH_NOT_A_NAME = frozenset({"说", "想", "觉得"})


def _zh_employer_unset(match: re.Match[str]) -> Found | None:
    group = "v" if match.group("v") is not None else "w"
    value = clean_zh(match.group(group))
    if not value or value in _ZH_NOT_AN_EMPLOYER:
        return None
    return Found(USER_PROFILE, "employer", value, "unset", 0.8, _span(match, group))


def zh_plausible(found: Found, sentence: str) -> bool:
    """Readings the Chinese patterns allow but that are not facts ("我在家工作", "我是说").

    Chinese drops subjects ("我叫李雷，在腾讯工作"), so a clause may carry none; the sentence
    must still speak in the first person for a fact about the user.
    """
    if found.category == USER_PROFILE and "我" not in sentence:
        return False
    if found.key == "likes_素":
        return False  # 吃素 is a diet, read as one
    if found.key == "employer" and (found.value or "") in _ZH_NOT_AN_EMPLOYER:
        return False
    return not (found.key == "name" and (found.value or "") in _ZH_NOT_A_NAME)


# --- templated world facts (MemoryAgentBench FactConsolidation and the like) --------------

_E, _O = r"(?P<e>.+?)", r"(?P<v>.+)"
_THE_TEMPLATES = [
    (rf"The name of the current head of state in {_E} is {_O}", "head_of_state"),
    (rf"The name of the current head of the {_E} government is {_O}", "head_of_government"),
    (rf"The headquarters of {_E} is located in the city of {_O}", "headquarters_location"),
    (rf"The univ(?:eristy|ersity) where {_E} was educated is {_O}", "educated_at"),
    (rf"The type of music that {_E} plays is {_O}", "genre"),
    (rf"The company that produced {_E} is {_O}", "manufacturer"),
    (rf"The orig(?:ianl|inal) broadcaster of {_E} is {_O}", "original_broadcaster"),
    (rf"The original language of {_E} is {_O}", "original_language"),
    (rf"The official language of {_E} is {_O}", "official_language"),
    (rf"The chief executive officer of {_E} is {_O}", "chief_executive_officer"),
    (rf"The chairperson of {_E} is {_O}", "chairperson"),
    (rf"The head coach of {_E} is {_O}", "head_coach"),
    (rf"The director of {_E} is {_O}", "director"),
    (rf"The author of {_E} is {_O}", "author"),
    (rf"The capital of {_E} is {_O}", "capital"),
    (rf"{_E}'s child is {_O}", "child"),
]
_SUBJECT_TEMPLATES = [
    ("is a citizen of", "country_of_citizenship"),
    ("is affiliated with the religion of", "religion"),
    ("is associated with the sport of", "sport"),
    ("speaks the language of", "language_spoken"),
    ("was written in the language of", "language_of_work"),
    ("was created in the country of", "country_of_origin"),
    ("was created by", "creator"),
    ("was born in the city of", "place_of_birth"),
    ("died in the city of", "place_of_death"),
    ("worked in the city of", "work_location"),
    ("was founded in the city of", "founding_location"),
    ("was founded by", "founded_by"),
    ("was developed by", "developer"),
    ("was performed by", "performer"),
    ("is located in the continent of", "continent"),
    ("is employed by", "employer"),
    ("is famous for", "notable_work"),
    ("plays the position of", "position_played"),
    ("works in the field of", "occupation"),
    ("is married to", "spouse"),
]
TEMPLATES: list[tuple[re.Pattern[str], str]] = (
    [(re.compile(rf"^{pattern}$"), relation) for pattern, relation in _THE_TEMPLATES]
    + [(re.compile(rf"^{_E} {re.escape(phrase)} {_O}$"), relation) for phrase, relation in _SUBJECT_TEMPLATES]
    # "The Prime Minister of Sweden is Stefan Löfven.": an office and who holds it.
    + [(re.compile(r"^The (?P<e>[A-Z].+?|[a-z][\w ]*? of [A-Z].+?) is (?P<v>[A-Z].+)$"), "office_holder")]
)


def entity_key(entity: str, relation: str) -> str:
    """One key per entity and relation: ('Thomas Kyd', 'place_of_birth') → 'thomas_kyd.place_of_birth'."""
    return f"{slug(entity)}.{relation}"


def template_fact(sentence: str) -> Found | None:
    """A third-person templated fact: the whole sentence is one template, or it is not one."""
    text = sentence.strip()
    body = text[:-1] if text.endswith(".") else text
    for regex, relation in TEMPLATES:
        match = regex.match(body)
        if match is None:
            continue
        entity, value = match.group("e").strip(), match.group("v").strip()
        if not entity or not value:
            continue
        offset = len(sentence) - len(sentence.lstrip())
        spans = [
            (offset + match.start("e"), offset + match.end("e")),
            (offset + match.start("v"), offset + match.end("v")),
        ]
        return Found(DOMAIN_FACT, entity_key(entity, relation), value, "set", 0.75, spans, entity, relation)
    return None
