from __future__ import annotations

from django.db import models

from memorypr.agents.models import Namespace


class TurnRole(models.TextChoices):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


class SessionTurn(models.Model):
    """One turn of a conversation, kept durably: the transcript evidence quotes are checked against.

    Append-only: the database refuses UPDATE, and DELETE outside the retention purge
    (trigger in migration 0002), so a quote cannot be made true after the fact.
    Working memory (tier 1) is the latest run of these turns, served from Redis when
    configured and from this table otherwise.
    """

    namespace = models.ForeignKey(Namespace, on_delete=models.PROTECT, related_name="session_turns")
    session_id = models.CharField(max_length=200)
    role = models.CharField(max_length=12, choices=TurnRole.choices)
    content = models.TextField()
    agent = models.ForeignKey("agents.Agent", null=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["namespace", "session_id", "id"]
        indexes = [models.Index(fields=["namespace", "session_id", "id"], name="turn_ns_session_id")]

    def __str__(self) -> str:
        return f"{self.session_id} {self.role}"
