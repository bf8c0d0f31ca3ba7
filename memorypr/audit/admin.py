from __future__ import annotations

from django.contrib import admin

from memorypr.audit.models import AuditEvent
from memorypr.common.admin import IdPrefixSearchMixin, NamespaceScopedAdmin


@admin.register(AuditEvent)
class AuditEventAdmin(IdPrefixSearchMixin, NamespaceScopedAdmin):
    id_prefix_field = "pull_id"
    namespace_by_name = True  # the trail stores the name: it outlives any row it names

    list_display = ("sequence", "created_at", "namespace", "event_type", "actor", "subject", "pull_id")
    list_filter = ("namespace", "event_type", "actor", ("created_at", admin.DateFieldListFilter))
    search_fields = ("=pull_id", "actor", "subject", "event_type")
    date_hierarchy = "created_at"
    ordering = ("-sequence",)
    readonly_fields = [f.name for f in AuditEvent._meta.fields]
