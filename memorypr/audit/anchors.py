"""The chain's head kept outside the database: the anchor that makes a rewrite of the whole
chain, or the loss of its newest events, detectable (`verify_audit --anchor FILE`).

An intact chain can be forged: a writer who rewrites one event and recomputes every hash after
it leaves a chain that verifies. It cannot keep a head it did not see: an anchored event that
still has its anchored hash proves every event up to it unchanged, since each hash covers all
before it.
"""

from __future__ import annotations

from dataclasses import dataclass

from memorypr.audit.models import AuditEvent


@dataclass(frozen=True)
class ChainHead:
    sequence: int
    hash: str


def audit_chain_head() -> ChainHead | None:
    last = AuditEvent.objects.order_by("-sequence").values_list("sequence", "hash").first()
    return ChainHead(sequence=last[0], hash=last[1]) if last else None


def audit_anchor_check(*, anchor: ChainHead) -> str | None:
    """Why the chain no longer holds an anchored head, or None when it does."""
    stored = AuditEvent.objects.filter(sequence=anchor.sequence).values_list("hash", flat=True).first()
    if stored is None:
        return f"the anchored event #{anchor.sequence} is gone: the chain was truncated or rewritten"
    if stored != anchor.hash:
        return f"event #{anchor.sequence} no longer has the anchored hash: the chain was rewritten"
    return None
