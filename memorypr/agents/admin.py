from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from memorypr.agents.models import Agent, AgentToken, Namespace, ReviewerMembership
from memorypr.agents.services import agent_revoke, token_revoke


def _actor(request: HttpRequest) -> str:
    return f"admin:{request.user.get_username()}"


class AgentTokenInline(admin.TabularInline):
    model = AgentToken
    extra = 0
    fields = ("prefix", "created_at", "expires_at", "last_used_at", "revoked_at")
    # Revocation goes through the actions (audited); the admin never edits a token in place.
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False  # tokens are issued by `create_agent` or `rotate_token`, which show the token once


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ("name", "trust", "is_active", "created_at")
    list_filter = ("trust", "is_active", "namespaces")
    search_fields = ("name",)
    filter_horizontal = ("namespaces",)
    inlines = [AgentTokenInline]
    actions = ["revoke"]

    @admin.action(description="Revoke the selected agents and all their tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[Agent]) -> None:
        for agent in queryset:
            agent_revoke(agent=agent, actor=_actor(request), reason="revoked in the admin")
        self.message_user(request, f"{queryset.count()} agent(s) revoked.", messages.SUCCESS)


@admin.register(AgentToken)
class AgentTokenAdmin(admin.ModelAdmin):
    list_display = ("prefix", "agent", "created_at", "expires_at", "last_used_at", "revoked_at")
    list_filter = ("agent",)
    search_fields = ("prefix", "agent__name")
    readonly_fields = ("agent", "prefix", "created_at", "expires_at", "last_used_at", "revoked_at")
    exclude = ("token_hash",)
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # a revoked token stays on record

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[AgentToken]) -> None:
        revoked = sum(
            token_revoke(token=token, actor=_actor(request), reason="revoked in the admin")
            for token in queryset.select_related("agent")
        )
        self.message_user(request, f"{revoked} token(s) revoked.", messages.SUCCESS)


@admin.register(Namespace)
class NamespaceAdmin(admin.ModelAdmin):
    list_display = ("name", "created_at")
    search_fields = ("name",)


@admin.register(ReviewerMembership)
class ReviewerMembershipAdmin(admin.ModelAdmin):
    list_display = ("user", "namespace")
    list_filter = ("namespace",)
