from __future__ import annotations

from django.db import models


class AuditEvent(models.Model):
    """One append-only, hash-chained record of a state change.

    `hash = sha256(prev_hash || canonical_json(row))`; the database refuses UPDATE and
    DELETE (trigger in migration 0002), and `verify_audit` recomputes the chain.
    """

    sequence = models.BigIntegerField(unique=True)
    created_at = models.DateTimeField(db_index=True)
    namespace = models.CharField(max_length=100, blank=True)
    actor = models.CharField(max_length=200)
    event_type = models.CharField(max_length=64)
    pull_id = models.UUIDField(null=True, blank=True, db_index=True)
    subject = models.CharField(max_length=200, blank=True)
    payload = models.JSONField(default=dict)
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64, unique=True)

    class Meta:
        ordering = ["sequence"]
        # Every audited write inserts into each index, under the chain lock that all of them wait
        # for: only what a query uses. Namespace and type are matched exactly (no pattern-ops
        # twin); the actor only by a substring, which no B-tree serves.
        indexes = [
            models.Index(fields=["namespace"], name="audit_event_namespace"),
            models.Index(fields=["event_type"], name="audit_event_type"),
        ]

    def __str__(self) -> str:
        return f"#{self.sequence} {self.event_type} by {self.actor}"

    def canonical_fields(self) -> dict[str, object]:
        return self.canonical_fields_with(sequence=self.sequence, created_at=self.created_at.isoformat())

    def canonical_fields_with(self, *, sequence: object, created_at: object) -> dict[str, object]:
        """What the hash covers, with the sequence and the time given (they are set under the lock)."""
        return {
            "sequence": sequence,
            "createdAt": created_at,
            "namespace": self.namespace,
            "actor": self.actor,
            "eventType": self.event_type,
            "pullId": str(self.pull_id) if self.pull_id else None,
            "subject": self.subject,
            "payload": self.payload,
        }
