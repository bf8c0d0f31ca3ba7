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
        if word and (len(word.group(1)) == 1 or word.group(1).lower() in _ABBREVIATIONS):
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


def singular(word: str) -> str:
    """'peanuts' → 'peanut', so 'allergic to peanuts' and 'a peanut allergy' share a key."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss") and word.isascii():
        return word[:-1]
    return word
