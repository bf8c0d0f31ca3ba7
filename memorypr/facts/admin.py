from __future__ import annotations

from typing import Any

from django.contrib import admin

from memorypr.facts.models import FactEdge, FactVersion


class ReadOnlyScopedAdmin(admin.ModelAdmin):
    """Facts change only through merged KPRs: the admin shows history, it never edits it."""

    namespace_path = "namespace"

    def get_queryset(self, request: Any) -> Any:
        # A reviewer sees the namespaces they review; admins see everything.
        qs = super().get_queryset(request)
        if request.user.is_superuser:
            return qs
        return qs.filter(**{f"{self.namespace_path}__in": request.user.memberships.values("namespace")})

    def has_view_permission(self, request: Any, obj: Any = None) -> bool:
        return bool(request.user.is_active and request.user.is_staff)

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False


class OutEdgeInline(admin.TabularInline):
    model = FactEdge
    fk_name = "source"
    fields = ("edge_type", "target", "pull", "created_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    verbose_name_plural = "edges from this version"

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False


@admin.register(FactVersion)
class FactVersionAdmin(ReadOnlyScopedAdmin):
    list_display = (
        "key",
        "subject",
        "category",
        "version",
        "status",
        "confidence",
        "created_at",
        "retired_at",
    )
    list_filter = ("namespace", "status", "category")
    search_fields = ("=subject", "key")
    ordering = ("namespace", "subject", "category", "key", "version")
    exclude = ("embedding",)
    readonly_fields = [f.name for f in FactVersion._meta.fields if f.name != "embedding"]
    inlines = [OutEdgeInline]


@admin.register(FactEdge)
class FactEdgeAdmin(ReadOnlyScopedAdmin):
    namespace_path = "source__namespace"
    list_display = ("source", "edge_type", "target", "pull", "created_at")
    list_filter = ("edge_type",)
    readonly_fields = [f.name for f in FactEdge._meta.fields]
