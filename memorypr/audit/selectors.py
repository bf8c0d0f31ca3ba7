from __future__ import annotations

from dataclasses import dataclass

from memorypr.audit.models import AuditEvent
from memorypr.audit.services import GENESIS_HASH, audit_hash


@dataclass(frozen=True)
class ChainBreak:
    sequence: int
    event_id: int
    reason: str


def audit_chain_verify(*, batch_size: int = 2000) -> tuple[int, ChainBreak | None]:
    """Walk the chain in order; return how many events were checked and the first break."""
    prev_hash = GENESIS_HASH
    expected_sequence = 1
    checked = 0
    for event in AuditEvent.objects.order_by("sequence").iterator(chunk_size=batch_size):
        if event.sequence != expected_sequence:
            return checked, ChainBreak(
                event.sequence, event.pk, f"sequence gap: expected {expected_sequence}"
            )
        if event.prev_hash != prev_hash:
            return checked, ChainBreak(
                event.sequence, event.pk, "prev_hash does not match the previous event"
            )
        if audit_hash(prev_hash=prev_hash, fields=event.canonical_fields()) != event.hash:
            return checked, ChainBreak(event.sequence, event.pk, "content does not match its hash")
        prev_hash = event.hash
        expected_sequence += 1
        checked += 1
    return checked, None
