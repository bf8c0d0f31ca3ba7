"""First-person statements read for their structure, keyed by the vocabulary.

Each rule reads one kind of statement (possession, identity, occupation, family, pets,
places, preferences, habits, health, plans, and their "no longer" forms) and builds the
key from what the statement is about, never from its wording: "I have a big pet dog" and
"I've got a dog" are both `pet.dog`, "I'm a nurse" and "I work as a nurse" both
`occupation`. An object that is a pronoun or leans on one ("it", "them", "their energy")
means nothing out of context: it is dropped, unless the previous turn asked about a thing
by name ("Do you like jazz?" → "I love it." is about jazz).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import replace

from memorypr.formation import vocabulary as vocab
from memorypr.formation.lists import lists_joined
from memorypr.formation.patterns import (
    USER_PROFILE,
    Found,
    Polarity,
    binomials_joined,
    binomials_shown,
    clean_en,
    clean_zh,
)
from memorypr.formation.quotes import TITLE_SPACE
from memorypr.formation.text import singular, slug

# --- noun phrases -------------------------------------------------------------------------

_ARTICLES = frozenset(["a", "an", "the", "my", "our", "some", "any", "another", "this", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "several", "few", "couple", "lot", "lots", "of", "many", "much", "more", "most"])  # fmt: skip
_REFERENTIAL_HEAD = frozenset(
    [
        "mine",
        "yours",
        "hers",
        "ours",
        "theirs",
        "it",
        "them",
        "that",
        "this",
        "these",
        "those",
        "him",
        "her",
        "you",
        "us",
        "everything",
        "something",
        "anything",
        "nothing",
        "all",
        "both",
        "their",
        "its",
        "his",
        "your",
        "our",
        "there",
        "one",
        "ones",
        "so",
        "such",
        "same",
    ]
)
_POSSESSIVE_PRONOUNS = frozenset(["mine", "yours", "hers", "ours", "theirs"])
_REFERENTIAL_ANY = frozenset(["it", "them", "they", "their", "its", "theirs", "he", "she", "those", "these"])
_PREPOSITIONS = re.compile(
    r"\s+(?:at|in|on|of|for|with|from|by|to|about|into|near|around|over|every|each|once|twice|"
    r"when|while|because|since|that|who|which|named|called|now|too|as well|anymore|any more|"
    r"a lot|lately|these days|all the time|whenever|tomorrow|next (?:week|month|year|weekend|summer|winter|spring|fall))\b.*$",
    re.IGNORECASE,
)
_LIST_SPLIT = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+|\s*&\s*", re.IGNORECASE)
# An item after which a determiner or an adverb of place follows its first word ("mow my lawn",
# "grill outdoors"): that word is a verb, and the item goes on the list's "to".
_VERB_FIRST = re.compile(
    r"^[a-z]+\s+(?:my|the|a|an|our|some|his|her|their|your|outdoors|outside|together|around|out|home)\b"
)
# "flowers, like roses, lilies": the examples are things of the list themselves.
_EXAMPLE_WORDS = r"(?:like|such as|including|especially)"
_EXAMPLE = re.compile(rf"^\s*{_EXAMPLE_WORDS}\s+(?=\w)", re.IGNORECASE)
_STOP_ITEM = re.compile(
    r"^(?:I\b|I'm|I’m|but\b|so\b|because\b|which\b|who\b|that's|it's|then\b)", re.IGNORECASE
)
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
            "ten": 10, "a": 1, "an": 1}  # fmt: skip
_PROFESSION_WORDS = frozenset(
    [
        "teacher",
        "engineer",
        "doctor",
        "nurse",
        "developer",
        "programmer",
        "designer",
        "lawyer",
        "student",
        "accountant",
        "writer",
        "manager",
        "scientist",
        "researcher",
        "chef",
        "cook",
        "driver",
        "artist",
        "architect",
        "consultant",
        "pharmacist",
        "journalist",
        "photographer",
        "musician",
        "farmer",
        "pilot",
        "dentist",
        "professor",
        "translator",
        "analyst",
        "entrepreneur",
        "mechanic",
        "firefighter",
        "plumber",
        "electrician",
        "carpenter",
        "cashier",
        "waiter",
        "waitress",
        "bartender",
        "barista",
        "librarian",
        "secretary",
        "receptionist",
        "clerk",
        "janitor",
        "cleaner",
        "guard",
        "officer",
        "detective",
        "cop",
        "soldier",
        "sailor",
        "marine",
        "veteran",
        "surgeon",
        "therapist",
        "psychologist",
        "psychiatrist",
        "counselor",
        "vet",
        "veterinarian",
        "paramedic",
        "coach",
        "trainer",
        "instructor",
        "tutor",
        "principal",
        "banker",
        "broker",
        "realtor",
        "agent",
        "salesman",
        "saleswoman",
        "salesperson",
        "editor",
        "reporter",
        "author",
        "poet",
        "singer",
        "dancer",
        "actor",
        "actress",
        "comedian",
        "model",
        "painter",
        "sculptor",
        "filmmaker",
        "director",
        "producer",
        "composer",
        "dj",
        "rapper",
        "drummer",
        "guitarist",
        "pianist",
        "violinist",
        "athlete",
        "player",
        "golfer",
        "boxer",
        "wrestler",
        "swimmer",
        "runner",
        "gymnast",
        "olympian",
        "astronaut",
        "physicist",
        "chemist",
        "biologist",
        "economist",
        "mathematician",
        "historian",
        "lecturer",
        "nanny",
        "babysitter",
        "caregiver",
        "housekeeper",
        "maid",
        "butler",
        "gardener",
        "landscaper",
        "baker",
        "butcher",
        "fisherman",
        "miner",
        "welder",
        "machinist",
        "technician",
        "builder",
        "contractor",
        "laborer",
        "worker",
        "assistant",
        "attendant",
        "stewardess",
        "steward",
        "ceo",
        "cfo",
        "cto",
        "founder",
        "owner",
        "president",
        "intern",
        "apprentice",
        "freelancer",
        "blogger",
        "vlogger",
        "youtuber",
        "streamer",
        "influencer",
        "housewife",
        "homemaker",
        "stylist",
        "hairdresser",
        "barber",
        "beautician",
        "tailor",
        "seamstress",
        "jeweler",
        "florist",
        "optometrist",
        "dietitian",
        "nutritionist",
        "midwife",
        "doula",
        "medic",
        "chiropractor",
        "mailman",
        "postman",
        "courier",
        "trucker",
        "pastor",
        "priest",
        "minister",
        "rabbi",
        "monk",
        "nun",
        "missionary",
        "judge",
        "attorney",
        "paralegal",
        "politician",
        "senator",
        "mayor",
        "diplomat",
        "ranger",
        "lifeguard",
        "zookeeper",
        "investor",
        "trader",
        "auditor",
        "inspector",
        "carrier",
        "ranger",
    ]
)
_NOT_PROFESSION = frozenset(
    [
        # an outlook or a cause, not a job: "I'm a feminist" is who one is
        "feminist",
        "activist",
        "optimist",
        "pessimist",
        "perfectionist",
        "idealist",
        "realist",
        "minimalist",
        "environmentalist",
        "humanitarian",
        "pacifist",
        "egalitarian",
        "libertarian",
        "lover",
        "fan",
        "member",
        "beginner",
        "brother",
        "mother",
        "father",
        "sister",
        "daughter",
        "partner",
        "user",
        "owner_of",
        "fanatic",
        "believer",
        "follower",
        "supporter",
        "reader",
        "learner",
        "listener",
        "eater",
        "drinker",
        "sleeper",
        "smoker",
    ]
)
_TRAITS = (
    "shy|lonely|introverted|extroverted|introvert|extrovert|tall|short|athletic|adopted|pregnant|religious|"
    "christian|muslim|jewish|catholic|buddhist|hindu|atheist|bald|left[- ]handed|right[- ]handed|colorblind|"
    "color blind|overweight|homeschooled|unemployed|homeless|an only child|a twin|an orphan"
)
_RELIGIONS = frozenset(["christian", "muslim", "jew", "catholic", "protestant", "buddhist", "hindu", "atheist",
                        "agnostic", "mormon", "sikh", "pagan", "wiccan", "baptist", "methodist", "lutheran"])  # fmt: skip
# "-ian" names a job as often as a people: "librarian", but "Italian" or "Canadian".
_PEOPLES = frozenset(["italian", "canadian", "australian", "indian", "russian", "brazilian", "norwegian", "egyptian",
                      "persian", "asian", "african", "european", "korean", "haitian", "hungarian", "iranian",
                      "nigerian", "colombian", "peruvian", "argentinian", "armenian", "ukrainian", "romanian",
                      "croatian", "serbian", "bulgarian", "austrian", "belgian", "estonian", "latvian", "syrian",
                      "jordanian", "palestinian", "indonesian", "malaysian", "californian", "texan", "civilian",
                      "guardian", "vegetarian", "christian", "comedian", "median", "ruffian", "hooligan"])  # fmt: skip
_DIETS = frozenset(["vegetarian", "vegan", "pescatarian", "pescetarian", "carnivore", "flexitarian"])
_MARITAL = {"married": "married", "single": "single", "divorced": "divorced", "engaged": "engaged",
            "widowed": "widowed", "widow": "widowed", "widower": "widowed", "separated": "separated"}  # fmt: skip
_HEALTH_ADJECTIVES = {"diabetic": "diabetes", "asthmatic": "asthma", "blind": "blind", "deaf": "deaf",
                      "epileptic": "epilepsy", "autistic": "autism", "disabled": "disabled",
                      "paralyzed": "paralyzed", "dyslexic": "dyslexia", "bipolar": "bipolar",
                      "anemic": "anemia", "celiac": "celiac"}  # fmt: skip
_NOT_POSSESSION = re.compile(
    r"^(?:to\b|been\b|had\b|got\b|gotten\b|no idea|questions?\b|fun\b|a (?:lot of fun|blast)\b"
    # how a time goes ("a great time", "a long day tomorrow"), not a thing had ("a great dog")
    r"|(?:a|an)\s+(?:(?:\w+\s+){0,2})(?:time|day|week|weekend|night|evening|morning|year|month|life|one|point|idea|"
    r"question|feeling|chance|effect|impact|influence|experience|habit)s?\b"
    r"|time\b|the same|never\b|always\b|ever\b|heard|seen|"
    r"tried|done|made|not\b|nothing|enough|a look|a try|plans\b|work\b|school\b"
    # what the user and the other speaker share is about the conversation: "some things in common"
    r"|.*\bin\s+common\b|similar\s+tastes?\b)",
    re.IGNORECASE,
)
# "getting to see the animals grow": what is seen is the liked thing, as what is eaten or watched.
_CONSUMING = re.compile(
    r"^(?:to\s+)?(?:(?:getting|get)\s+to\s+)?"
    r"(?:drinking|eating|watching|listening to|seeing|drink|eat|watch|listen to|see)\s+",
    re.IGNORECASE,
)


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9][A-Za-z0-9'’-]*", text)


_FILLERS = frozenset({"too", "as well", "also", "a lot", "so much", "very much", "more", "most", "though", "tho",
                      "anyway", "either", "sometimes", "actually", "honestly"})  # fmt: skip
_QUANTIFIERS = frozenset({"one", "ones", "all", "both", "so", "such", "same", "the same"})


def referential(phrase: str) -> bool:
    """A phrase that means nothing without its context: 'it', 'them', 'their energy'."""
    words = [w.lower() for w in re.findall(r"[A-Za-z0-9]+", phrase)]
    if not words:
        return True
    # "one", "all", "both" lead a noun phrase ("one cat") as often as they stand for one.
    if words[0] in _REFERENTIAL_HEAD - _QUANTIFIERS or " ".join(words) in _QUANTIFIERS:
        return True
    # "to get mine", "to see yours": the doing's object is what the turn named
    if len(words) > 1 and words[-1] in _POSSESSIVE_PRONOUNS and words[-2] != "of":
        return True
    # A capitalised word inside a phrase is a name's ("Paint It Black"), not a pronoun.
    cased = re.findall(r"[A-Za-z0-9]+", phrase)
    return any(w in _REFERENTIAL_ANY for i, w in enumerate(words) if not (i and cased[i][:1].isupper()))


_ZH_REFERENTIAL = re.compile(
    r"^(?:喜欢|不再喜欢)?(?:它|它们|他|她|他们|她们|这|那|这个|那个|这些|那些|这样|那样)"
)


def leans_on_context(value: str) -> bool:
    """An empty value, or one that means nothing without its turn ("it", "their energy", 它)."""
    text = value.strip()
    if not text:
        return True
    if not text.isascii():
        return bool(_ZH_REFERENTIAL.match(text))
    return referential(re.sub(r"^(?:likes|loves|enjoys|dislikes|does not like|no longer likes)\s+", "", text))


_QUANTITY = re.compile(
    r"^(?:a lot of|lots of|a couple of|a few|a bunch of|plenty of|all kinds of|different kinds of|"
    r"all sorts of|many|some|any|so many|different)\s+",
    re.IGNORECASE,
)


# A gerund of seeing or helping whose object does something ("watching the kids play"): what
# follows "and" may be another thing the object does ("… play and learn"), not another liked thing.
_SEEING_DONE = re.compile(
    r"^(?:(?:(?:getting|get)\s+)?to\s+(?:see|watch|hear|help)|seeing|watching|hearing|helping|letting)"
    r"(?:\s+\S+)+\s+(?P<verb>[a-z]+)$",
    re.IGNORECASE,
)
_ALSO_DONE = frozenset({"grow", "develop", "learn", "thrive", "bloom", "change", "improve", "flourish", "mature",
                        "blossom", "succeed", "laugh", "smile", "interact", "explore", "heal", "recover",
                        "hatch"})  # fmt: skip


# "hang out with my friends and family", "take pictures of nature and landscapes": a phrase
# that ends in a preposition's object, whose next item may be another object of it.
# Not "to", which also marks an infinitive ("to play RPGs"); not the "of" inside a name ("God of War").
_ENDS_IN_OBJECT = re.compile(
    r"(?:^|\s)(?-i:[a-z])[\w'’-]*\s+(?:with|of|about|from|for|at|in|on|by)\s+(?:\S+\s+){0,3}\S+$",
    re.IGNORECASE,
)
_PREPOSITION_WORDS = frozenset({"to", "with", "of", "about", "from", "for", "at", "in", "on", "by", "around", "out",
                                "up", "down", "into", "over"})  # fmt: skip
# "help people get fit and healthy": a phrase that ends in a state, whose next item may be
# another state.
_ENDS_IN_STATE = re.compile(
    r"\b(?:get|getting|stay|staying|keep|keeping|feel|feeling|be|being|look|looking|become|becoming)"
    r"\s+[a-z]+$",
    re.IGNORECASE,
)
_EXAMPLE_BEFORE = re.compile(rf"\b{_EXAMPLE_WORDS}\s*$", re.IGNORECASE)
_CLAUSE_STARTS = frozenset(
    {"how", "what", "why", "when", "where", "who", "whom", "which", "that", "whatever"}
)
_SUBJECTS = frozenset({"i", "you", "he", "she", "we", "they", "it"})
# Verbs of a second doing besides the activities' ("and share art", "and have fun", "and mentor teens").
_LIKING_VERBS = frozenset({"like", "love", "enjoy", "adore", "prefer", "hate"})
_ALSO_DOING_WORDS = _LIKING_VERBS | frozenset({"have", "has", "share", "mentor", "bring", "give", "hear", "create",
                                               "unwind", "donate", "support", "care", "skydive", "celebrate",
                                               "connect", "feel", "show"})  # fmt: skip


def _bare_noun_phrase(item: str, *, most_words: int) -> bool:
    """No doing of its own ("family", "the zoo", "rock music"), unlike "play games" or "reading"."""
    phrase = clean_en(item)
    words = [word.lower() for word in phrase.split()]
    if not words or len(words) > most_words or phrase.lower() in _FILLERS or referential(words[-1]):
        return False
    if words[0] in _CLAUSE_STARTS or any(word.split("'")[0].split("’")[0] in _SUBJECTS for word in words):
        return False  # a clause: "how they're fought", "the sacrifices they made"
    # a doing: "play games", "reading", "to swim", "listen to music", "let go of stress"
    return not (
        words[0] == "to"
        or words[0].endswith("ing")
        or any(word in _VERB_WORDS or word in _ALSO_DOING_WORDS for word in words[:2])
        or (len(words) > 1 and words[1] in _PREPOSITION_WORDS)
        or _VERB_FIRST.match(phrase.lower())
    )


def _goes_on(previous: str, item: str) -> bool:
    """Whether `item` only goes on the `previous` item of a list of likes, not another liked thing."""
    seen = _SEEING_DONE.match(clean_en(previous))
    doings = _ALSO_DONE | _VERB_WORDS
    if seen and seen.group("verb").lower() in doings and clean_en(item).lower() in doings:
        return True
    said = previous.strip(" .,;:!?")  # as said: cleaning cuts the with-phrase this looks at
    if _ENDS_IN_STATE.search(said):
        return _bare_noun_phrase(item, most_words=1)
    return _ENDS_IN_OBJECT.search(said) is not None and _bare_noun_phrase(item, most_words=4)


def _coordinated(items: list[tuple[str, int]], raw: str) -> list[tuple[str, int, str]]:
    """Items of a list of likes, with an item that only goes on the one before joined to it:
    what a seen object also does ("getting to see the animals grow and develop"), another object
    of the same preposition ("hang out with my friends and family") or another state ("help
    people get fit and healthy"): one liked thing each, not "develop", "family" or "healthy".
    Each item comes with the text its key is made from (the item before anything joined)."""
    out: list[tuple[str, int, str]] = []
    for item, offset in items:
        # "anything by Jane Austen, especially Pride and Prejudice": an example is a thing of its own
        example = _EXAMPLE_BEFORE.search(raw, 0, offset) is not None
        if out and not example and _goes_on(out[-1][0], item):
            _, start, head = out[-1]
            out[-1] = (raw[start : offset + len(item)], start, head)
            continue
        out.append((item, offset, item))
    return out


# "play a lot of racing games": how much, anywhere in the phrase, is no part of the thing.
_AMOUNT = re.compile(
    r"\b(?:a lot of|lots of|a couple of|a bunch of|plenty of|all kinds of|different kinds of|all sorts of|"
    r"different types of|all types of)\s+",
    re.IGNORECASE,
)
# "Call of Duty", "Lord of the Rings": a name whose "of" is no preposition to cut at.
_NAME_OF_NAME = re.compile(r"\b[A-Z][\w'’-]*\s+of\s+(?:the\s+)?[A-Z][\w'’-]*")


# A quoted title, as `memorypr.formation.quotes` made it one word.
_HIDDEN_TITLE = re.compile(rf"[^\s\"“”]+{TITLE_SPACE}[^\s\"“”]+")
# Words of a quoted title a key keeps, from its start ("my_heart_will_go_on").
_TITLE_KEY_WORDS = 5
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)


def _key_words(phrase: str, *, limit: int = 3) -> str:
    """'a big library at home' → 'big_library'; the head of a phrase for a key. A quoted title
    is keyed by its own first words: "The Girl with the Dragon Tattoo" is girl_with_dragon_tattoo."""
    title = _HIDDEN_TITLE.search(phrase)
    if title:
        words = [w for w in _words(title.group(0)) if w.lower() not in _ARTICLES]
        # "Can't Smile Without You" is cant_smile_without_you
        return slug(" ".join(re.sub(r"['’]", "", _POSSESSIVE.sub("", w)) for w in words[:_TITLE_KEY_WORDS]))
    named = _NAME_OF_NAME.sub(lambda name: name.group(0).replace(" ", "\x02"), phrase.strip())
    cut = _PREPOSITIONS.sub("", _AMOUNT.sub("", _QUANTITY.sub("", _strip_article(named))))
    said = [w.strip("'’") for w in _words(cut)]
    # not the "and" of "rock and roll"
    said = [w for w in said if w.lower() not in _ARTICLES and w.lower() != "and" and not w.isdigit()]
    if not said:
        return ""
    # A word of a name is no plural: "Charles Dickens" is charles_dickens, not charle_dicken; its
    # possessive is no part of it ("Ender's Game" is ender_game, as before).
    kept = [
        _POSSESSIVE.sub("", word).lower() if name else singular(word.lower())
        for word, name in zip(said, _in_names(said), strict=True)
    ]
    return slug(" ".join(kept[-limit:]))


def _in_names(words: list[str]) -> list[bool]:
    """For each word, whether it stands in a run of two or more capitalized words (a name)."""
    capital = [word[:1].isupper() for word in words]
    return [
        capital[i] and ((i > 0 and capital[i - 1]) or (i + 1 < len(words) and capital[i + 1]))
        for i in range(len(words))
    ]


def _strip_article(phrase: str) -> str:
    return re.sub(r"^(?:a|an|the)\s+", "", phrase.strip(), flags=re.IGNORECASE)


def _items(raw: str) -> Iterator[tuple[str, int]]:
    """The items of a list ('to read books, bake, and drink tea'), each with its offset in `raw`."""
    position = 0
    joined = binomials_joined(raw)  # "rock and roll" is one item; the same length, so the same offsets
    for part in _LIST_SPLIT.split(joined):
        start = joined.find(part, position)
        position = start + len(part)
        if not part.strip():
            continue
        if _STOP_ITEM.match(part.strip()):
            break
        example = _EXAMPLE.match(part)
        if example:
            part, start = part[example.end() :], start + example.end()
        yield binomials_shown(part), start


# --- context: what a pronoun may stand for -------------------------------------------------

_ASKED_ABOUT = re.compile(
    r"\b(?:like|love|enjoy|play|watch|read|tried|seen|have|own|heard of|listen to|into)\s+"
    r"(?P<np>(?:the\s+|a\s+|an\s+)?[A-Za-z][\w'’ -]{1,40}?)\s*\?",
    re.IGNORECASE,
)


def antecedent(previous: str) -> str | None:
    """The thing the previous turn asked about by name, if it asked about exactly one."""
    found = [m.group("np").strip() for m in _ASKED_ABOUT.finditer(previous)]
    if len(found) != 1 or referential(found[0]) or " or " in found[0]:
        return None
    return _strip_article(found[0])


# --- builders -----------------------------------------------------------------------------

Reader = Callable[[re.Match[str], str], list[Found]]


def _found(
    key: str, value: str | None, match: re.Match[str], *, base: float, group: str = "v",
    polarity: Polarity = "set", span: tuple[int, int] | None = None,
) -> Found:  # fmt: skip
    spans = [span] if span else ([match.span(group)] if match.group(group) is not None else [])
    return Found(USER_PROFILE, key, value, polarity, base, spans)


def _profession(head: str) -> bool:
    head = head.lower()
    if head in _NOT_PROFESSION:
        return False
    if head in _PROFESSION_WORDS or singular(head) in _PROFESSION_WORDS:
        return True
    if head in _PEOPLES:
        return head == "comedian"
    return head.endswith(("ist", "ian", "ologist", "smith", "wright")) and len(head) > 5


_DEVOTEE = r"(?:fan|lover|enthusiast|buff|fanatic|junkie|nut|addict|aficionado)"
_DEVOTION_DEGREES = frozenset({"big", "huge", "great", "massive", "avid", "die-hard", "die hard", "long-time",
                               "loyal", "crazy", "true", "real", "total", "super"})  # fmt: skip
_DEVOTION = re.compile(
    r"^(?:an?\s+)?(?:(?:really|very|pretty|super|such|total|true|real)\s+)?"
    r"(?:(?:big|huge|great|massive|avid|die[- ]hard|long[- ]time|loyal|crazy|true|real)\s+)?"
    rf"(?:{_DEVOTEE}s?\s+of\s+(?P<of>.+)|(?P<what>.+?)\s+{_DEVOTEE}s?)$",
    re.IGNORECASE,
)


# "a good cook", "a much better swimmer", "a terrible singer": how well one does something, not a job.
_HOW_GOOD = re.compile(
    r"^(?:(?:pretty|really|very|quite|much|so|such\s+an?|not\s+a)\s+)*"
    r"(?:good|great|better|best|bad|worse|terrible|awful|decent|excellent|amazing|horrible|poor|fast|slow)\s+",
    re.IGNORECASE,
)


# "a little nervous", "a bit tired", "a little bit": a degree of a state ("a little girl" is a who).
_STATE_BY_DEGREE = re.compile(
    r"^an?\s+(?:(?:little\s+)?bit\b|little\s+\w+(?:ous|ful|ive|ed|ing|ish|ic|al|ent|ant|ble|y)$)",
    re.IGNORECASE,
)


def classify_identity(phrase: str) -> tuple[str, str] | None:
    """'a baby delivery nurse' → ('occupation', 'baby delivery nurse'); 'a vegan' → ('diet', 'vegan');
    'a big fan of jazz' and 'a jazz lover' → ('likes_jazz', 'likes jazz'): a taste, said as who one is."""
    devotion = _DEVOTION.match(phrase.strip())
    if devotion and (devotion.group("what") or "").lower() in _DEVOTION_DEGREES:
        return None  # "I'm a big fan.": of nothing said
    if devotion:
        what = clean_en(devotion.group("of") or devotion.group("what"))
        key = _key_words(what) if what and not referential(what) else ""
        return (f"likes_{key}", f"likes {_strip_article(what)}") if key else None
    home = re.match(
        r"^(?:an?\s+)?(?P<v>stay[- ]at[- ]home\s+(?:dad|mom|mum|mother|father|parent|wife|husband))",
        phrase,
        re.I,
    )
    if home:
        return "occupation", home.group("v")
    if _STATE_BY_DEGREE.match(phrase.strip()):
        return None  # "I'm a little nervous", "I'm a bit tired": how the user feels, not who
    core = _strip_article(_PREPOSITIONS.sub("", phrase.strip()))
    core = re.sub(r"\s+by (?:profession|trade)$", "", core, flags=re.IGNORECASE).strip(" ,")
    words = [w.lower() for w in _words(core)]
    if not words or referential(core):
        return None
    head = words[-1]
    if head in _DIETS:
        return "diet", head
    if head in _RELIGIONS:
        return "religion", head
    if head in _MARITAL:
        return "marital_status", _MARITAL[head]
    if head == "major" and len(words) > 1:
        return "field_of_study", " ".join(core.split()[:-1])
    if head == "volunteer":
        where = re.search(r"\b(?:at|in|with|for)\s+(?P<w>.+)$", phrase, re.IGNORECASE)
        return ("volunteering", clean_en(where.group("w"))) if where else None
    if head in {"retiree", "pensioner"}:
        return "occupation", "retired"
    if _profession(head) and not _HOW_GOOD.match(core):
        return "occupation", core
    if head in vocab.THING_ALIASES and vocab.THING_ALIASES[head] in vocab.FAMILY_RELATIONS:
        return None  # "I'm a mother": a family fact said the other way round
    return f"identity.{slug(singular(head))}", core


def _possession_key(phrase: str) -> str | None:
    # "a lot of cows": the cows are what is had, not "a lot" (but "some of the best food" is no thing had)
    counted = _QUANTITY.sub("", phrase.strip())
    said = [
        w.lower() for w in _words(_PREPOSITIONS.sub("", phrase if counted.startswith("of ") else counted))
    ]
    if said and said[-1] in vocab.HEALTH_CONDITIONS | set(vocab.THING_ALIASES):
        condition = vocab.THING_ALIASES.get(said[-1], said[-1])
        if condition in vocab.HEALTH_CONDITIONS:
            return f"health.{condition}"  # before "diabetes" is singularised away
    words = [singular(w) for w in said]
    words = [w for w in words if w not in _ARTICLES]
    if not words:
        return None
    if "allergy" in words:
        return None  # the allergy rules read it
    # The head of the phrase names the pet or the relative: "a dog walking business" is no dog.
    for word in words[-1:]:
        species = vocab.THING_ALIASES.get(word, word)
        if species in vocab.PET_SPECIES:
            return f"pet.{species}"
        if word in vocab.DOG_BREEDS:
            return "pet.dog"
    for word in words[-1:]:
        relation = vocab.THING_ALIASES.get(word, word)
        if relation in vocab.FAMILY_RELATIONS:
            return f"family.{relation}"
        plural_relation = vocab.THING_ALIASES.get(word + "s")
        if plural_relation in vocab.FAMILY_RELATIONS:
            return f"family.{plural_relation}"
    joined = "_".join(words[-2:])
    for candidate in (joined, words[-1]):
        condition = vocab.THING_ALIASES.get(candidate.replace("_", " "), candidate)
        if condition in vocab.HEALTH_CONDITIONS:
            return f"health.{condition}"
    key = _key_words(phrase)
    return f"has.{key}" if key else None


def _resolve(thing: str, context: str) -> str | None:
    """The thing itself, or what a pronoun stands for in the previous turn; None when unresolved."""
    cleaned = thing.strip()
    if not cleaned:
        return None
    if not referential(cleaned):
        return cleaned
    if cleaned.lower() in {"it", "them", "that", "those", "these", "this"}:
        return antecedent(context)
    return None


_LIKING = re.compile(r"^(?:also\s+)?(?:really\s+)?(?:love|like|enjoy|adore)s?\s+(?=\S)", re.IGNORECASE)
# "go for walks", "going to the park": the outing is the thing.
_OUTING = re.compile(
    r"^(?:to\s+)?(?:go|going)\s+(?:for\s+(?:a\s+|long\s+|a\s+long\s+)?(?P<what>(?:walk|run|swim|hike|drive|ride|jog|bike ride)s?)\b|"
    r"to\s+(?:the\s+)?(?=\w))",
    re.IGNORECASE,
)


_INFINITIVE = re.compile(r"^to\s+(?=\w)", re.IGNORECASE)


_WITH = re.compile(r"\s+with\s+(?P<with>.+)$", re.IGNORECASE)


def _liked_with(item: str, *, said: str) -> str:
    """What a liked thing is with, as the user said it (" with black olives", " with my dog"), when
    the value would lose it: pizza with black olives is what is liked, not any pizza. Nothing for a
    phrase that leans on someone ("with them") or runs long."""
    found = _WITH.search(item.strip())
    if found is None or found.group(0).strip().lower() in said.lower():
        return ""
    phrase = clean_en(found.group("with"))
    if not phrase or referential(phrase) or len(phrase.split()) > 6:
        return ""
    return f" with {phrase}"


# "working with kids", "learning about history", "the feeling of the wind": a doing whose
# object follows a preposition.
_DOING_WITH = re.compile(
    r"^(?:the\s+)?(?P<doing>[a-z]+ing)\s+(?:with|about|on|in|at|to|for|into|around|over|of)\s+(?P<what>\S.*)$",
    re.IGNORECASE,
)


# Doings that say little without their object: "working", "learning", "going" (but "hiking in the
# mountains" is hiking, wherever it is done).
_VAGUE_DOINGS = frozenset({"work", "learn", "get", "go", "be", "feel", "try", "look", "have", "spend", "help", "do",
                           "make", "take", "talk", "think", "play", "find", "keep", "meet", "see", "hear",
                           "sing", "write", "read"})  # fmt: skip


def _liked_key(thing: str) -> str:
    """The key words of a liked thing; a vague doing is keyed with its object ("working with kids"
    → working_kid), or every "working with …" would land on one key and replace the last."""
    key = _key_words(thing)
    doing = _DOING_WITH.match(thing.strip())
    gerund = doing.group("doing").lower() if doing else ""
    if (
        doing
        and key == slug(singular(gerund))
        and (_GERUND_STEMS.get(gerund) or vocab.stem(gerund)) in _VAGUE_DOINGS
    ):
        return _key_words(f"{doing.group('doing')} {doing.group('what')}") or key
    return key


def _said_and_thing(item: str) -> tuple[str, str]:
    """An item of a list of likes as the user said it, and the liked thing in it."""
    outing = _OUTING.match(item.strip())
    # "go for walks with my dog": the value keeps the user's words, the key the outing.
    said = _LIKING.sub(
        "", item.strip()[: outing.end()] if outing and outing.group("what") else clean_en(item)
    )
    if outing:
        return said, _OUTING.sub(lambda m: m.group("what") or "", re.sub(r"^to\s+", "", said, flags=re.I))
    return said, re.sub(r"^to\s+", "", _CONSUMING.sub("", said), flags=re.IGNORECASE)


# A manner or a moment of something named elsewhere: "how it's made", "it when they sing",
# "the way you think".
_MANNER_OF_SOMETHING = re.compile(
    r"^\s*(?:how|when|it\s+when|the\s+way|that)\s+(?:it|they|you|he|she|we|this|that|these|those|there|"
    r"people|everyone|everything|i)(?:'s|’s|'re|’re|'m|’m)?\b",
    re.IGNORECASE,
)


def _bare_doing(said: str) -> bool:
    """A later item of a list of likes that is a verb with its object, said without "to" after a
    gerund ("getting to perform and share my music", "skate around and have fun"), not a thing
    ("fish and chips")."""
    words = said.split()
    if len(words) < 2 or binomials_joined(said) != said:
        return False
    first = words[0].lower()
    return first not in _LIKING_VERBS and (first in _VERB_WORDS or first in _ALSO_DOING_WORDS)


_ANOTHER_VERB = re.compile(r"^\s*(?:or|and|nor)\s", re.IGNORECASE)
_OR_LIST = re.compile(r"\s(?:or|nor)\s", re.IGNORECASE)
_AND_LIST = re.compile(r"\sand\s|&", re.IGNORECASE)


def _likes(*, negative: bool, verb: str = "") -> Reader:
    def read(match: re.Match[str], context: str) -> list[Found]:
        out = []
        raw = match.group("v")
        base_offset = match.start("v")
        if _MANNER_OF_SOMETHING.match(raw):
            return []  # "I like how it's both professional and stylish": what "it" is, the turn says
        if _ANOTHER_VERB.match(raw):
            return []  # "I don't drink or do drugs": the verb had no object; "or do drugs" is none
        items = _coordinated(list(_items(raw)), raw)
        # "I don't like cats or dogs" is neither; "I don't like A and B" may be the two together
        each_negated = negative and _OR_LIST.search(raw) is not None and _AND_LIST.search(raw) is None
        # "I like to hang out, go to the movies, and play video games": one "to" for every item
        infinitive = bool(items) and _INFINITIVE.match(items[0][0].strip()) is not None
        for index, (item, offset, head) in enumerate(items):
            said, thing = _said_and_thing(head)
            resolved = _resolve(thing, context)
            if resolved and re.match(r"^(?:the\s+)?way\b", resolved, re.IGNORECASE):
                break  # "the way it feels", "the way you think": a manner, no thing
            if not resolved or resolved.lower() in _FILLERS:
                continue  # "I love to read, too.": the last item of that list is no thing
            # "working with kids": the with-phrase the value keeps names the doing's object
            key = _liked_key(resolved + _liked_with(item, said=said) if resolved == thing else resolved)
            if resolved == thing:
                # the user's own words in the value: "likes to dance at the club", and with what was
                # joined to the item as said: "likes to take pictures of nature and landscapes"
                resolved = said if head is item else _LIKING.sub("", item.strip(" .,;:!?"))
                if index and (
                    (infinitive and (_LIST_VERB.match(said) or _VERB_FIRST.match(said))) or _bare_doing(said)
                ):
                    # "likes to go to the movies", not "likes go to the movies"; but "I like to eat
                    # pizza, pasta and fries" lists what is eaten: "likes pasta"
                    resolved = f"to {resolved}"
                if head is item:  # what it is with: "likes pizza with black olives"
                    resolved += _liked_with(item, said=said)
            if not key:
                continue
            words = verb or ("does not like" if negative else "likes")
            span = (base_offset + offset, base_offset + offset + len(item))
            out.append(_found(f"likes_{key}", f"{words} {resolved}", match, base=0.7, span=span))
            if negative and not each_negated:
                break  # "I don't like A and B": one negation, read once
        return out

    return read


_DESCRIBED = re.compile(
    r"\s+(?:(?:who|that)(?:'s|’s|\s+is|\s+are)\s+[^,;]+|(?:named|called)\s+(?-i:[A-Z])[\w'’-]*(?:\s+(?-i:[A-Z])[\w'’-]*)*)",
    re.IGNORECASE,
)


def _possessions(*, polarity: Polarity = "set") -> Reader:
    def read(match: re.Match[str], context: str) -> list[Found]:
        out = []
        raw, base_offset = match.group("v"), match.start("v")
        for item, offset in _items(raw):
            phrase = clean_en(item)
            if not phrase or _NOT_POSSESSION.match(phrase):
                continue
            resolved = _resolve(phrase, context)
            if not resolved or resolved is not phrase and not resolved:
                continue
            key = _possession_key(resolved)
            if key is None:
                continue
            span = (base_offset + offset, base_offset + offset + len(item))
            base = 0.9 if key.startswith("health.") else 0.8 if key.startswith("family.") else 0.75
            value = None if polarity == "unset" else resolved
            told = _DESCRIBED.search(item)
            if value and told and key.startswith(("family.", "pet.")) and told.group(0).strip() not in value:
                # "a daughter who's a child prodigy", "a cat named Spook": who they are is the fact
                value = f"{value} {told.group(0).strip()}"
            out.append(_found(key, value, match, base=base, polarity=polarity, span=span))
        return out

    return read


def _identity(*, polarity: Polarity = "set", only: frozenset[str] | None = None) -> Reader:
    def read(match: re.Match[str], context: str) -> list[Found]:
        classified = classify_identity(clean_en(match.group("v")))
        if classified is None:
            return []
        key, value = classified
        if only is not None and key not in only:
            return []
        base = (
            0.75
            if key in {"occupation", "field_of_study"}
            else 0.8
            if key in {"diet", "marital_status"}
            else 0.7
        )
        out = [_found(key, None if polarity == "unset" else value, match, base=base, polarity=polarity)]
        school = re.search(r"\bstudent\s+(?:at|in)\s+(?P<s>[^,.;!?]+)", match.group("v"), re.IGNORECASE)
        if school and polarity == "set":
            out.append(_found("school", clean_en(school.group("s")), match, base=0.75))
        return out

    return read


def _keyed(
    key: str, *, base: float, polarity: Polarity = "set", value: str | None = None,
    transform: Callable[[str], str] | None = None, whole_match: bool = False,
) -> Reader:  # fmt: skip
    def read(match: re.Match[str], context: str) -> list[Found]:
        raw = clean_en(match.group("v"))
        text = value if value is not None else (transform(raw) if transform else raw)
        if not text or referential(text):
            return []
        span = match.span() if whole_match else None
        return [
            _found(key, None if polarity == "unset" else text, match, base=base, polarity=polarity, span=span)
        ]

    return read


def _favorite(match: re.Match[str], context: str) -> list[Found]:
    raw_thing = re.sub(r"^(?:all[- ]time|absolute|very|most)\s+", "", match.group("t").strip().lower())
    thing = vocab.thing(raw_thing)
    value = re.sub(
        r"\s+(?:now|these days|right now|for sure|by far)$", "", clean_en(match.group("v")), flags=re.I
    )
    value = _strip_article(value) if not value[:1].isupper() else value
    if not thing or thing == "_" or not value or referential(value):
        return []
    # The whole statement is the fact's own words: "Blue is my favorite color" with the value
    # masked out must not read as the question "is my …".
    return [_found(f"favorite_{thing}", value, match, base=0.7, span=match.span())]


def _health(match: re.Match[str], context: str) -> list[Found]:
    raw = clean_en(match.group("v"))
    words = [w.lower() for w in _words(raw)]
    if not words or referential(raw):
        return []
    joined = " ".join(w for w in words if w not in _ARTICLES)
    condition = _HEALTH_ADJECTIVES.get(joined) or vocab.THING_ALIASES.get(joined) or slug(joined)
    value = condition.replace("_", " ") if joined in _HEALTH_ADJECTIVES else _strip_article(raw)
    return [_found(f"health.{condition}", value, match, base=0.9)]


def _plan(match: re.Match[str], context: str) -> list[Found]:
    raw = clean_en(match.group("v"))
    words = _words(raw)
    if not words or referential(raw) or (len(words) > 1 and referential(" ".join(words[1:]))):
        return []
    if re.search(r"\b(?:you|your)\b", raw, re.IGNORECASE):
        return []  # "getting to know you better": about the conversation, not the user's life
    first = words[0].lower()
    if first in _ARTICLES:
        thing = _key_words(raw, limit=2)
        return [_found(f"plan.{thing}", raw, match, base=0.7, span=match.span())] if thing else []
    verb = vocab.verb_lemma(first)
    return [_found(f"plan.{slug(verb)}", raw, match, base=0.7, span=match.span())]


_GERUND_STEMS = {"going": "go", "getting": "get", "doing": "do", "being": "be", "making": "make",
                 "having": "have", "taking": "take", "moving": "move", "starting": "start"}  # fmt: skip


_SINGLE_VALUED_VERBS = {"drive": "vehicle", "volunteer": "volunteering"}
_ACTIVITY_VERBS = (
    "play|volunteer|coach|teach|collect|compete|sing|write|paint|draw|knit|sew|bake|cook|swim|hike|"
    "fish|hunt|garden|grow|raise|train|ride|practice|practise|build|brew|restore|race|surf|ski|"
    "skate|climb|bike|walk|meditate|breed|foster|rescue|blog|design|code|drive|see|visit|attend|"
    "run|watch|read|listen to|do|make|speak|wear|sell|own|manage|go"
)
# An item of a list that goes on an infinitive ("I like to hang out, go to the movies, and play
# games") when it starts with one of these; otherwise it is an object ("… to eat pizza, pasta").
_MORE_VERBS = (
    "eat|drink|spend|hang|explore|travel|dance|learn|try|take|get|work|relax|sleep|shop|camp|sunbathe|"
    "meet|help|study|chat|talk|stay|keep|find|fly|jog|party"
)
_LIST_VERB = re.compile(rf"^(?:{_ACTIVITY_VERBS}|{_MORE_VERBS})\b", re.IGNORECASE)
# Verbs of talk, thought and modality: "I think …", "I know what you mean", "I can …" state
# no fact about the user by themselves.
_NOT_ACTIVITY = (
    "came|come|fell|am|was|were|have|had|has|do|did|does|don't|dont|didn't|doesn't|can|can't|cannot|could|couldn't|would|"
    "wouldn't|will|won't|should|shouldn't|might|must|may|shall|think|thought|know|knew|mean|meant|guess|hope|"
    "agree|understand|understood|see|saw|bet|wonder|wondered|feel|felt|imagine|believe|remember|suppose|"
    "appreciate|like|love|enjoy|want|wanted|need|needed|hate|try|tried|hear|heard|say|said|tell|told|ask|"
    "asked|wish|get|got|find|found|just|also|really|usually|totally|definitely|look|looked|sound|sounds|"
    "recommend|prefer|used|use|mind|promise|doubt|admire|admit|assume|expect|forgot|forget|realize|realized|"
    "learned|learn|noticed|notice|bet|swear|suggest|figure|figured|hear|haven't|hadn't|wasn't|weren't|"
    "also|already|still|never|ever|even|only|always|often|sometimes|love|care|cared|totally|kinda|sorta|"
    "miss|missed|gotta|gonna|wanna|keep|kept|let|put|call|called|thank|thanks|apologize|hate|dislike|"
    "read|heard|thinking|reckon|trust|worry|worried|wish|bet|owe|deserve|happen|happened|"
    "seem|seemed|started|start|stopped|stop|quit|began|begin|became|become|moved|live|lived|grew|work|worked|"
    "made|went|hated|loved|liked|enjoyed|especially|particularly|mainly|personally|am|is|are|now|currently|"
    "actually|recently|finally|honestly|truly|mostly|generally|normally|regularly|basically|absolutely|"
    "primarily|probably|maybe|once|first|then|soon|later|sometimes|not|no|joined|join|switched|left|leave|"
    "relocated|rent|rented|changed|turned|retired"
)
_TIME = re.compile(
    r"^(?:(?:\w+\s+)?(?:hours?|times?|minutes?|days?|nights?)\s+(?:a|per|each|every)\b|"
    r"every|each|once|twice|daily|weekly|often|always|sometimes|on\s+(?:weekends|sundays|saturdays)|"
    r"in\s+the\s+(?:morning|evening)s?|a\s+lot|at\s+night)\b",
    re.IGNORECASE,
)


# What follows "I do" when it answers rather than states ("I do too", "I do the same thing").
_DO_REPLY = re.compile(
    r"^(?:too|so|as well|either|neither|both|that|this|it|(?:the\s+)?same(?:\s+thing)?|a\s+(?:little\s+)?bit\b|"
    r"everything|anything|something|nothing|all of (?:them|those|these))\b",
    re.IGNORECASE,
)
_NOT_A_VERB = frozenset({"the", "a", "an", "my", "our", "your", "his", "her", "their", "its", "this", "that",
                         "these", "those", "some", "any", "all", "both", "each", "every", "same"})  # fmt: skip
# A verb after "I do": the "do" stresses it ("I do miss the city", "I do play sometimes").
_DO_EMPHASIS = re.compile(
    rf"^(?!do\b)(?:{_ACTIVITY_VERBS}|{_MORE_VERBS}|miss|love|like|enjoy|hate|think|know|want|feel|"
    r"believe|hope|need|appreciate|agree|remember|wish|have)\b",
    re.IGNORECASE,
)


_VERB_WORDS = frozenset(f"{_ACTIVITY_VERBS}|{_MORE_VERBS}".split("|"))


# Verbs that say little without their object ("play", "make", "watch", "read"): a habit of its own
# is a verb such as "run", "dance" or "swim".
_TAKES_AN_OBJECT_TEXT = """play do make see watch work go take get try learn keep find help meet spend read listen_to
    own sell manage wear speak visit attend collect build restore raise breed foster rescue design grow train
    practice practise coach teach ride drive"""
_TAKES_AN_OBJECT = frozenset(_TAKES_AN_OBJECT_TEXT.split())


def _base_verb(gerund: str) -> str | None:
    """The verb of a gerund ("riding" → "ride"), when it is one of the activities' verbs."""
    word = gerund.lower()
    stem = _GERUND_STEMS.get(word) or vocab.stem(word)
    return next(
        (verb for verb in (stem, f"{stem}e") if verb in _VERB_WORDS or f"{verb} to" in _VERB_WORDS), None
    )


def _activity(*, polarity: Polarity = "set", ongoing: bool = False) -> Reader:
    """`ongoing`: the verb is a gerund after "I've been" ("I've been riding horses since I was a
    kid"), read as the activity of its verb ("ride horses")."""

    def read(match: re.Match[str], context: str) -> list[Found]:
        said_verb, said = match.group("verb"), match.group("v")
        if said_verb.lower() in {"grow", "grew"} and re.match(r"^\s*up\b", said, re.IGNORECASE):
            return []  # "when I grow up": growing older, no garden
        if ongoing:
            base = _base_verb(said_verb)
            if base is None:
                return []  # "I've been meaning to", "I've been thinking about it"
            if base == "work" and re.match(r"^\s*(?:at|for|as)\b", said, re.IGNORECASE):
                return []  # an employer or an occupation, which their own rules read
            if base == "try" and re.match(r"^\s*to\b", said, re.IGNORECASE):
                return []  # "I've been trying to learn it": an attempt, no habit yet
            if base == "listen" and re.match(r"^\s*to\s", said):
                base, said = "listen to", re.sub(r"^\s*to\s+", "", said)
            # "for a few years now", "since I was three": how long, not what
            said_verb, said = (
                base,
                re.sub(r"^\s*(?:for|since|ever since)\b.*$", "", said, flags=re.IGNORECASE),
            )
        verb = said_verb.lower().replace(" ", "_")
        raw = clean_en(said)
        if verb in _NOT_A_VERB:
            return []  # "I do the same thing": with "do" read as stress, the long tail met "the"
        if verb == "do" and (not raw or _DO_REPLY.match(raw) or _DO_EMPHASIS.match(raw)):
            # "I do too", "I do the same": a reply, no fact of its own. "I do drink tea": "do"
            # only stresses the verb after it, which the other rules read.
            return []
        if verb == "go":
            going = re.match(r"^(?P<g>[a-z]+ing)\b\s*(?P<rest>.*)$", raw, re.IGNORECASE)
            if going is None:
                to_place = re.match(r"^to\s+(?P<rest>.+)$", raw, re.IGNORECASE)
                if to_place is None:
                    return []
                raw = to_place.group("rest")
            else:
                verb, raw = vocab.verb_lemma(going.group("g")), going.group("rest")
        if verb == "speak":
            names = [w for w in _words(raw) if w[:1].isupper()]
            return [
                _found(f"language.{slug(n)}", None if polarity == "unset" else n, match, base=0.75)
                for n in names[:4]
            ]
        if raw and referential(raw) and _TIME.match(raw) is None:
            return []
        obj = "" if _TIME.match(raw or "") else _key_words(raw, limit=2)
        if verb in _SINGLE_VALUED_VERBS:
            if not obj:
                return []
            value = _strip_article(_PREPOSITIONS.sub("", raw)) if verb == "drive" else raw
            return [_found(_SINGLE_VALUED_VERBS[verb], None if polarity == "unset" else value, match, base=0.75,
                           polarity=polarity)]  # fmt: skip
        if ongoing and not obj and verb in _TAKES_AN_OBJECT:
            return []  # "I've been playing since I was a kid": playing what, the turn before says
        key = f"{verb}.{obj}" if obj else f"habit.{vocab.verb_lemma(verb)}"
        text = f"{said_verb} {clean_en(said)}".strip()
        return [_found(key, None if polarity == "unset" else text, match, base=0.7, polarity=polarity)]

    return read


_NOT_A_NAME = frozenset({"Sorry", "Fine", "Good", "Glad", "Happy", "Sure", "Here", "Back", "Home", "Ok", "Okay",
                        "Not", "So", "Just", "Doing", "Well", "Great"})  # fmt: skip


_RELATIONS = (
    "children|kids?|sons?|daughters?|sisters?|brothers?|siblings?|twins?|wife|husband|partner|boyfriend|girlfriend|"
    "fianc[eé]e?|mother|father|mom|mum|dad|parents|grandkids|grandchildren|grandmother|grandfather|grandma|grandpa|"
    "grandparents|cousins?|aunt|uncle|niece|nephew|family"
)
_RELATION_VERBS = (
    "is|are|was|were|has|have|had|lives|live|lived|works|work|worked|plays|play|played|passed away|died|"
    "owns|own|loves|love|likes|like|runs|ran|teaches|taught|coaches|coached|travels|traveled|travelled|"
    "raised|moved|got|goes|go|went|makes|made|sings|sang|drives|drove|studies|studied|helps|helped|"
    "cooks|cooked|used to|always|never|also|still"
)
_RELATION_ASPECTS = (
    (re.compile(r"^(?:passed away|died|is dead|was killed)\b", re.I), "deceased"),
    (re.compile(r"^(?:lives|lived|live|has moved|moved)\s+(?:in|to|on|at|next|near|with|far|across)\b", re.I), "home"),
    (re.compile(r"^(?:works|worked|work)\s+(?:as|at|for|in|on)\b", re.I), "occupation"),
    (re.compile(r"^(?:is|was|are|were)\s+(?:an?\s+|in the\s+)", re.I), "occupation"),
)  # fmt: skip


def _relation(match: re.Match[str], context: str) -> list[Found]:
    """'My father is in the army' → family.father.occupation; 'my mom passed away' →
    family.mom.deceased: the user's family, each aspect a key of its own."""
    rel_words = [w.lower() for w in _words(match.group("rel"))]
    head = vocab.THING_ALIASES.get(rel_words[-1], rel_words[-1])
    head = {"mum": "mom", "kid": "children", "kids": "children", "son": "son", "sons": "son"}.get(head, head)
    head = singular(head) if head not in vocab.FAMILY_RELATIONS else head
    predicate = clean_en(match.group("v"))
    predicate = re.sub(r"^\w+ly\s+", "", predicate)
    if not predicate or len(_words(predicate)) < 2 or referential(" ".join(_words(predicate)[1:])):
        return []
    aspect = next((name for regex, name in _RELATION_ASPECTS if regex.match(predicate)), "")
    if aspect == "occupation":
        described = classify_identity(
            re.sub(r"^(?:is|was|are|were|works|worked|work)\s+(?:as\s+)?", "", predicate)
        )
        if described is None or described[0] != "occupation":
            aspect = "" if not re.match(r"^(?:is|was|are|were)\s+in the\b", predicate, re.I) else aspect
    if not aspect:
        first = _words(predicate)[0].lower()
        if first in {"has", "have", "had"}:
            aspect = _possession_key(re.sub(r"^\w+\s+", "", predicate)) or ""
            aspect = aspect.replace("has.", "").replace("family.", "")
        elif first in {"is", "are", "was", "were"}:
            aspect = "description"  # "is a year older than me", "are the best"
        else:
            aspect = slug(vocab.verb_lemma(first))
    if not aspect:
        return []
    who = "_".join(singular(w) for w in rel_words[:-1] + [head]) if len(rel_words) > 1 else head
    # The person is masked for the gate (it is the subject, not someone reported), the predicate
    # is read: "my mom is coming tomorrow" is a plan.
    span = (match.start(), match.end("rel"))
    return [_found(f"family.{slug(who)}.{aspect}", predicate, match, base=0.75, span=span)]


def _trait(match: re.Match[str], context: str) -> list[Found]:
    trait = match.group("v").lower()
    key = "religion" if trait in _RELIGIONS else f"identity.{slug(trait)}"
    return [_found(key, trait, match, base=0.7)]


def _name(match: re.Match[str], context: str) -> list[Found]:
    value = match.group("v").strip()
    if value in _NOT_A_NAME or value.lower() in _MARITAL.keys() | _RELIGIONS | _PEOPLES:
        return []
    return [_found("name", value, match, base=0.85)]


def _name_of_mine(match: re.Match[str], context: str) -> list[Found]:
    """ "My dog's name is Max": the name of a pet or a relative, under its key ('pet.dog.name')."""
    key = _possession_key(f"a {match.group('who')}")
    value = match.group("v").strip()
    if key is None or not key.startswith(("pet.", "family.")) or value in _NOT_A_NAME:
        return []
    return [_found(f"{key}.name", value, match, base=0.8)]


# --- the English rules ------------------------------------------------------------------------

_ADV = r"(?:\s+(?:also|really|still|just|now|currently|actually|already|usually|often|always|sometimes|even|only|definitely|absolutely|totally|honestly|recently|finally|truly|mostly|generally|normally|regularly|basically|especially|particularly|mainly|primarily|personally|do|does))*"  # noqa: E501
_I = rf"\bI{_ADV}"
_IM = rf"\bI(?:'m|’m|\s+am){_ADV}"
_V = r"(?P<v>[^,.;!?\n]+)"
_MONTHS = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
# When, not where: "born in 1922", "born on July 4th, 1990", "born in the 80s", "born in May".
_WHEN_BORN = (
    rf"(?:the\s+)?(?:{_MONTHS}(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?(?:,?\s+\d{{4}})?|\d{{1,2}}(?:st|nd|rd|th)?\s+of\s+{_MONTHS}"
    rf"(?:,?\s+\d{{4}})?|\d{{4}}s?|['’]?\d0s)\b"
)
_VLIST = r"(?P<v>[^.;!?\n]+)"  # up to the sentence's end: lists ("A, B, and C") are split after
_NO_LONGER = r"(?:no longer|don't|do not|dont|don’t)"

EnRule = tuple[str, re.Pattern[str], Reader]


def _en(name: str, pattern: str, reader: Reader) -> EnRule:
    return (name, re.compile(pattern, re.IGNORECASE), reader)


EN_RULES: list[EnRule] = [
    _en("likes.no_longer", rf"{_I}\s+{_NO_LONGER}\s+(?:really\s+)?(?:like|love|enjoy|drink|eat)\s+{_V}", _likes(negative=True)),
    _en("likes.stopped", rf"{_I}(?:'ve| have)?\s+(?:stopped|quit|given up|gave up)\s+(?!my job\b|my\s+\w+\s+job\b|working\b)(?P<v>[^,.;!?\n]+)", _likes(negative=True, verb="no longer likes")),
    _en("likes.hate", rf"{_I}\s+(?:hate|dislike|detest|can't stand|cannot stand|can’t stand)\s+{_V}", _likes(negative=True, verb="dislikes")),
    _en("likes", rf"{_I}\s+(?:like|love|enjoy|adore|prefer|am into|'m into|am passionate about|'m passionate about|am a big fan of|'m a big fan of)\s+{_VLIST}", _likes(negative=False)),
    _en("favorite", r"\bmy\s+(?:all[- ]time\s+|absolute\s+|very\s+)?favou?rite\s+(?P<t>[a-z]+(?:\s+(?:of\s+)?[a-z]+){0,2}?)\s+(?:is|are|was|has to be|would have to be)\s+" + _V, _favorite),
    _en("favorite.after", r"(?:^|[,;]\s*|\b(?:now|and|but|so)\s+)(?P<v>(?!I\b|it\b|that\b|this\b)[A-Za-z][\w'’ -]{0,40}?)\s+(?:is|are)\s+(?:now\s+)?my\s+(?:all[- ]time\s+|absolute\s+)?favou?rite\s+(?P<t>[a-z]+(?:\s+[a-z]+)?)\b", _favorite),
    _en("age.decade", rf"{_IM}\s+(?P<v>in my (?:early |mid |late )?(?:teens|twenties|thirties|forties|fifties|sixties|seventies|eighties|nineties|20s|30s|40s|50s|60s|70s|80s))\b", _keyed("age", base=0.75)),
    _en("age", rf"{_IM}\s+(?P<v>\d{{1,3}}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty)(?=\s+years?\s+old|\s*(?:[,.;!?]|$)|\s+(?:and|now|too|myself|as well)\b)", _keyed("age", base=0.75)),
    _en("age.article", rf"{_IM}\s+an?\s+(?P<v>\d{{1,3}})[- ]years?[- ]old\b", _keyed("age", base=0.75)),
    _en("aged.identity", rf"{_IM}\s+an?\s+\d{{1,3}}[- ]years?[- ]old\s+(?P<v>(?!and\b|now\b)[^,.;!?\n]+)", lambda m, c: _identity()(m, c) if (m.group("v").split() or [""])[0].lower() not in {"and", "but", "so"} else []),
    _en("identity.former", rf"{_IM}\s+(?:an?\s+)?(?P<v>(?:ex|former)[- ](?:military|army|navy|marine|cop|soldier|teacher|nurse|\w+er|\w+or|\w+ist))\b", _keyed("occupation", base=0.7)),
    _en("job_search", rf"{_IM}\s+(?:currently\s+|still\s+)?(?:looking for|searching for|hunting for)\s+(?P<v>(?:a\s+)?(?:new\s+|better\s+|part[- ]time\s+|full[- ]time\s+)?(?:job|work|position)\b[^,.;!?\n]*)", _keyed("job_search", base=0.7, whole_match=True)),
    _en("expecting", rf"(?:{_IM}|\bwe(?:'re| are))\s+(?:currently\s+)?expecting\s+(?P<v>(?:a\s+)?(?:baby|babies|twins|triplets|boy|girl|child|son|daughter|our first|my first)[^,.;!?\n]*)", _keyed("family.expecting", base=0.75, whole_match=True)),
    _en("age.turned", rf"{_I}\s+turned\s+(?P<v>\d{{1,3}})\b", _keyed("age", base=0.75)),
    _en("occupation.retired", rf"(?:{_IM}\s+(?P<v>retired)\b|{_I}\s+(?P<w>retired)\b)", lambda m, c: [_found("occupation", "retired", m, base=0.75, group="v" if m.group("v") else "w")]),
    _en("occupation.started", rf"{_I}(?:'ve| have)?\s+(?:started|got|landed|took)\s+(?:a\s+|my\s+)?(?:new\s+)?job\s+as\s+(?:an?\s+)?{_V}", _identity(only=frozenset({"occupation"}))),
    _en("occupation.military", rf"{_IM}\s+in\s+the\s+(?P<v>army|navy|air force|marines|military|coast guard|national guard)\b", _keyed("occupation", base=0.75, transform=lambda v: f"in the {v}")),
    _en("employer.got", rf"{_I}(?:'ve| have)?\s+(?:got|landed|found|started)\s+(?:a\s+|my\s+)?(?:new\s+)?job\s+(?:at|with)\s+{_V}", _keyed("employer", base=0.8, transform=lambda v: _strip_article(v))),
    _en("employer.started", rf"(?:{_I}(?:'ve| have)?\s+started\s+working|{_IM}\s+employed)\s+(?:at|for|by|with)\s+{_V}", _keyed("employer", base=0.8)),
    _en("workplace", rf"{_I}\s+(?:work|am working|'m working)(?:\s+(?:full[- ]?time|part[- ]?time|nights|hard))?\s+(?:in|on)?\s*(?P<v>(?:the|a|an|my)\s+(?!own\b)[^,.;!?\n]+)", _keyed("employer", base=0.75)),
    # A named employer, as a relative clause gives it ("a 19 year old who works part time at Burger King").
    _en("workplace.named", rf"{_I}\s+work(?:\s+(?:full[- ]?time|part[- ]?time|nights|weekends))?\s+(?:at|for)\s+(?P<v>(?-i:[A-Z0-9])[\w&'’.-]*(?:\s+(?:(?-i:[A-Z0-9&])[\w&'’.-]*|of|de|the|and(?=\s+(?-i:[A-Z]))))*)", _keyed("employer", base=0.75)),
    _en("work_arrangement", rf"{_I}\s+work\s+(?P<v>from home|remotely|nights|night shifts?|part[- ]time|full[- ]time|two jobs|weekends|overtime)\b", _keyed("work_arrangement", base=0.75)),
    _en("name.of_mine", r"\bmy\s+(?P<who>[a-z]+)(?:'s|’s)\s+name\s+is\s+(?P<v>(?-i:[A-Z])[\w'’-]*(?:\s+(?-i:[A-Z])[\w'’-]*)*)", _name_of_mine),
    _en("name.im", r"(?:^|\b(?:hi|hello|hey|yes|oh)\b[,!]?\s*)I(?:'m|’m| am)\s+(?P<v>(?-i:[A-Z][a-z]+))(?=\s*(?:[,.!;]|$))", _name),
    _en("trait", rf"{_IM}\s+(?:very\s+|pretty\s+|quite\s+|so\s+|a\s+bit\s+|kind of\s+)?(?P<v>{_TRAITS})\b", _trait),
    _en("occupation.as", rf"{_I}\s+(?:work|am working|'m working)\s+as\s+(?:an?\s+)?{_V}", _identity(only=frozenset({"occupation"}))),
    _en("occupation.became", rf"{_I}\s+(?:became|have become|'ve become)\s+(?P<v>an?\s+[^,.;!?\n]+)", _identity()),
    _en("identity.unset", rf"{_IM}\s+(?:no longer|not)\s+(?P<v>(?:an?\s+)?[\w -]+?)(?:\s+(?:anymore|any more|now))?\s*(?=[,.;!?]|$)", _identity(polarity="unset", only=frozenset({"occupation", "diet", "marital_status"}))),
    _en("identity", rf"{_IM}\s+(?P<v>an?\s+(?!\d)[^,.;!?\n]+)", _identity()),
    _en("likes.not_devotee", rf"(?:{_IM}\s+not|{_I}(?:'ve|’ve|\s+have)\s+never\s+been)\s+(?:(?:a|an|really|very|such|much|of|huge|big|great)\s+)*(?:fan|lover)\s+of\s+{_V}", _likes(negative=True)),
    _en("identity.devotee", rf"{_IM}\s+(?P<v>(?:an?\s+)?(?:(?:really|very|such|total|huge|big|great|avid|die[- ]hard|true|pretty)\s+)*(?:(?!(?:not|to|you\S*|that|hear|glad|so|sure)\b)[A-Za-z][\w'’-]*\s+){{0,3}}?(?:fan|lover|enthusiast|buff|fanatic|junkie)s?\b(?:\s+of\s+[^,.;!?\n]+)?)", _identity()),
    _en("diet.bare", rf"{_IM}\s+(?P<v>vegetarian|vegan|pescatarian)\b", _keyed("diet", base=0.8)),
    _en("diet.on", rf"(?:{_IM}\s+on|{_I}\s+(?:follow|eat|keep))\s+an?\s+(?P<v>[\w-]+)\s+diet\b", _keyed("diet", base=0.8)),
    _en("family.married_with", rf"{_IM}\s+(?:happily\s+)?married\s+with\s+(?P<v>(?:\w+\s+){{0,2}}(?:kids|children|sons|daughters|a son|a daughter|a kid|a child))\b", _possessions()),
    _en("relationship", rf"{_IM}\s+in\s+(?P<v>an?\s+(?:[\w-]+\s+){{0,3}}relationship)\b", _keyed("marital_status", base=0.75, transform=lambda v: _strip_article(v))),
    _en("member", rf"{_IM}\s+(?:on|in|part of)\s+(?:the|a|my|our)\s+(?P<v>(?:[\w-]+\s+){{0,3}}(?:team|squad|crew|club|band|choir|orchestra|board|council|committee|league|union|guild|society|troop))\b", lambda m, c: [_found(f"member.{_key_words(m.group('v'))}", m.group("v"), m, base=0.7)]),
    _en("fear", rf"(?:{_IM}|{_I}\s+was|{_I}(?:'ve|’ve| have) always been)\s+(?:very\s+|so\s+|really\s+|deathly\s+)?(?:terrified|afraid|scared|frightened)\s+of\s+{_V}", lambda m, c: [_found(f"fear.{k}", clean_en(m.group("v")), m, base=0.7)] if (k := _key_words(clean_en(m.group("v")))) and not referential(m.group("v")) else []),
    _en("visited", rf"{_I}(?:'ve|’ve|\s+have)\s+(?:(?!never\b|not\b)\w+\s+)?(?:been\s+to|visited)\s+(?!a few\b|many\b|some\b|lots\b|a lot\b){_V}", lambda m, c: [_found(f"visited.{k}", clean_en(m.group("v")), m, base=0.7)] if (k := _key_words(clean_en(m.group("v")))) and not referential(m.group("v")) else []),
    _en("project", rf"{_IM}\s+(?:currently\s+)?working\s+on\s+{_V}", lambda m, c: [_found(f"project.{k}", clean_en(m.group("v")), m, base=0.7)] if (k := _key_words(clean_en(m.group("v")), limit=2)) and not referential(m.group("v")) else []),
    _en("marital", rf"{_IM}\s+(?:happily\s+)?(?P<v>married|single|divorced|engaged|widowed|separated)\b", _keyed("marital_status", base=0.8)),
    _en("marital.got", rf"{_I}\s+got\s+(?P<v>married|divorced|engaged)\b", _keyed("marital_status", base=0.8)),
    _en("health.adjective", rf"{_IM}\s+(?:a\s+)?(?P<v>{'|'.join(_HEALTH_ADJECTIVES)})\b", _health),
    _en("health.suffer", rf"(?:{_I}\s+suffer\s+from|{_I}\s+(?:have|'ve)\s+been\s+diagnosed\s+with)\s+{_V}", _health),
    _en("birth_date", rf"{_I}\s+was\s+born\s+(?:in|on)\s+(?P<v>{_WHEN_BORN})", _keyed("birth_date", base=0.75)),
    _en("hometown", rf"(?:{_IM}\s+(?:originally\s+)?from|{_I}\s+(?:grew up|was raised|was born|come from)\s+(?:in|on|from)?)\s+(?!{_WHEN_BORN}){_V}", _keyed("hometown", base=0.75)),
    _en("school.grade", rf"{_IM}\s+in\s+(?:the\s+)?(?P<v>(?:\d{{1,2}}(?:st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth)\s+grade)\b", _keyed("school_grade", base=0.75)),
    _en("school.in", rf"{_IM}\s+in\s+(?P<v>(?:high|middle|elementary|grad|graduate|law|medical|nursing|art|culinary)\s+school|college|university)\b", _keyed("school", base=0.75)),
    _en("school.go", rf"{_I}\s+(?:go to|attend|study at|transferred to)\s+(?P<v>[^,.;!?\n]*(?:school|college|university|academy|institute)\b|(?-i:[A-Z])[\w&'’-]*(?:\s+(?-i:[A-Z])[\w&'’-]*)*)", _keyed("school", base=0.75)),
    _en("career_goal", rf"(?:{_I}|\bI'd)\s+(?:want|hope|plan|intend|dream|aspire|wish|would like)\s+to\s+(?:be|become)\s+(?!able\b|happy\b|sure\b|ready\b|careful\b|there\b|with\b|more\b|better\b|healthy\b|free\b)(?:an?\s+)?{_V}|{_IM}\s+studying\s+to\s+(?:be|become)\s+(?:an?\s+)?{_V.replace('v', 'w', 1)}", lambda m, c: _career_goal(m, c)),
    _en("field_of_study", rf"(?:{_I}\s+(?:study|major in)|{_IM}\s+(?:studying|majoring in)|\bswitched my major to)\s+(?!to\b|at\b|in\b){_V}", _keyed("field_of_study", base=0.75)),
    _en("plan", rf"(?:{_I}\s+(?:want|hope|plan|intend|am planning|'m planning)\s+to|{_IM}\s+(?:planning on|looking forward to|saving up for|saving (?:money )?to)|{_I}\s+dream\s+(?:of|about)|\bmy\s+(?:goal|dream|plan)\s+is\s+to)\s+(?!be\b|become\b)(?P<v>[^,.;!?\n]+)", _plan),
    _en("have.unset", rf"{_I}\s+(?:{_NO_LONGER}\s+(?:have|own)|no longer\s+(?:have|own))\s+(?:an?\s+|any\s+)?{_V}", _possessions(polarity="unset")),
    _en("relation", rf"\bmy\s+(?P<rel>(?:(?:best|older|younger|little|big|twin|baby|step|late|ex)[- ]?)?(?:{_RELATIONS}))(?:'s|’s)?\s+(?!and\b|or\b|who\b)(?P<v>(?:\w+ly\s+)?(?:{_RELATION_VERBS})\b[^,.;!?\n]*)", _relation),
    _en("have", rf"(?:{_I}|\bwe)(?:\s+have|'ve got|’ve got|\s+have got|\s+own|\s+got|\s+bought|\s+adopted)\s+(?!to\b){_VLIST}", _possessions()),
    _en("activity.unset", rf"{_I}\s+{_NO_LONGER}\s+(?P<verb>{_ACTIVITY_VERBS})\s+(?P<v>[^,.;!?\n]*)", _activity(polarity="unset")),
    _en("activity.ongoing", rf"{_I}(?:'ve|’ve|\s+have)\s+been{_ADV}\s+(?P<verb>[a-z]+ing)(?=\s|$)(?P<v>[^,.;!?\n]*)", _activity(ongoing=True)),
    _en("activity", rf"{_I}\s+(?P<verb>{_ACTIVITY_VERBS})(?=\s)(?!\s+not\b)\s*(?P<v>[^,.;!?\n]*)", _activity()),
    _en("activity.any", rf"{_I}\s+(?P<verb>(?!(?:{_NOT_ACTIVITY})\b)[a-z]{{3,}})(?=\s)\s+(?P<v>(?!(?:to|that|what|how|why|where|if|so|it|you|this|that|about)\b)[^,.;!?\n]+)", _activity()),
]  # fmt: skip


def _career_goal(match: re.Match[str], context: str) -> list[Found]:
    if not match.group("v"):
        return _career_w(match, context)
    said = clean_en(match.group("v"))
    # "I want to be a nurse", "… to become president"; but "I want to be smart" is no career
    if not re.search(r"\b(?:be|become)\s+an?\s", match.group(0), re.IGNORECASE) and not (
        said and _profession(said.split()[-1])
    ):
        return []
    return _keyed("career_goal", base=0.7, whole_match=True)(match, context)


def _career_w(match: re.Match[str], context: str) -> list[Found]:
    value = clean_en(match.group("w"))
    return [_found("career_goal", value, match, base=0.7, span=match.span())] if value else []


# Rules that yield a key already read from the same words by an earlier rule stand down.
_FIRST_WINS = {"identity", "have", "activity", "likes"}


# A new clause starts a new reading: "I like country music, and I met Taylor Swift" is two
# statements, and the first one's list must not swallow the second. A clause starts where the
# user speaks again ("…, and I …", "… but my sister is …") or another subject does ("I have a
# dog and we hike", "… because it's calming"): its words are then no item of the list before it.
_CLAUSE = re.compile(
    r"(?:\s*[,;]\s*(?:and|but|so|then|plus|because|though|although|while)?|"
    r"\s+(?:and|but|so|then|plus|because|though|although|while|since|or))\s+"
    r"(?=(?:I|I'm|I’m|I've|I’ve|I'd|I’d|we|they|he|she|it|you)\b|my\s+(?:\w+\s+){0,2}(?:is|are|was|were|has|had|lives|lived|works|worked|"
    r"passed away|died|plays|played|loves|owns)\b)",
    re.IGNORECASE,
)


def clauses(sentence: str) -> Iterator[tuple[str, int]]:
    """The sentence's clauses, each with its offset in the sentence (only first-person ones yield facts)."""
    start = 0
    for match in _CLAUSE.finditer(sentence):
        if match.start() > start:
            yield sentence[start : match.start()], start
        start = match.end()
    if start < len(sentence):
        yield sentence[start:], start


# "I'm a retired teacher who volunteers at a soup kitchen": the relative clause is the user's too.
_WHO = re.compile(
    r"^(?P<head>.*?\bI(?:'m|’m|\s+am)\s+(?:an?|the)\s+[^,;]*?)\s+who\s+(?P<rest>(?!am\b|is\b|are\b|was\b)\w+s\b.*)$",
    re.I,
)
_THIRD_PERSON = {"has": "have", "does": "do", "goes": "go", "is": "am"}


def _first_person(verb_phrase: str) -> str:
    """'volunteers at a soup kitchen and has superpowers' → 'I volunteer at a soup kitchen and I have superpowers'."""
    out = []
    for part in re.split(r"\s+and\s+(?=\w+s\b)", verb_phrase):
        verb, _, rest = part.partition(" ")
        lower = verb.lower()
        if lower in _THIRD_PERSON:
            verb = _THIRD_PERSON[lower]
        elif lower.endswith("ies") and len(lower) > 4:
            verb = verb[:-3] + "y"
        elif lower.endswith(("ches", "shes", "sses", "xes", "zes")):
            verb = verb[:-2]
        elif lower.endswith("s") and not lower.endswith("ss"):
            verb = verb[:-1]
        out.append(f"I {verb} {rest}".strip())
    return " and ".join(out)


def _with_relatives(clause: str, offset: int) -> Iterator[tuple[str, int]]:
    who = _WHO.match(clause)
    if who is None:
        yield clause, offset
        return
    yield who.group("head"), offset
    # A reading of the relative clause; its spans point at the relative clause in the sentence.
    yield _first_person(who.group("rest")), offset + who.start("rest") - 2


# "I listen to country music, drive a big truck, and work my parents' farm": each verb after
# the first is a statement of its own, unless the first verb is a taste or a wish, whose list
# of things it is ("I like to read, play games, and cook").
_VERB_LIST = re.compile(
    rf",\s*(?:and\s+|also\s+)*(?=(?:{_ACTIVITY_VERBS}|work|live|have|own|drive|take|produce|spend)\s+\w)",
    re.IGNORECASE,
)
_WISHING = re.compile(
    r"^\W*I(?:'m|’m|'d|’d| am| would)?(?:\s+\w+ly|\s+also|\s+really|\s+just|\s+do)*\s+"
    r"(?:like|love|enjoy|adore|prefer|want|hope|plan|wish|hate|dislike|need|try|tried|used|am|'m|can|could|would|will)\b",
    re.IGNORECASE,
)


def _verb_list(clause: str, offset: int) -> Iterator[tuple[str, int]]:
    cuts = [] if _WISHING.match(clause) else list(_VERB_LIST.finditer(clause))
    if not cuts:
        yield clause, offset
        return
    yield clause[: cuts[0].start()], offset
    for index, cut in enumerate(cuts):
        end = cuts[index + 1].start() if index + 1 < len(cuts) else len(clause)
        # A reading of "I <verb> …"; its spans point at the verb phrase in the sentence.
        yield "I " + clause[cut.end() : end], offset + cut.end() - 2


def read_en(sentence: str, *, context: str = "") -> list[Found]:
    """First-person facts in an English sentence; `context` is the previous turn."""
    out: list[Found] = []
    for whole, start in clauses(sentence):
        for clause, offset in (
            part for relative in _with_relatives(whole, start) for part in _verb_list(*relative)
        ):
            for found in _read_clause(clause, context=context):
                spans = [(max(0, a + offset), min(len(sentence), b + offset)) for a, b in found.spans]
                out.append(replace(found, spans=spans))
    return lists_joined(out, sentence)


def _read_clause(sentence: str, *, context: str) -> list[Found]:
    out: list[Found] = []
    claimed: list[tuple[int, int]] = []
    for name, regex, reader in EN_RULES:
        if name == "activity.any" and out:
            break  # the long tail reads only what no other rule read
        for match in regex.finditer(sentence):
            if (
                any(start <= match.start() < end for start, end in claimed)
                and name.split(".")[0] in _FIRST_WINS
            ):
                continue
            found = reader(match, context)
            if found:
                out.extend(found)
                claimed.append(match.span())
    return out


# --- Chinese ------------------------------------------------------------------------------

_ZV = r"(?P<v>[^\s，。,.!！?？；;、的了]+)"
_ZH_COUNT = r"(?:[一二两三四五六七八九十几\d]+|个)?(?:只|条|个|位|匹|头|名|辆)?"
_ZH_PROFESSIONS = re.compile(
    r"(?:师|员|生|家|工|手|者|医|官|长|警|司机|老板|经理|主管|总监|护士|会计|作家|记者|律师|厨师|农民|学生|"
    r"演员|歌手|模特|编辑|秘书|保安|军人|教授|画家|导演|设计师|程序员|工程师|老师|医生|主播|博主|退休)$"
)
_ZH_MARITAL = {"已婚": "已婚", "结婚": "已婚", "单身": "单身", "离婚": "离异", "离异": "离异", "订婚": "订婚"}


def _zh_found(key: str, value: str | None, match: re.Match[str], *, base: float,
              polarity: Polarity = "set", group: str = "v") -> Found:  # fmt: skip
    return Found(USER_PROFILE, key, value, polarity, base, [match.span(group)] if match.group(group) else [])


def _zh_identity(match: re.Match[str]) -> list[Found]:
    value = clean_zh(match.group("v"))
    if not value or value in {"说", "想", "觉得", "在"} or value.startswith(("不是", "说")):
        return []
    if value in {"素食者", "素食主义者"}:
        return [_zh_found("diet", "素食", match, base=0.8)]
    if value in _ZH_MARITAL:
        return [_zh_found("marital_status", _ZH_MARITAL[value], match, base=0.8)]
    if _ZH_PROFESSIONS.search(value):
        return [_zh_found("occupation", value, match, base=0.75)]
    return []


def _zh_thing(
    group: str, prefix: str, *, base: float, polarity: Polarity = "set"
) -> Callable[[re.Match[str]], list[Found]]:
    def read(match: re.Match[str]) -> list[Found]:
        word = clean_zh(match.group(group))
        if not word or word in {"它", "这个", "那个", "他", "她", "这", "那"}:
            return []
        mapped = vocab.THING_ALIASES.get(word, word)
        if prefix == "pet." and mapped not in vocab.PET_SPECIES:
            return []
        if prefix == "family." and mapped not in vocab.FAMILY_RELATIONS:
            return []
        count = match.group("c") if "c" in match.groupdict() and match.group("c") else ""
        value = None if polarity == "unset" else f"{count}{word}"
        return [_zh_found(f"{prefix}{mapped}", value, match, base=base, polarity=polarity, group=group)]

    return read


def _zh_keyed(
    key: str, *, base: float, polarity: Polarity = "set", value: str | None = None
) -> Callable[[re.Match[str]], list[Found]]:
    def read(match: re.Match[str]) -> list[Found]:
        raw = clean_zh(match.group("v")) if "v" in match.groupdict() and match.group("v") else ""
        text = value if value is not None else raw
        if not text or text in {"它", "这个", "那个"}:
            return []
        span = match.span("v") if raw else match.span()
        return [Found(USER_PROFILE, key, None if polarity == "unset" else text, polarity, base, [span])]

    return read


def _zh_favorite(match: re.Match[str]) -> list[Found]:
    thing = vocab.thing(match.group("t"))
    value = clean_zh(match.group("v"))
    if not value or value in {"它", "这个", "那个"}:
        return []
    return [_zh_found(f"favorite_{thing}", value, match, base=0.7)]


ZhRule = tuple[str, re.Pattern[str], Callable[[re.Match[str]], list[Found]]]

ZH_RULES: list[ZhRule] = [
    ("favorite", re.compile(r"我(?:现在)?最(?:喜欢|爱)的(?P<t>[^\s，。是]{1,4})(?:是|就是)(?P<v>[^\s，。,.!！?？；;、了]+)"), _zh_favorite),
    ("favorite.after", re.compile(r"(?P<v>[^\s，。,.!！?？；;、我]{1,8})是我(?:现在)?最(?:喜欢|爱)的(?P<t>[^\s，。,.!！?？；;、了]{1,4})"), _zh_favorite),
    ("age", re.compile(r"我(?:今年|现在)?(?P<v>[\d一二三四五六七八九十]{1,3})岁"), _zh_keyed("age", base=0.75)),
    ("occupation.retired", re.compile(r"我(?:已经)?退休了?"), _zh_keyed("occupation", base=0.75, value="退休")),
    ("occupation.became", re.compile(r"我(?:现在)?(?:当了|当上了|成了|成为了)(?:一名|一个|一位)?(?P<v>[^\s，。,.!！?？；;、的了]+)"), _zh_keyed("occupation", base=0.75)),
    ("occupation.job", re.compile(r"我的职业是(?:一名|一个|一位)?(?P<v>[^\s，。,.!！?？；;、的了]+)"), _zh_keyed("occupation", base=0.75)),
    ("identity", re.compile(r"我(?:现在|目前|也|还)?是(?:一名|一个|一位|个|名)?(?P<v>[^\s，。,.!！?？；;、的了]+)"), _zh_identity),
    ("diet", re.compile(r"我(?:一直)?吃素"), _zh_keyed("diet", base=0.8, value="素食")),
    ("diet.unset", re.compile(r"我(?:已经)?(?:不再|不)吃素"), _zh_keyed("diet", base=0.8, value="素食", polarity="unset")),
    ("marital", re.compile(r"我(?:已经)?(?P<v>已婚|结婚|离婚|离异|订婚)"), lambda m: [_zh_found("marital_status", _ZH_MARITAL[m.group("v")], m, base=0.8)]),
    ("pet.unset", re.compile(r"我(?:已经)?(?:不再|不|没)(?:养|有)(?P<n>[^\s，。,.!！?？；;、了]+)"), _zh_thing("n", "pet.", base=0.75, polarity="unset")),
    ("pet", re.compile(r"我(?:现在|家)?(?:养了|养|有)(?P<c>" + _ZH_COUNT + r")(?P<n>[^\s，。,.!！?？；;、了的]+)"), _zh_thing("n", "pet.", base=0.75)),
    ("family", re.compile(r"我(?:现在)?有(?P<c>" + _ZH_COUNT + r")(?P<n>[^\s，。,.!！?？；;、了的]+)"), _zh_thing("n", "family.", base=0.8)),
    ("health.unset", re.compile(r"我(?:已经)?(?:没有|不再有)(?P<n>[^\s，。,.!！?？；;、了]+(?:病|症|压|喘))"), lambda m: [_zh_found(f"health.{vocab.thing(m.group('n'))}", None, m, base=0.9, polarity="unset", group="n")]),
    ("health", re.compile(r"我(?:有|患有|得了|患了)(?P<n>[^\s，。,.!！?？；;、了]+(?:病|症|压|喘))"), lambda m: [_zh_found(f"health.{vocab.thing(m.group('n'))}", clean_zh(m.group('n')), m, base=0.9, group="n")]),
    ("allergy.bare", re.compile(r"我(?P<v>[^\s，。,.!！?？；;、对不]{1,6}?)过敏"), lambda m: [_zh_found(f"allergy.{clean_zh(m.group('v'))}", f"对{clean_zh(m.group('v'))}过敏", m, base=0.95)] if not m.group("v").startswith(("对", "有", "很", "也")) else []),
    ("name.changed", re.compile(r"我改名(?:叫|为)(?P<v>[\u4e00-\u9fff·]{1,8}?)(?=[了，。,.!！]|$)"), _zh_keyed("name", base=0.85)),
    ("school", re.compile(r"我(?:现在)?(?:转到|在)(?P<v>[^\s，。,.!！?？；;、]+?(?:大学|学院|中学|小学|学校|北大|清华))(?:读书|上学|念书|读)"), _zh_keyed("school", base=0.75)),
    ("field_of_study", re.compile(r"(?:我学的是|我的专业是|我主修)(?P<v>[^\s，。,.!！?？；;、了]+)"), _zh_keyed("field_of_study", base=0.75)),
    ("language", re.compile(r"我会(?:说|讲)(?P<v>[^\s，。,.!！?？；;、了]+?(?:语|话|文))"), lambda m: [_zh_found(f"language.{clean_zh(m.group('v'))}", clean_zh(m.group('v')), m, base=0.75)]),
    ("vehicle", re.compile(r"我(?:现在)?开(?:一辆|辆)?(?P<v>[^\s，。,.!！?？；;、了]+?)(?:车)?(?=[，。,.!！]|$)"), _zh_keyed("vehicle", base=0.75)),
    ("career_goal", re.compile(r"我(?:想|希望|梦想)(?:当|成为)(?:一名|一个|一位)?(?P<v>[^\s，。,.!！?？；;、了]+)"), lambda m: [Found(USER_PROFILE, "career_goal", clean_zh(m.group("v")), "set", 0.7, [m.span()])]),
    ("habit", re.compile(r"我每天(?:早上|晚上|下午)?都?(?P<v>跑步|游泳|锻炼|健身|散步|冥想|读书|看书|练琴|写作|做饭)"), lambda m: [_zh_found(f"habit.{m.group('v')}", m.group(0)[1:].replace("都", ""), m, base=0.7)]),
]  # fmt: skip


def read_zh(sentence: str) -> list[Found]:
    out: list[Found] = []
    keys: set[str] = set()
    for name, regex, reader in ZH_RULES:
        for match in regex.finditer(sentence):
            for found in reader(match):
                # "我有一只猫" is a pet, not a family member; the first rule to read a key wins.
                if found.key in keys or (name == "family" and any(k.startswith("pet.") for k in keys)):
                    continue
                if name == "identity" and any(k in {"occupation", "diet", "marital_status"} for k in keys):
                    continue
                keys.add(found.key)
                out.append(found)
    return out
