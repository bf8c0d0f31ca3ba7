from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models


class Namespace(models.Model):
    """A tenant: agents and reviewers are scoped to one or more namespaces."""

    name = models.SlugField(max_length=100, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Agent(models.Model):
    """A proposer: authenticates with a bearer token, submits KPRs into its namespaces."""

    class Trust(models.TextChoices):
        LOW = "low", "Low"
        NORMAL = "normal", "Normal"
        HIGH = "high", "High"

    SYSTEM_NAME = "system"

    name = models.CharField(max_length=100, unique=True)
    trust = models.CharField(max_length=10, choices=Trust.choices, default=Trust.NORMAL)
    namespaces = models.ManyToManyField(Namespace, related_name="agents")
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    # DRF treats the authenticated principal like a user.
    @property
    def is_authenticated(self) -> bool:
        return True


class AgentToken(models.Model):
    """Only the SHA-256 of a token is stored; the token itself is shown once."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="tokens")
    token_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=12)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # None: the token never expires, which its issuer must have chosen explicitly.
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=models.F("created_at")),
                name="agent_token_expires_after_creation",
            ),
            models.CheckConstraint(
                condition=models.Q(revoked_at__isnull=True)
                | models.Q(revoked_at__gte=models.F("created_at")),
                name="agent_token_revoked_after_creation",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.agent})"

    def refusal(self, *, now: datetime) -> str | None:
        """Why this token may not be used now, or None when it may."""
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= now:
            return "expired"
        if not self.agent.is_active:
            return "agent inactive"
        return None


class ReviewerMembership(models.Model):
    """A human reviewer's right to work a namespace's queue."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="reviewers")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "namespace"], name="reviewer_membership_unique")
        ]

    def __str__(self) -> str:
        return f"{self.user} @ {self.namespace}"
