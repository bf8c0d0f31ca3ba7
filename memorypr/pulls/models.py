from __future__ import annotations

import uuid

from django.db import models

from memorypr.agents.models import Agent, Namespace


class ReviewStatus(models.TextChoices):
    PENDING = "PENDING"
    APPROVED = "APPROVED"
    REJECTED = "REJECTED"
    NEEDS_HUMAN_REVIEW = "NEEDS_HUMAN_REVIEW"


class MergeStatus(models.TextChoices):
    UNMERGED = "UNMERGED"
    MERGED = "MERGED"
    CONFLICT = "CONFLICT"
    FAILED = "FAILED"


class Action(models.TextChoices):
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"


class Category(models.TextChoices):
    USER_PROFILE = "user_profile"
    SYSTEM_PREFERENCE = "system_preference"
    DOMAIN_FACT = "domain_fact"
    DERIVED = "derived"


class Relation(models.TextChoices):
    UPDATES = "UPDATES"
    QUALIFIES = "QUALIFIES"
    CONTRADICTS = "CONTRADICTS"
    SUPPORTS = "SUPPORTS"
    CONTEXT_FOR = "CONTEXT_FOR"


class KnowledgePullRequest(models.Model):
    """An immutable batch of operations on facts.

    Content columns never change after insert (trigger `kpr_immutable`). The current
    review and merge state live in the separately updatable columns `review_status`,
    `reviewer_feedback`, `merge_status`, `merged_at`, `merge_feedback`, kept in step
    with the append-only `ReviewEvent` table, which is the record of every decision.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    namespace = models.ForeignKey(Namespace, on_delete=models.PROTECT, related_name="pulls")
    subject = models.CharField(max_length=200)
    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="pulls")
    proposed_by = models.CharField(max_length=200)
    source_session_id = models.CharField(max_length=200, blank=True)
    # NULL, not "", means "no key": the partial unique index covers keyed KPRs only.
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001
    request_hash = models.CharField(max_length=64)
    reverts = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="reverted_by"
    )

    # Mutable state, mirrored from ReviewEvent / merge results.
    review_status = models.CharField(
        max_length=24, choices=ReviewStatus.choices, default=ReviewStatus.PENDING, db_index=True
    )
    reviewer_feedback = models.TextField(blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    merge_status = models.CharField(max_length=12, choices=MergeStatus.choices, default=MergeStatus.UNMERGED)
    merge_feedback = models.TextField(blank=True)
    merged_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "idempotency_key"],
                condition=models.Q(idempotency_key__isnull=False),
                name="kpr_idempotency_key_per_agent",
            ),
        ]
        indexes = [
            models.Index(fields=["namespace", "subject", "created_at"], name="kpr_ns_subject_created"),
            models.Index(fields=["namespace", "review_status", "created_at"], name="kpr_ns_status_created"),
            # an agent's KPRs in a time window (the hourly limit, counted at every review): a range
            # of this index, however many KPRs the agent sent before
            models.Index(fields=["agent", "namespace", "created_at"], name="kpr_agent_ns_created"),
            # the merge queue: approved KPRs not merged yet, oldest approval first (a short list)
            models.Index(
                fields=["reviewed_at", "created_at", "id"],
                condition=models.Q(review_status="APPROVED", merge_status="UNMERGED"),
                name="kpr_merge_queue",
            ),
        ]

    def __str__(self) -> str:
        return f"KPR {self.id} ({self.review_status})"


class Operation(models.Model):
    """One CREATE/UPDATE/DELETE of a KPR; immutable like its KPR."""

    pull = models.ForeignKey(KnowledgePullRequest, on_delete=models.PROTECT, related_name="operations")
    position = models.PositiveIntegerField()
    action = models.CharField(max_length=6, choices=Action.choices)
    category = models.CharField(max_length=32, choices=Category.choices)
    key = models.CharField(max_length=200)
    old_value = models.JSONField(null=True, blank=True)
    new_value = models.JSONField(null=True, blank=True)
    confidence = models.FloatField()
    importance = models.FloatField(null=True, blank=True)
    evidence = models.JSONField(null=True, blank=True)
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_to = models.DateTimeField(null=True, blank=True)
    derived_from = models.JSONField(default=list, blank=True)
    relation = models.CharField(max_length=12, choices=Relation.choices, blank=True)

    class Meta:
        ordering = [
            "pull_id",
            "position",
        ]  # by the key: ordering by "pull" would join the KPR for its ordering
        constraints = [
            models.UniqueConstraint(fields=["pull", "position"], name="operation_position_unique"),
            models.CheckConstraint(
                condition=models.Q(confidence__gte=0) & models.Q(confidence__lte=1),
                name="operation_confidence_0_1",
            ),
            models.CheckConstraint(
                condition=models.Q(importance__isnull=True)
                | (models.Q(importance__gte=0) & models.Q(importance__lte=1)),
                name="operation_importance_0_1",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.category}/{self.key}"


class ReviewEvent(models.Model):
    """One reviewer's decision on a KPR (rules, LLM, human or system); append-only."""

    class ReviewerKind(models.TextChoices):
        RULES = "rules"
        LLM = "llm"
        HUMAN = "human"
        SYSTEM = "system"

    class Verdict(models.TextChoices):
        APPROVE = "APPROVE"
        REJECT = "REJECT"
        ESCALATE = "ESCALATE"

    pull = models.ForeignKey(KnowledgePullRequest, on_delete=models.PROTECT, related_name="review_events")
    created_at = models.DateTimeField(auto_now_add=True)
    reviewer_kind = models.CharField(max_length=8, choices=ReviewerKind.choices)
    reviewer = models.CharField(max_length=200)
    verdict = models.CharField(max_length=8, choices=Verdict.choices)
    status_after = models.CharField(max_length=24, choices=ReviewStatus.choices)
    findings = models.JSONField(default=list, blank=True)
    reasons = models.TextField(blank=True)
    excluded_operations = models.JSONField(default=list, blank=True)
    model = models.CharField(max_length=200, blank=True)
    latency_ms = models.IntegerField(null=True, blank=True)
    tokens = models.IntegerField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.reviewer_kind}:{self.reviewer} {self.verdict}"


class ReviewComment(models.Model):
    """A reviewer's comment on a KPR, or on one of its operations; append-only.

    The agent reads them with the KPR (`reviewerFeedbackDetail`), beside the verdict's
    `reviewerFeedback`: what a person noticed about one operation reaches the proposer.
    """

    pull = models.ForeignKey(KnowledgePullRequest, on_delete=models.PROTECT, related_name="comments")
    # None: the comment is on the KPR as a whole.
    operation_position = models.PositiveIntegerField(null=True, blank=True)
    author = models.CharField(max_length=200)
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(condition=~models.Q(body=""), name="review_comment_body_not_empty"),
        ]

    def __str__(self) -> str:
        where = "KPR" if self.operation_position is None else f"#{self.operation_position}"
        return f"{self.author} on {where} of {self.pull_id}"
