"""Text helpers shared by the pattern rules: normalisation and pattern search."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from memorypr.common.canonical import canonical_json

_SPACE = re.compile(r"\s+")
_KEY_SEPARATORS = re.compile(r"[_.:/\-]+")


_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"'})


def normalize(text: str) -> str:
    """NFKC (full-width to half-width), curly quotes straightened, case-folded, whitespace collapsed."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold()).strip()


def key_words(key: str) -> str:
    """A key as words, so that `\\b` patterns see `food_allergy` as "food allergy"."""
    return normalize(_KEY_SEPARATORS.sub(" ", key))


def value_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return normalize(value)
    return normalize(canonical_json(value))


@dataclass(frozen=True)
class Pattern:
    """A labelled pattern; `regex` is matched against normalised (case-folded) text."""

    label: str
    regex: re.Pattern[str]


def patterns(label: str, *sources: str) -> list[Pattern]:
    return [Pattern(label, re.compile(source)) for source in sources]


def first_match(text: str, candidates: Iterable[Pattern]) -> tuple[Pattern, str] | None:
    for pattern in candidates:
        found = pattern.regex.search(text)
        if found:
            return pattern, found.group(0)
    return None
