"""A list in one sentence is one fact per key: "I have a golden retriever, a black lab, and a mutt".

The clause readers take each item of a list on its own, which is right where each names its own
key (`likes_jazz`, `likes_blues`) and wrong where the items share one: three `pet.dog` facts
from one sentence, each replacing the one before, left the memory with "a mutt". Items of one
key that stand next to each other in the sentence, with nothing but a list's commas and "and"
between them, become one fact in the user's words. Names that follow a pet ("two dogs, Rex and
Max", "a son, Jake") are the pet's or the relative's, not things the user has (`has.rex`).
"""

from __future__ import annotations

import re
from dataclasses import replace

from memorypr.formation.patterns import Found

# What stands between two items of a list: a comma, "and", or both (", and").
# ("D&D" is one name: an ampersand between two items stands between spaces.)
_BETWEEN_ITEMS = re.compile(r"\s*,\s*(?:(?:and|&)\s+)?|\s+(?:and|&)\s+", re.IGNORECASE)
_A_NAME = re.compile(r"[A-Z][a-z]+")


def _start(item: Found) -> int:
    return min(start for start, _ in item.spans)


def _end(item: Found) -> int:
    return max(end for _, end in item.spans)


def _between(sentence: str, before: Found, after: Found) -> str | None:
    """The list's separator between two items, or None when anything else stands between them."""
    gap = sentence[_end(before) : _start(after)]
    return gap if _BETWEEN_ITEMS.fullmatch(gap) else None


# Keys of those whom a name after them names: pets and family ("two brothers, John and Mike").
_NAMED = ("pet.", "family.")


def _names(item: Found, held: Found, separator: str) -> bool:
    """Whether `item` is a name of the pet or relative `held`: set off by a comma ("a cat, Tom";
    "I have a dog and Netflix" names no dog), or after another of its names ("two dogs, Rex and Max")."""
    return (
        held.key.startswith(_NAMED)
        and ("," in separator or len(held.spans) > 1)
        and item.key.startswith("has.")
        and item.value is not None
        and _A_NAME.fullmatch(item.value) is not None
    )


def _joined(before: Found, after: Found, separator: str) -> Found:
    value = f"{before.value}{separator}{after.value}"
    return replace(before, value=value, spans=[*before.spans, *after.spans])


def lists_joined(items: list[Found], sentence: str) -> list[Found]:
    """The items in their order, with each run of list items of one key (or of a pet and the
    names after it) made one: the run's first item, holding the others' values and spans."""
    joined: dict[int, Found] = {}
    absorbed: set[int] = set()
    head: int | None = None  # the item before, in the sentence, that the next may join
    for index in sorted(range(len(items)), key=lambda i: _start(items[i]) if items[i].spans else -1):
        item = items[index]
        if not (item.spans and item.value):
            continue
        if head is not None:
            held = joined.get(head, items[head])
            separator = _between(sentence, held, item) if _end(held) <= _start(item) else None
            if (
                separator is not None
                and (held.category, held.polarity) == (item.category, item.polarity)
                and (held.key == item.key or _names(item, held, separator))
            ):
                joined[head] = _joined(held, item, separator)
                absorbed.add(index)
                continue
        head = index
    return [joined.get(index, item) for index, item in enumerate(items) if index not in absorbed]
