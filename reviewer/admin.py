from __future__ import annotations

from typing import Any

from django.contrib import admin

from reviewer.models import ReviewPolicy, UploadedTranscript


class ReadOnlyAdmin(admin.ModelAdmin):
    """Shown, never edited here: changes go through reviewer.services (audited)."""

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False


@admin.register(ReviewPolicy)
class ReviewPolicyAdmin(ReadOnlyAdmin):
    list_display = (
        "namespace",
        "mode",
        "confidence_reject_floor",
        "confidence_approve_bar",
        "updated_at",
        "updated_by",
    )


@admin.register(UploadedTranscript)
class UploadedTranscriptAdmin(ReadOnlyAdmin):
    list_display = ("namespace", "session_id", "uploaded_by", "created_at")
    list_filter = ("namespace",)
    search_fields = ("session_id",)
