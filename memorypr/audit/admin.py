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

    def get_queryset(self, request: Any) -> Any:
        # A reviewer sees the events of the namespaces they review; admins see everything.
        qs = super().get_queryset(request)
        if request.user.is_superuser:
            return qs
        return qs.filter(namespace__in=request.user.memberships.values("namespace__name"))

    def has_view_permission(self, request: Any, obj: Any = None) -> bool:
        return bool(request.user.is_active and request.user.is_staff)

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False
