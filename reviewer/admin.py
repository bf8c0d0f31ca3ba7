from __future__ import annotations

from django.contrib import admin

from memorypr.common.admin import NamespaceScopedAdmin
from reviewer.models import ReviewPolicy, UploadedTranscript


@admin.register(ReviewPolicy)
class ReviewPolicyAdmin(NamespaceScopedAdmin):
    """Shown, never edited here: a policy changes through reviewer.services (audited)."""

    list_display = (
        "namespace",
        "mode",
        "confidence_reject_floor",
        "confidence_approve_bar",
        "updated_at",
        "updated_by",
    )


@admin.register(UploadedTranscript)
class UploadedTranscriptAdmin(NamespaceScopedAdmin):
    list_display = ("namespace", "session_id", "uploaded_by", "created_at")
    list_filter = ("namespace",)
    search_fields = ("session_id",)
