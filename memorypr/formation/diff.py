"""Formation, step two: what to change, against what memory holds now.

For each (category, key) the last statement in the conversation wins. Against the
subject's active facts (GET /api/v1/facts):
- a value with no current fact → CREATE;
- a different value → UPDATE with the current value as `oldValue` (the merge's
  compare-and-swap base: if memory moves on meanwhile, the KPR conflicts, never overwrites);
- the same value → nothing (skipped, with the reason);
- "no longer true" → DELETE of the current fact when it is what the user said stopped
  (or the key itself names it, like allergy.peanut); otherwise nothing.

Before a fact may become a new key it is resolved against the subject's existing keys
(`vocabulary.resolve_key`): by the vocabulary and its aliases, by the same thing in other
words, then by embedding similarity of key and value when an embedder is given. So a
restatement is no operation and a change is an UPDATE of the key it changes. A new key that
may restate an existing one goes in as a CREATE below the reviewer's approve bar, with a
note in `Diff.notes` saying which keys it may restate, so a person decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from memorypr.formation.extract import ExtractedFact
from memorypr.formation.text import normalize
from memorypr.formation.vocabulary import Embedder, resolve_key, stems

# Below the reviewer's default approve bar (0.7): a person decides whether it is a new key.
AMBIGUOUS_CONFIDENCE = 0.6
_NEGATIONS = frozenset({"not", "no", "never", "longer", "dislik", "不再", "不"})


@dataclass(frozen=True)
class Skipped:
    fact: ExtractedFact
    reason: str


@dataclass
class Diff:
    operations: list[dict[str, Any]] = field(default_factory=list)  # KPR operations, wire format
    facts: list[ExtractedFact] = field(default_factory=list)  # the fact behind each operation
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # for the reviewer: keys a CREATE may restate


def same_statement(a: Any, b: Any) -> bool:
    """Whether a restatement says the same as the stored value: strings by normalised text
    (case, spacing and punctuation aside), anything else by equality. Looser than the merge's
    compare-and-swap (`memorypr.common.canonical.same_value`) on purpose: "Shenzhen." restates
    "shenzhen", and proposing it again would only be a no-op for the reviewer to drop."""
    if isinstance(a, str) and isinstance(b, str):
        return normalize(a) == normalize(b)
    return bool(a == b)


def restates(new: Any, old: Any) -> bool:
    """The new value says nothing the stored one does not: the same text, or the same words
    with some left out ("a dog" after "a big pet dog", "likes dancing" after "likes to
    dance"), and no negation on one side only."""
    if same_statement(new, old):
        return True
    if not isinstance(new, str) or not isinstance(old, str):
        return False
    said, held = stems(new), stems(old)
    if not said or (said & _NEGATIONS) != (held & _NEGATIONS):
        return False
    return said <= held


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


def _resolved(
    facts: Sequence[ExtractedFact], now: Mapping[tuple[str, str], Any], embed: Embedder | None, diff: Diff
) -> list[ExtractedFact]:
    out = []
    for fact in facts:
        if (fact.category, fact.key) in now:
            out.append(fact)
            continue
        existing = {key: value for (category, key), value in now.items() if category == fact.category}
        found = resolve_key(key=fact.key, value=fact.value, existing=existing, embed=embed)
        if found.key != fact.key:
            fact = replace(fact, key=found.key)
        elif found.ambiguous_with:
            diff.notes.append(f"{fact.key}: {found.note}")
            fact = replace(fact, confidence=min(fact.confidence, AMBIGUOUS_CONFIDENCE))
        out.append(fact)
    return out


def diff_facts(
    *,
    extracted: Sequence[ExtractedFact],
    current: Iterable[Mapping[str, Any]],
    timestamp_ms: int = 0,
    embed: Embedder | None = None,
) -> Diff:
    """KPR operations that bring memory to what the conversation says; `current` as the API lists it.

    `embed` (texts → unit vectors, e.g. `memorypr.vectors.embedding.embed_texts`) adds key
    resolution by similarity; without it keys resolve by the vocabulary and wording alone.
    """
    now: dict[tuple[str, str], Any] = {}
    for row in current:
        if row.get("status", "active") == "active":
            now[(str(row["category"]), str(row["key"]))] = row.get("value")
    diff = Diff()
    for fact in _last_per_key(_resolved(extracted, now, embed, diff)):
        ident = (fact.category, fact.key)
        exists = ident in now
        old = now.get(ident)
        if fact.polarity == "unset":
            if not exists:
                diff.skipped.append(Skipped(fact, "no longer true, and memory holds nothing for it"))
            elif fact.value is not None and not same_statement(fact.value, old):
                diff.skipped.append(Skipped(fact, f"no longer {fact.value!r}, but memory holds {old!r}"))
            else:
                diff.operations.append(
                    _operation(fact, action="DELETE", old=old, new=None, timestamp_ms=timestamp_ms)
                )
                diff.facts.append(fact)
            continue
        if not exists:
            op = _operation(fact, action="CREATE", old=None, new=fact.value, timestamp_ms=timestamp_ms)
        elif restates(fact.value, old):
            diff.skipped.append(Skipped(fact, "unchanged: already the current value"))
            continue
        else:
            op = _operation(fact, action="UPDATE", old=old, new=fact.value, timestamp_ms=timestamp_ms)
        diff.operations.append(op)
        diff.facts.append(fact)
    return diff
