from __future__ import annotations

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

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.agent})"


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
