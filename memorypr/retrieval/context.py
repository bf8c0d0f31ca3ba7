"""The prompt-ready context block, in the structured-prompt style of the stale-dependency seed.

Each memory states when it was recorded and, where it replaced an older memory, what it
replaced ("updates an older memory: …"), followed by the two thinking steps (answer from
the memories; check consistency), so the agent's model cannot quietly prefer the old fact.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from memorypr.vectors.embedding import fact_text, value_text

if TYPE_CHECKING:
    from memorypr.facts.models import FactVersion
    from memorypr.retrieval.selectors import ScoredFact


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment else "unknown time"


def replaced_note(*, fact: FactVersion, replaced: FactVersion | None) -> str:
    """What this version replaced; empty when nothing, or when only its confidence changed."""
    if replaced is None or value_text(replaced.value) == value_text(fact.value):
        return ""
    return (
        f" (this updates an older memory: {fact_text(key=replaced.key, value=replaced.value)}"
        f" [memory {replaced.pk}, v{replaced.version}], which is no longer true)"
    )


def context_block(
    *,
    query: str,
    results: Sequence[ScoredFact],
    as_of: datetime | None,
    reformation_needed: bool,
) -> str:
    lines = [f"Current query: 「{query}」"]
    heading = f"Memories that were true as of {_when(as_of)}:" if as_of else "Relevant active memories:"
    lines.append(heading)
    if not results:
        if reformation_needed:
            lines.append(
                "- (none usable: the matching memories are too uncertain; ask the user rather than assume,"
                " and record what they say)"
            )
        else:
            lines.append("- (none: no stored memory is relevant; do not assume facts about the user)")
    for item in results:
        fact = item.fact
        status = f"active as of {_when(as_of)}" if as_of else "active"
        lines.append(
            f"- [memory {fact.pk} · {fact.category}/{fact.key} · v{fact.version} · status: {status}"
            f" · recorded {_when(fact.created_at)}] {fact_text(key=fact.key, value=fact.value)}"
            + replaced_note(fact=fact, replaced=item.updates)
        )
    lines.append("Think in these steps:")
    lines.append("Step 1: answer the query from the memories above; they are the current truth.")
    lines.append(
        "Step 2: consistency check: confirm the answer agrees with every memory above. Where a memory"
        " updates an older one, the older one is no longer true: do not rely on it, or on anything"
        " concluded from it."
    )
    return "\n".join(lines)
