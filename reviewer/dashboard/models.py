from __future__ import annotations

from django.conf import settings
from django.db import models

from memorypr.pulls.models import KnowledgePullRequest


class ReviewClaim(models.Model):
    """Who is working on a queued KPR, until when. One claim per KPR; it expires by itself."""

    pull = models.OneToOneField(KnowledgePullRequest, on_delete=models.PROTECT, related_name="claim")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_claims")
    claimed_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.pull_id} claimed by {self.user}"
