from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission

from memorypr.agents.models import Agent


class IsAgent(BasePermission):
    def has_permission(self, request: Any, view: Any) -> bool:
        return isinstance(request.user, Agent)
