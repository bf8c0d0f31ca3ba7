from __future__ import annotations

from django.contrib import admin

from memorypr.common.admin import NamespaceScopedAdmin, ReadOnlyInline
from memorypr.facts.models import FactEdge, FactVersion


class OutEdgeInline(ReadOnlyInline):
    model = FactEdge
    fk_name = "source"
    fields = ("edge_type", "target", "pull", "created_at")
    verbose_name_plural = "edges from this version"


@admin.register(FactVersion)
class FactVersionAdmin(NamespaceScopedAdmin):
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
class FactEdgeAdmin(NamespaceScopedAdmin):
    namespace_path = "source__namespace"
    list_display = ("source", "edge_type", "target", "pull", "created_at")
    list_filter = ("edge_type",)
    readonly_fields = [f.name for f in FactEdge._meta.fields]
