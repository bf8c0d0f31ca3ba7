from __future__ import annotations

from typing import Any

from django.contrib import admin

from memorypr.agents.models import Agent, AgentToken, Namespace, ReviewerMembership


class AgentTokenInline(admin.TabularInline):
    model = AgentToken
    extra = 0
    fields = ("prefix", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("prefix", "created_at", "last_used_at")
    can_delete = False

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False  # tokens are issued by `create_agent`, which shows the token once


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ("name", "trust", "is_active", "created_at")
    list_filter = ("trust", "is_active", "namespaces")
    search_fields = ("name",)
    filter_horizontal = ("namespaces",)
    inlines = [AgentTokenInline]


@admin.register(Namespace)
class NamespaceAdmin(admin.ModelAdmin):
    list_display = ("name", "created_at")
    search_fields = ("name",)


@admin.register(ReviewerMembership)
class ReviewerMembershipAdmin(admin.ModelAdmin):
    list_display = ("user", "namespace")
    list_filter = ("namespace",)
