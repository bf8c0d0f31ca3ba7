from __future__ import annotations

import logging
import time
from typing import Any

import redis
from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle

from memorypr.agents.models import Agent

logger = logging.getLogger(__name__)
_last_warning = 0.0


class AgentRateThrottle(SimpleRateThrottle):
    """Requests per agent (not per IP): one agent misbehaving never slows the others."""

    scope = "agent"

    def get_rate(self) -> str | None:
        # Read on each request so the rate can change without a restart (and in tests).
        return settings.MEMORYPR_AGENT_RATE

    def allow_request(self, request: Any, view: Any) -> bool:
        """The counters live in Redis; while it restarts, requests pass unthrottled (a rate limit
        protects the service, it must not take it down), with one warning a minute."""
        try:
            return super().allow_request(request, view)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            global _last_warning
            if time.monotonic() - _last_warning > 60:
                _last_warning = time.monotonic()
                logger.warning("rate limit counters unavailable (%s); not throttling meanwhile", exc)
            return True

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        if not isinstance(request.user, Agent):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}
