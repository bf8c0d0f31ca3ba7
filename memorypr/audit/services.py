from __future__ import annotations

import hashlib
import uuid
from typing import Any

from django.db import transaction
from django.utils import timezone

from memorypr.audit.models import AuditEvent
from memorypr.common.canonical import canonical_json, json_roundtrip
from memorypr.common.locks import lock_audit_chain

GENESIS_HASH = "0" * 64


def audit_hash(*, prev_hash: str, fields: dict[str, Any]) -> str:
    return hashlib.sha256((prev_hash + canonical_json(fields)).encode()).hexdigest()


def audit_record(
    *,
    event_type: str,
    actor: str,
    namespace: str = "",
    pull_id: uuid.UUID | str | None = None,
    subject: str = "",
    payload: dict[str, Any] | None = None,
) -> AuditEvent:
    """Append one event to the chain inside the caller's transaction.

    The chain lock is held until the caller commits, so the chain has no forks; it is
    the last lock any transaction takes (see memorypr.common.locks).
    """
    with transaction.atomic():
        lock_audit_chain()
        last = AuditEvent.objects.order_by("-sequence").values_list("sequence", "hash").first()
        sequence, prev_hash = (last[0] + 1, last[1]) if last else (1, GENESIS_HASH)
        event = AuditEvent(
            sequence=sequence,
            created_at=timezone.now(),
            namespace=namespace,
            actor=actor,
            event_type=event_type,
            pull_id=uuid.UUID(str(pull_id)) if pull_id else None,
            subject=subject,
            payload=json_roundtrip(payload or {}),
            prev_hash=prev_hash,
        )
        event.hash = audit_hash(prev_hash=prev_hash, fields=event.canonical_fields())
        event.save(force_insert=True)
        return event
