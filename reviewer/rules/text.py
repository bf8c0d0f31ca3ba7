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


# Quote marks around a cited message, and the punctuation at a word's edges.
QUOTE_MARKS = "\"'“”‘’「」『』 "
_WORD_EDGES = ".,!?;:()[]。，！？；："


def quote_search_word(quote: str) -> str:
    """The quote's longest word, without quote marks or punctuation at its edges: what the
    database narrows the turns by before the normalised comparison decides ("" for none)."""
    return max(quote.split(), key=len, default="").strip(QUOTE_MARKS + _WORD_EDGES)


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


_SPEAKER = re.compile(
    r"^\s*(user|human|customer|assistant|ai|agent|bot|model|system|tool)\s*[:：]\s?(.*)$", re.IGNORECASE
)
_ROLE_OF = {"human": "user", "customer": "user", "ai": "assistant", "agent": "assistant", "bot": "assistant",
            "model": "assistant"}  # fmt: skip


def transcript_parse(text: str) -> list[tuple[str, str]]:
    """A transcript's turns as (role, content). A line that starts with a speaker ("user:",
    "assistant:", "human:", "ai:" …) opens a turn; other lines continue the one before. Text
    before any speaker has the role "" (not recorded)."""
    turns: list[tuple[str, str]] = []
    for line in text.splitlines():
        found = _SPEAKER.match(line)
        if found:
            role = found.group(1).lower()
            turns.append((_ROLE_OF.get(role, role), found.group(2)))
        elif turns:
            turns[-1] = (turns[-1][0], f"{turns[-1][1]}\n{line}")
        elif line.strip():
            turns.append(("", line))
    return turns
