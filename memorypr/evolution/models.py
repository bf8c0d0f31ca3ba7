from __future__ import annotations

from django.db import models

from memorypr.facts.models import FactVersion


class ForgettingMark(models.Model):
    """A fact marked for forgetting (its confidence fell below the bar through feedback).

    Marking changes nothing that retrieval serves; the forgetting job turns marks into
    DELETE proposals (KPRs), so the same review and audit apply as to any other change.
    """

    fact = models.OneToOneField(FactVersion, on_delete=models.CASCADE, related_name="forgetting_mark")
    reason = models.CharField(max_length=32)
    confidence = models.FloatField()
    marked_at = models.DateTimeField(auto_now_add=True)
    pull = models.ForeignKey(
        "pulls.KnowledgePullRequest", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["marked_at", "id"]

    def __str__(self) -> str:
        return f"forget {self.fact_id} ({self.reason})"


class JobCursor(models.Model):
    """How far an incremental job (consolidation) has scanned, so each run is bounded."""

    job = models.CharField(max_length=64, unique=True)
    position = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.job} @ {self.position}"
