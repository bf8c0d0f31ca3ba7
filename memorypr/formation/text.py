"""Text helpers: sentences that stay verbatim substrings of the turn, and keys from names."""

from __future__ import annotations

import re
import unicodedata

# Full stops that do not end a sentence: "Dr. Seuss", "Ursula K. Le Guin", "Apple Inc. is".
_ABBREVIATIONS = frozenset({
    "dr", "mr", "mrs", "ms", "mx", "prof", "st", "mt", "ft", "jr", "sr", "vs", "inc", "co", "corp",
    "ltd", "no", "gen", "gov", "sen", "rep", "rev", "fr", "sgt", "capt", "col", "lt",
})  # fmt: skip
_BOUNDARY = re.compile(r"(?:[.!?]+|[。！？；;\n]+)[\"'”’)\]」』]*")
_WORD_BEFORE = re.compile(r"([A-Za-z]+)$")
_SLUG = re.compile(r"[^\w]+")
_SPACE = re.compile(r"\s+")


def _ends_sentence(text: str, match: re.Match[str]) -> bool:
    mark = match.group(0)
    if any(ch in "。！？；;\n" for ch in mark):
        return True
    after = text[match.end() : match.end() + 1]
    if after and not after.isspace():
        return False  # "D.C.", "3.5", "Sr.'s"
    if mark.startswith(".") and mark.strip(".") == "" and len(mark) == 1:
        word = _WORD_BEFORE.search(text[: match.start()])
        # "D&D. I'm …" ends a sentence: a letter joined to what stands before it is no initial.
        joined = word is not None and text[max(0, word.start() - 1) : word.start()] in {"&", "/", "-"}
        if word and not joined and (len(word.group(1)) == 1 or word.group(1).lower() in _ABBREVIATIONS):
            return False
    return True


def split_sentences(text: str) -> list[str]:
    """Sentences (and clauses ended by ; or a line break), each a verbatim substring of `text`."""
    out: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        if not _ends_sentence(text, match):
            continue
        piece = text[start : match.end()].strip()
        if piece:
            out.append(piece)
        start = match.end()
    rest = text[start:].strip()
    if rest:
        out.append(rest)
    return out


def normalize(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed: how two values are compared."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def slug(text: str, *, limit: int = 150) -> str:
    """A key part from free text: 'Washington, D.C.' → 'washington_d_c', '绿茶' → '绿茶'."""
    cleaned = _SLUG.sub("_", normalize(text)).strip("_")
    return cleaned[:limit].rstrip("_") or "_"


# Plural in form, one thing in meaning ("blues", "clothes"), and nouns whose singular ends in
# -ie or -oe ("movies", "shoes"), where the -ies → -y and -oes → -o rules would be wrong.
_SAME_IN_PLURAL = frozenset({"blues", "news", "series", "species", "clothes", "jeans", "pants", "shorts", "means",
                             "headquarters", "scissors", "thanks", "outdoors", "odds"})  # fmt: skip
_IE_NOUNS = frozenset({"movie", "cookie", "pie", "tie", "zombie", "selfie", "rookie", "brownie", "smoothie", "hippie",
                       "goalie", "genie", "prairie", "calorie", "auntie", "hoodie", "foodie", "veggie", "birdie",
                       "collie", "yorkie", "indie", "lie", "die", "magpie", "sweetie", "newbie", "techie", "bookie",
                       "pixie", "eerie", "kiddie", "boogie", "roadie", "groupie", "junkie", "oldie", "quickie", "beanie",
                       "bootie", "cutie", "wheelie", "specie"})  # fmt: skip
_OE_NOUNS = frozenset(
    {"shoe", "toe", "canoe", "oboe", "hoe", "floe", "horseshoe", "tiptoe", "snowshoe", "sloe"}
)


def singular(word: str) -> str:
    """'peanuts' → 'peanut', so 'allergic to peanuts' and 'a peanut allergy' share a key; also
    'possibilities' → 'possibility', 'watches' → 'watch', 'tomatoes' → 'tomato'."""
    lower = word.lower()
    if len(word) <= 3 or not lower.endswith("s") or lower.endswith("ss") or not word.isascii():
        return word
    if lower in _SAME_IN_PLURAL or lower.endswith("ics"):  # "physics", "politics"
        return word
    if lower.endswith(("ous", "us", "is")):  # "nervous", "cactus", "tennis": no plural of anything
        return word
    if lower.endswith("ies") and len(word) > 4 and lower[:-1] not in _IE_NOUNS:
        return word[:-3] + "y"
    if lower.endswith(("ches", "shes", "xes", "sses")) and not lower.endswith("aches"):  # "headaches"
        return word[:-2]
    if lower.endswith("oes") and lower[:-1] not in _OE_NOUNS:
        return word[:-2]
    return word[:-1]
