from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle

from memorypr.agents.models import Agent


class AgentRateThrottle(SimpleRateThrottle):
    """Requests per agent (not per IP): one agent misbehaving never slows the others."""

    scope = "agent"

    def get_rate(self) -> str | None:
        # Read on each request so the rate can change without a restart (and in tests).
        return settings.MEMORYPR_AGENT_RATE

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        if not isinstance(request.user, Agent):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}
