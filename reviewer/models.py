from __future__ import annotations

from django.db import models

from memorypr.agents.models import Namespace


class ReviewMode(models.TextChoices):
    # The LLM reviewer runs when OPENAI_BASE_URL is set; otherwise the rules decide alone.
    RULES_AND_LLM = "rules_and_llm", "Rules, then the LLM when configured"
    RULES_ONLY = "rules_only", "Rules only"
    # Without a working LLM reviewer nothing is approved automatically.
    LLM_REQUIRED = "llm_required", "Rules and the LLM; escalate when the LLM is unavailable"


class ReviewPolicy(models.Model):
    """A namespace's review configuration; a namespace without a row uses the defaults.

    Written only through reviewer.services.review_policy_set (audited). Empty lists mean
    "the default": every category, any key the protocol accepts, the built-in protected topics.
    """

    namespace = models.OneToOneField(Namespace, on_delete=models.CASCADE, related_name="review_policy")
    mode = models.CharField(max_length=16, choices=ReviewMode.choices, default=ReviewMode.RULES_AND_LLM)
    human_categories = models.JSONField(default=list, blank=True)
    allowed_categories = models.JSONField(default=list, blank=True)
    key_patterns = models.JSONField(default=list, blank=True)
    protected_key_patterns = models.JSONField(default=list, blank=True)
    protected_importance = models.FloatField(default=0.9)
    confidence_reject_floor = models.FloatField(default=0.3)
    confidence_approve_bar = models.FloatField(default=0.7)
    agent_hourly_limit = models.PositiveIntegerField(default=600)
    disabled_rules = models.JSONField(default=list, blank=True)
    # Rules that only suggest in this namespace: their findings are shown, they hold nothing.
    suggestion_rules = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.CharField(max_length=200, blank=True)

    class Meta:
        verbose_name_plural = "review policies"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(confidence_reject_floor__gte=0)
                & models.Q(confidence_reject_floor__lte=models.F("confidence_approve_bar"))
                & models.Q(confidence_approve_bar__lte=1),
                name="review_policy_confidence_order",
            ),
            models.CheckConstraint(
                condition=models.Q(protected_importance__gte=0) & models.Q(protected_importance__lte=1),
                name="review_policy_protected_importance_0_1",
            ),
        ]

    def __str__(self) -> str:
        return f"review policy of {self.namespace}"


class UploadedTranscript(models.Model):
    """A session transcript handed in by an operator or an integration; append-only.

    Evidence quotes of KPRs from that session are checked against it (and against working
    memory) for verbatim presence. Several uploads for one session are read in order.
    """

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="uploaded_transcripts")
    session_id = models.CharField(max_length=200)
    text = models.TextField()
    uploaded_by = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["namespace", "session_id", "created_at", "id"]
        indexes = [models.Index(fields=["namespace", "session_id"], name="transcript_ns_session")]

    def __str__(self) -> str:
        return f"transcript {self.namespace}/{self.session_id}"
