from __future__ import annotations

from django.contrib import admin

from memorypr.common.admin import IdPrefixSearchMixin, NamespaceScopedAdmin, ReadOnlyInline
from memorypr.pulls.models import KnowledgePullRequest, Operation, ReviewEvent


class OperationInline(ReadOnlyInline):
    model = Operation
    fields = ("position", "action", "category", "key", "old_value", "new_value", "confidence", "importance")


class ReviewEventInline(ReadOnlyInline):
    model = ReviewEvent
    fields = ("created_at", "reviewer_kind", "reviewer", "verdict", "status_after", "reasons")


@admin.register(KnowledgePullRequest)
class KnowledgePullRequestAdmin(IdPrefixSearchMixin, NamespaceScopedAdmin):
    """Read-only: KPRs are immutable and decided through the review services, not the admin."""

    list_display = ("id", "created_at", "namespace", "subject", "agent", "review_status", "merge_status")
    list_filter = ("namespace", "review_status", "merge_status", "agent")
    search_fields = ("=id", "subject", "idempotency_key")
    date_hierarchy = "created_at"
    inlines = [OperationInline, ReviewEventInline]
