from __future__ import annotations

from typing import Any

from django.contrib import admin

from memorypr.audit.models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ("sequence", "created_at", "namespace", "event_type", "actor", "subject", "pull_id")
    list_filter = ("namespace", "event_type", "actor", ("created_at", admin.DateFieldListFilter))
    search_fields = ("=pull_id", "actor", "subject", "event_type")
    date_hierarchy = "created_at"
    ordering = ("-sequence",)
    readonly_fields = [f.name for f in AuditEvent._meta.fields]

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False
