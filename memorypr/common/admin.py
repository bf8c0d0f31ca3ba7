"""Admin base classes for what the admin shows but never edits.

Memory, KPRs, review events and the audit trail change only through the services (audited);
the admin is a window onto them. A reviewer who is staff sees the namespaces they review;
a superuser sees everything.
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib import admin
from django.db.models import CharField
from django.db.models.functions import Cast


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_view_permission(self, request: Any, obj: Any = None) -> bool:
        return bool(request.user.is_active and request.user.is_staff)

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False


class NamespaceScopedAdmin(ReadOnlyAdmin):
    """Read-only, and limited to the reviewer's namespaces.

    `namespace_path` is the lookup to the row's namespace; `namespace_by_name` says the row
    stores the namespace's name rather than a foreign key (the audit trail does).
    """

    namespace_path = "namespace"
    namespace_by_name = False

    def get_queryset(self, request: Any) -> Any:
        qs = super().get_queryset(request)
        if request.user.is_superuser:
            return qs
        reviewed = request.user.memberships.values(
            "namespace__name" if self.namespace_by_name else "namespace"
        )
        return qs.filter(**{f"{self.namespace_path}__in": reviewed})


class ReadOnlyInline(admin.TabularInline):
    """An inline list of related rows; every listed field is read-only."""

    extra = 0
    can_delete = False

    def get_readonly_fields(self, request: Any, obj: Any = None) -> Any:
        return tuple(self.fields or ())

    def has_view_permission(self, request: Any, obj: Any = None) -> bool:
        # Whoever may open the parent row (its admin scopes it) sees the rows listed with it.
        return bool(request.user.is_active and request.user.is_staff)

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False


_ID_PREFIX = re.compile(r"^[0-9a-f][0-9a-f-]{3,35}$")


class IdPrefixSearchMixin:
    """Search also finds rows whose UUID `id_prefix_field` starts with the term: the dashboard
    shows ids by their first 8 characters, and a reviewer pastes what they see."""

    id_prefix_field = "id"

    def get_search_results(self, request: Any, queryset: Any, search_term: str) -> Any:
        results, may_have_duplicates = super().get_search_results(  # type: ignore[misc]
            request, queryset, search_term
        )
        term = search_term.strip().lower()
        if _ID_PREFIX.match(term):
            text = Cast(self.id_prefix_field, CharField())
            results |= queryset.annotate(_id_text=text).filter(_id_text__startswith=term)
        return results, may_have_duplicates
