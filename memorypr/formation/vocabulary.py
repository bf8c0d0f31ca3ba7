"""The key vocabulary: one canonical key per kind of personal fact, whatever the wording.

A restatement or a change must land on the key it restates, or the old value lives on
beside the new one and is served. Keys are therefore chosen from this vocabulary, never
from the sentence's wording, and a new fact is resolved against the subject's existing keys
(`resolve_key`) before it may become a new key.

Single-valued keys (one current value; a change is an UPDATE):

| key | what | e.g. |
| --- | --- | --- |
| `name`, `age` | who the user is | "My name is Li Lei", 我今年25岁 |
| `home_city` | where the user lives now | "I moved to Shenzhen", 我住在北京 |
| `hometown` | where the user is from / grew up | "I grew up in Kansas", 我来自四川 |
| `home` | the dwelling the user lives in | "I live in a two bedroom apartment" |
| `occupation` | what the user works as ("retired" included) | "I'm a nurse", 我是老师 |
| `employer` | who or where the user works for | "I work at Google", "I work in a shipyard", 我在腾讯工作 |
| `school`, `field_of_study` | education | "I study at UCLA", 我的专业是计算机 |
| `diet` | vegetarian, vegan, keto … | "I'm vegan", 我吃素 |
| `marital_status` | single, married, divorced … | "I'm married", 我离婚了 |
| `vehicle` | what the user drives | "I drive a Toyota" |
| `career_goal` | what the user wants to become | "I want to be an actor" |
| `religion` | the user's faith | "I'm a Christian" |
| `job_search` | the job the user is looking for | "I'm looking for a new job" |
| `reply_language` | how to answer (category `system_preference`) | 请用中文回答 |

Families (one key per thing; the thing is in the key, normalised, Chinese aliases mapped):

| family | e.g. |
| --- | --- |
| `allergy.<allergen>` | `allergy.peanut`, `allergy.花生` |
| `pet.<species>` | `pet.dog` ("I have a big pet dog", 我养了一只狗) |
| `family.<relation>` | `family.children` ("three kids", 两个孩子), `family.sister` ("a sister who's a dancer") |
| `family.<relation>.<aspect>` | `family.father.occupation` ("My father is in the army"), `family.mom.deceased`, `family.expecting` |
| `health.<condition>` | `health.diabetes` ("I'm diabetic", 我有糖尿病) |
| `favorite_<thing>` | `favorite_food` ("My favorite type of food is italian", 我最喜欢的食物) |
| `likes_<thing>` | `likes_hiking`: a taste or a hobby, "does not like …" when it ends |
| `language.<language>` | `language.spanish` ("I speak Spanish") |
| `plan.<verb>` | `plan.move` ("I plan to move to Canada") |
| `has.<thing>` | other possessions ("I have a big library at home") |
| `identity.<noun>` | what the user is that is not a job ("I'm a recovering alcoholic") |
| `member.<group>` | a team or a club the user is in ("I'm on the soccer team") |
| `fear.<thing>`, `visited.<place>`, `project.<thing>` | "I'm terrified of scorpions", "I've been to Spain", "I'm working on a robot" |
| `<verb>.<object>` | other habits and activities (`play.violin`, `volunteer.animal_shelter`) |

To extend it, add an alias to the tables below (an alias names an existing key or thing)
or a row above with its rule in `personal.py`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from memorypr.formation.text import normalize, slug

# Keys other proposers and older versions use for the same attribute.
KEY_ALIASES: dict[str, str] = {
    "city": "home_city", "location": "home_city", "current_city": "home_city", "residence": "home_city",
    "lives_in": "home_city", "居住地": "home_city", "城市": "home_city",
    "origin": "hometown", "birthplace": "hometown", "place_of_birth": "hometown", "家乡": "hometown",
    "birthday": "birth_date", "birth_year": "birth_date", "date_of_birth": "birth_date", "生日": "birth_date",
    "job": "occupation", "profession": "occupation", "job_title": "occupation", "work": "occupation",
    "职业": "occupation", "工作": "occupation",
    "company": "employer", "workplace": "employer", "公司": "employer",
    "full_name": "name", "名字": "name", "姓名": "name", "年龄": "age",
    "diet_type": "diet", "dietary_preference": "diet", "饮食": "diet",
    "relationship_status": "marital_status", "婚姻状况": "marital_status",
    "car": "vehicle", "major": "field_of_study", "专业": "field_of_study", "university": "school",
    "college": "school", "学校": "school", "language": "reply_language",
}  # fmt: skip

# Things, in the words users use, to the one word of the key.
THING_ALIASES: dict[str, str] = {
    # favorite_<thing>
    "colour": "color", "type of food": "food", "kind of food": "food", "cuisine": "food", "meal": "food",
    "dish": "food", "type of music": "music", "kind of music": "music", "music genre": "music",
    "genre of music": "music", "film": "movie", "tv show": "show", "television show": "show",
    "tv series": "show", "series": "show", "favourite": "favorite", "musician": "singer",
    "artist": "singer", "band": "band", "颜色": "color", "食物": "food", "菜": "food", "运动": "sport",
    "歌手": "singer", "水果": "fruit", "电影": "movie", "音乐": "music", "书": "book", "动物": "animal",
    "季节": "season", "饮料": "drink", "花": "flower", "游戏": "game", "节日": "holiday", "作家": "author",
    # pet.<species>
    "doggy": "dog", "puppy": "dog", "pup": "dog", "kitten": "cat", "kitty": "cat", "bunny": "rabbit",
    "fish": "fish", "goldfish": "goldfish", "狗": "dog", "小狗": "dog", "猫": "cat", "小猫": "cat",
    "兔子": "rabbit", "鱼": "fish", "金鱼": "goldfish", "鸟": "bird", "鹦鹉": "parrot", "仓鼠": "hamster",
    "乌龟": "turtle", "马": "horse", "蛇": "snake",
    # family.<relation>
    "kid": "children", "kids": "children", "child": "children", "children": "children",
    "grandkid": "grandchildren", "grandkids": "grandchildren", "grandchild": "grandchildren",
    "grandchildren": "grandchildren", "孩子": "children", "小孩": "children", "儿子": "son", "女儿": "daughter",
    "姐姐": "sister", "妹妹": "sister", "哥哥": "brother", "弟弟": "brother", "孙子": "grandchildren",
    "孙女": "grandchildren", "兄弟姐妹": "siblings", "sibling": "siblings",
    # health.<condition>
    "diabetic": "diabetes", "asthmatic": "asthma", "糖尿病": "diabetes", "哮喘": "asthma",
    "高血压": "high_blood_pressure", "high blood pressure": "high_blood_pressure", "migraine": "migraines",
    "抑郁症": "depression", "depressed": "depression",
}  # fmt: skip

PET_SPECIES = frozenset(
    [
        "dog",
        "cat",
        "rabbit",
        "fish",
        "goldfish",
        "bird",
        "parrot",
        "hamster",
        "turtle",
        "tortoise",
        "horse",
        "snake",
        "lizard",
        "pig",
        "cow",
        "goat",
        "chicken",
        "hen",
        "duck",
        "ferret",
        "guinea_pig",
        "gerbil",
        "mouse",
        "rat",
        "iguana",
        "frog",
        "hedgehog",
        "chinchilla",
        "pony",
        "donkey",
        "sheep",
        "llama",
        "alpaca",
        "cockatiel",
        "canary",
        "budgie",
        "parakeet",
        "gecko",
        "spider",
        "tarantula",
    ]
)
DOG_BREEDS = frozenset(
    [
        "labrador",
        "retriever",
        "poodle",
        "beagle",
        "bulldog",
        "terrier",
        "shepherd",
        "husky",
        "chihuahua",
        "pug",
        "dachshund",
        "collie",
        "rottweiler",
        "doberman",
        "corgi",
        "pitbull",
        "pit_bull",
        "boxer",
        "spaniel",
        "greyhound",
        "dalmatian",
        "lab",
        "mutt",
        "schnauzer",
        "pomeranian",
        "shih_tzu",
        "maltese",
        "mastiff",
        "sheepdog",
    ]
)
FAMILY_RELATIONS = frozenset(
    [
        "children",
        "son",
        "daughter",
        "sister",
        "brother",
        "siblings",
        "twin",
        "wife",
        "husband",
        "partner",
        "boyfriend",
        "girlfriend",
        "mother",
        "father",
        "mom",
        "dad",
        "parents",
        "grandchildren",
        "grandmother",
        "grandfather",
        "grandma",
        "grandpa",
        "cousin",
        "aunt",
        "uncle",
        "niece",
        "nephew",
        "stepson",
        "stepdaughter",
        "fiance",
        "fiancee",
    ]
)
HEALTH_CONDITIONS = frozenset(
    [
        "diabetes",
        "asthma",
        "cancer",
        "migraines",
        "arthritis",
        "epilepsy",
        "depression",
        "anxiety",
        "adhd",
        "autism",
        "dyslexia",
        "high_blood_pressure",
        "insomnia",
        "allergies",
        "bad_back",
        "back_pain",
        "heart_condition",
        "celiac",
        "ms",
        "lupus",
        "ptsd",
        "ocd",
        "scoliosis",
    ]
)
FAVORITE_THINGS = frozenset(
    [
        "color",
        "food",
        "band",
        "movie",
        "sport",
        "season",
        "animal",
        "book",
        "drink",
        "singer",
        "author",
        "flower",
        "music",
        "show",
        "game",
        "holiday",
        "fruit",
        "song",
        "place",
        "city",
        "team",
        "car",
        "actor",
        "actress",
        "restaurant",
        "dessert",
        "snack",
        "candy",
        "hobby",
        "number",
        "day",
        "subject",
        "genre",
        "vegetable",
        "meal",
        "beer",
        "wine",
    ]
)

_FAMILIES = ("allergy.", "pet.", "family.", "health.", "favorite_", "likes_", "language.", "plan.", "has.",
             "identity.")  # fmt: skip
_STEM_SUFFIXES = ("ing", "ies", "es", "ed", "s")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "to",
        "of",
        "in",
        "on",
        "at",
        "for",
        "my",
        "your",
        "his",
        "her",
        "their",
        "our",
        "and",
        "with",
        "go",
        "going",
        "does",
        "do",
        "is",
        "am",
        "are",
        "pet",
        "now",
        "currently",
        "actually",
        "really",
        "also",
        "still",
        "just",
        "named",
        "called",
    ]
)


def thing(text: str) -> str:
    """The canonical word for a thing: 'type of food' → 'food', '小狗' → 'dog', 'kids' → 'children'."""
    cleaned = normalize(text).strip()
    if cleaned in THING_ALIASES:
        return THING_ALIASES[cleaned]
    return slug(cleaned)


# canonical key -> the keys that name it otherwise
_ALIASES_OF: dict[str, tuple[str, ...]] = {}
for _alias, _target in KEY_ALIASES.items():
    _ALIASES_OF[_target] = (*_ALIASES_OF.get(_target, ()), _alias)


def canonical_key(key: str) -> str:
    """An existing key as the vocabulary names it: 'job' → 'occupation'."""
    return KEY_ALIASES.get(key, key)


def family_of(key: str) -> tuple[str, str]:
    """('pet.', 'dog') for 'pet.dog'; ('', key) for a single-valued key."""
    for family in _FAMILIES:
        if key.startswith(family) and len(key) > len(family):
            return family, key[len(family) :]
    head, dot, tail = key.partition(".")
    if dot and tail:
        return head + ".", tail
    return "", key


def stem(word: str) -> str:
    """A crude English stem, the same for 'dancing', 'dance' and 'dances'; Chinese as it is."""
    if not word.isascii():
        return word
    for suffix in _STEM_SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            word = word[: -len(suffix)]
            if suffix == "ing" and len(word) > 2 and word[-1] == word[-2] and word[-1] not in "ls":
                word = word[:-1]  # running → run, swimming → swim
            break
    return word.rstrip("e") or word


# Verbs whose base form ends in a silent "e": their gerund drops it ("dancing" → "dance").
_SILENT_E_VERBS_TEXT = """make take bake dance move retire share graduate inspire explore continue have live love
    like use create write ride drive hike skate produce race practice practise believe leave save serve arrive
    change close promote raise date vote improve prepare pursue achieve become come give lose choose settle decide
    hope manage arrange compete complete smile breathe wake shine dine trade juggle cycle recycle paddle rescue
    restore care face file hire ice invite joke judge lease merge name note owe paste phone place please pose price
    quote rate rule score shave shape slide solve stare store style surprise taste tape tease tune type update
    wave wipe dive strive thrive evolve involve scrape operate educate celebrate donate translate relocate renovate
    decorate meditate motivate navigate"""
_SILENT_E_VERBS = frozenset(_SILENT_E_VERBS_TEXT.split())
_IRREGULAR_BASES = {"dying": "die", "lying": "lie", "tying": "tie", "travelling": "travel", "modelling": "model",
                    "goes": "go", "does": "do", "has": "have", "is": "be", "was": "be"}  # fmt: skip
# Base forms that end in "ing" themselves.
_ING_BASES = frozenset({"bring", "swing", "sting", "cling", "fling", "spring", "string", "sling", "wring"})


def verb_lemma(word: str) -> str:
    """The base form of an English verb, said as it is, as a gerund or in the past, for a key that
    reads as a word: 'dancing' → 'dance', 'running' → 'run', 'helped' → 'help', 'focus' and 'see'
    as they are ('stem' is for matching and gives 'danc', 'focu' and 's')."""
    verb = word.lower()
    if verb in _IRREGULAR_BASES or not verb.isascii():
        return _IRREGULAR_BASES.get(verb, verb)
    if verb.endswith(("ied", "ies")) and len(verb) > 4:
        return f"{verb[:-3]}y"  # tried, tries → try
    if verb.endswith(("ches", "shes", "sses", "xes", "zes", "oes")) and len(verb) > 4:
        return verb[:-2]  # teaches → teach
    if verb.endswith("s") and len(verb) > 3 and not verb.endswith(("ss", "us", "is")):
        return verb[:-1]  # plays → play, loves → love
    if verb.endswith("ed") and not verb.endswith("eed") and len(verb) > 4:
        base = verb[:-2]  # played, helped, moved, stopped
    elif verb.endswith("ing") and len(verb) > 4 and verb not in _ING_BASES:
        base = verb[:-3]
    else:
        return verb
    if f"{base}e" in _SILENT_E_VERBS:
        return f"{base}e"
    if len(base) > 2 and base[-1] == base[-2] and base[-1] not in "aeiouyls":
        return base[:-1]  # running → run, swimming → swim
    return base


_NUMBER_WORDS = {"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
                 "eight": "8", "nine": "9", "ten": "10", "一": "1", "两": "2", "二": "2", "三": "3", "四": "4"}  # fmt: skip
_ZH_THINGS = re.compile(
    "|".join(sorted((k for k in THING_ALIASES if not k.isascii()), key=len, reverse=True))
)
_ZH_COUNT = re.compile(r"([一两二三四五六七八九十\d]?)(?:个|只|条|位|匹|头|名)")


def stems(text: str) -> frozenset[str]:
    """The words that carry a value's meaning, stemmed, with things and numbers in one spelling:
    'three kids' and 'three children', '两个小孩' and '两个孩子' give the same set."""
    text = normalize(text.replace("_", " ").replace(".", " "))
    text = _ZH_THINGS.sub(lambda m: f" {THING_ALIASES[m.group(0)]} ", text)
    text = _ZH_COUNT.sub(lambda m: f" {_NUMBER_WORDS.get(m.group(1) or '一', m.group(1))} ", text)
    out = set()
    for raw in re.findall(r"[a-z0-9]+|[\u3400-\u9fff]+", text):
        if raw in _STOP:
            continue
        word = _NUMBER_WORDS.get(raw, raw)
        word = THING_ALIASES.get(word, word) if word.isascii() else word
        out.add(stem(word))
    return frozenset(out)


Embedder = Callable[[list[str]], list[list[float]]]

SAME_KEY_SIMILARITY = 0.8  # a same-family key this close in key and value is the same key
AMBIGUOUS_SIMILARITY = 0.7  # a key of another family this close is for a person to decide


@dataclass(frozen=True)
class Resolution:
    key: str  # the key to use: an existing key, or the fact's own when none matched
    how: str  # "exact", "alias", "stem", "contains", "embedding", "new"
    ambiguous_with: tuple[tuple[str, float], ...] = ()  # existing keys it might restate

    @property
    def note(self) -> str:
        if not self.ambiguous_with:
            return ""
        close = ", ".join(f"{key} ({score:.2f})" for key, score in self.ambiguous_with)
        return f"a new key that may restate {close}: for a person to decide"


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def _text(key: str, value: object) -> str:
    return f"{key.replace('_', ' ').replace('.', ' ')}: {value if value is not None else ''}"


def resolve_key(
    *, key: str, value: object, existing: Mapping[str, object], embed: Embedder | None = None
) -> Resolution:
    """The existing key a new fact restates, if any: exact, by vocabulary alias, by the same
    thing in other words (stems, one naming more than the other), then by embedding
    similarity of key and value. Several candidates, or a close key of another family, make
    the resolution ambiguous: the fact keeps its own key and says which keys it may restate."""
    if key in existing:
        return Resolution(key, "exact")
    canonical = canonical_key(key)
    for other in existing:
        if canonical_key(other) == canonical:
            return Resolution(other, "alias")
    family, tail = family_of(canonical)
    tail_stems = stems(tail)
    if family and tail_stems:
        same_stem = [o for o in existing if _same_family(o, family) and stems(family_of(o)[1]) == tail_stems]
        if len(same_stem) == 1:
            return Resolution(same_stem[0], "stem")
        containing = [
            o
            for o in existing
            if _same_family(o, family)
            and (theirs := stems(family_of(o)[1]))
            and (theirs <= tail_stems or tail_stems <= theirs)
        ]
        if len(containing) == 1:
            return Resolution(containing[0], "contains")
        if len(containing) > 1:
            return Resolution(key, "new", tuple((o, 1.0) for o in containing))
    if embed is None or not existing:
        return Resolution(key, "new")
    others = list(existing)
    vectors = embed([_text(key, value), *(_text(o, existing[o]) for o in others)])
    scored = sorted(((o, _cosine(vectors[0], v)) for o, v in zip(others, vectors[1:], strict=True)),
                    key=lambda item: -item[1])  # fmt: skip
    same = [(o, s) for o, s in scored if family and _same_family(o, family) and s >= SAME_KEY_SIMILARITY]
    if len(same) == 1:
        return Resolution(same[0][0], "embedding")
    close = tuple((o, round(s, 3)) for o, s in scored if s >= AMBIGUOUS_SIMILARITY)[:3]
    return Resolution(key, "new", close)


@dataclass(frozen=True)
class ResolutionScope:
    """Which existing keys `resolve_key` may settle a key on, without an embedder: these keys,
    and every key that starts with one of the prefixes. A large subject lists only these."""

    keys: frozenset[str]
    prefixes: frozenset[str]


def resolution_scope(key: str) -> ResolutionScope:
    """The existing keys `resolve_key(key=key, ...)` reads: the key, every key with its canonical
    name (its aliases), and the keys of its family (written in the family, or aliases into it).

    A key outside this scope cannot change the resolution: exact and alias matches are within
    `keys`, and stem and containment matches are keys whose canonical name is in the family,
    which either start with it or are aliases into it. With an embedder, similarity reaches
    every key; a scoped caller gives it the scope's keys only.
    """
    canonical = canonical_key(key)
    family, _ = family_of(canonical)
    keys = {key, canonical, *_ALIASES_OF.get(canonical, ())}
    if not family:
        return ResolutionScope(frozenset(keys), frozenset())
    keys |= {alias for alias, target in KEY_ALIASES.items() if family_of(target)[0] == family}
    return ResolutionScope(frozenset(keys), frozenset({family}))


def _same_family(key: str, family: str) -> bool:
    return family_of(canonical_key(key))[0] == family
