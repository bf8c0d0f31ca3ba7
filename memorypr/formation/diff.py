"""Formation, step two: what to change, against what memory holds now.

For each (category, key) the last statement in the conversation wins. Against the
subject's active facts (GET /api/v1/facts):
- a value with no current fact → CREATE;
- a different value → UPDATE with the current value as `oldValue` (the merge's
  compare-and-swap base: if memory moves on meanwhile, the KPR conflicts, never overwrites);
- the same value → nothing (skipped, with the reason);
- "no longer true" → DELETE of the current fact when it is what the user said stopped
  (or the key itself names it, like allergy.peanut); otherwise nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memorypr.formation.extract import ExtractedFact
from memorypr.formation.text import normalize


@dataclass(frozen=True)
class Skipped:
    fact: ExtractedFact
    reason: str


@dataclass
class Diff:
    operations: list[dict[str, Any]] = field(default_factory=list)  # KPR operations, wire format
    facts: list[ExtractedFact] = field(default_factory=list)  # the fact behind each operation
    skipped: list[Skipped] = field(default_factory=list)


def same_value(a: Any, b: Any) -> bool:
    """Values compare as the reviewer's no-op check would: strings by normalised text."""
    if isinstance(a, str) and isinstance(b, str):
        return normalize(a) == normalize(b)
    return bool(a == b)


def _operation(fact: ExtractedFact, *, action: str, old: Any, new: Any, timestamp_ms: int) -> dict[str, Any]:
    return {
        "action": action,
        "category": fact.category,
        "key": fact.key,
        "oldValue": old,
        "newValue": new,
        "confidence": round(fact.confidence, 3),
        "importance": round(min(1.0, fact.importance), 3),
        "evidence": {
            "rawMessageQuote": fact.quote,
            "timestamp": fact.timestamp_ms if fact.timestamp_ms is not None else timestamp_ms,
        },
    }


def _last_per_key(facts: Sequence[ExtractedFact]) -> list[ExtractedFact]:
    """The last statement per key, in the order keys first appeared ("set" over an earlier "unset")."""
    last: dict[tuple[str, str], ExtractedFact] = {}
    for fact in facts:
        ident = (fact.category, fact.key)
        earlier = last.get(ident)
        # "I moved from Beijing to Shenzhen": the unset of Beijing and the set of Shenzhen come
        # from one sentence; the set is the news.
        if earlier is not None and earlier.quote == fact.quote and fact.polarity == "unset":
            continue
        last[ident] = fact
    return list(last.values())


def diff_facts(
    *, extracted: Sequence[ExtractedFact], current: Iterable[Mapping[str, Any]], timestamp_ms: int = 0
) -> Diff:
    """KPR operations that bring memory to what the conversation says; `current` as the API lists it."""
    now: dict[tuple[str, str], Any] = {}
    for row in current:
        if row.get("status", "active") == "active":
            now[(str(row["category"]), str(row["key"]))] = row.get("value")
    diff = Diff()
    for fact in _last_per_key(extracted):
        ident = (fact.category, fact.key)
        exists = ident in now
        old = now.get(ident)
        if fact.polarity == "unset":
            if not exists:
                diff.skipped.append(Skipped(fact, "no longer true, and memory holds nothing for it"))
            elif fact.value is not None and not same_value(fact.value, old):
                diff.skipped.append(Skipped(fact, f"no longer {fact.value!r}, but memory holds {old!r}"))
            else:
                diff.operations.append(
                    _operation(fact, action="DELETE", old=old, new=None, timestamp_ms=timestamp_ms)
                )
                diff.facts.append(fact)
            continue
        if not exists:
            op = _operation(fact, action="CREATE", old=None, new=fact.value, timestamp_ms=timestamp_ms)
        elif same_value(fact.value, old):
            diff.skipped.append(Skipped(fact, "unchanged: already the current value"))
            continue
        else:
            op = _operation(fact, action="UPDATE", old=old, new=fact.value, timestamp_ms=timestamp_ms)
        diff.operations.append(op)
        diff.facts.append(fact)
    return diff
