"""Requests per agent, counted in Redis in one round trip.

The counter is a sliding window estimated from two fixed windows (the current one, and the
previous one weighted by how much of it still overlaps the last `period` seconds). It costs two
small integers per agent, whatever the rate; DRF's own throttle keeps a list of every request's
timestamp and sends it back and forth on each request, which grows with the rate.
"""

from __future__ import annotations

import logging
import time
from functools import lru_cache
from typing import Any

import redis
from django.conf import settings
from rest_framework.throttling import BaseThrottle, SimpleRateThrottle

from memorypr.agents.models import Agent

logger = logging.getLogger(__name__)
_last_warning = 0.0

REDIS_CACHE_BACKEND = "django.core.cache.backends.redis.RedisCache"

# KEYS: the current window's counter, the previous window's. ARGV: the previous window's weight,
# the limit, the counters' lifetime. Counts the request only when it is allowed.
SLIDING_WINDOW = """
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local previous = tonumber(redis.call('GET', KEYS[2]) or '0')
if previous * tonumber(ARGV[1]) + current >= tonumber(ARGV[2]) then
  return {0, current, previous}
end
redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return {1, current + 1, previous}
"""


@lru_cache(maxsize=4)
def _counters(location: str) -> Any:
    """One client (and connection pool) per process: redis-py's pool reconnects after a fork."""
    client = redis.Redis.from_url(location, socket_timeout=2, socket_connect_timeout=2)
    return client.register_script(SLIDING_WINDOW)


class AgentRateThrottle(BaseThrottle):
    """Requests per agent (not per IP): one agent misbehaving never slows the others.

    The rate (`MEMORYPR_AGENT_RATE`, e.g. "6000/min") is read on each request so that it can
    change without a restart. The counters live in the Redis of the default cache; while it
    restarts, requests pass unthrottled (a rate limit protects the service, it must not take it
    down), with one warning a minute. A cache that is not Redis (a test or a bare development
    setup) counts with DRF's throttle instead.
    """

    def __init__(self) -> None:
        self._wait: float | None = None

    def allow_request(self, request: Any, view: Any) -> bool:
        agent = request.user
        rate = settings.MEMORYPR_AGENT_RATE
        if not isinstance(agent, Agent) or not rate:
            return True
        cache = settings.CACHES["default"]
        if cache["BACKEND"] != REDIS_CACHE_BACKEND:
            fallback = _CacheThrottle()
            allowed = fallback.allow_request(request, view)
            self._wait = None if allowed else fallback.wait()
            return allowed
        limit, period = parse_rate(rate)
        now = _now()
        window, into = divmod(now, period)
        prefix = f"{cache.get('KEY_PREFIX', '')}:throttle:agent:{agent.pk}"
        weight = 1 - into / period
        try:
            allowed, current, previous = _counters(str(cache["LOCATION"]))(
                keys=[f"{prefix}:{int(window)}", f"{prefix}:{int(window) - 1}"],
                args=[weight, limit, 2 * period],
            )
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            _warn_unthrottled(exc)
            return True
        if not allowed:
            self._wait = _seconds_until_allowed(
                current=current, previous=previous, limit=limit, period=period, into=into
            )
        return bool(allowed)

    def wait(self) -> float | None:
        return self._wait


PERIOD_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_rate(rate: str) -> tuple[int, int]:
    """'6000/min' -> (6000, 60): DRF's notation, where only the unit's first letter counts."""
    count, _, unit = rate.partition("/")
    return int(count), PERIOD_SECONDS[unit[0]]


def _now() -> float:
    return time.time()


def _seconds_until_allowed(*, current: int, previous: int, limit: int, period: int, into: float) -> float:
    """When the estimate drops below the limit: the previous window's share fades linearly."""
    if current < limit and previous:
        # previous * (1 - (into + t) / period) + current < limit
        return max(1.0, period * (1 - (limit - current) / previous) - into)
    return max(1.0, period - into)  # the current window is full: wait for the next one


def _warn_unthrottled(exc: Exception) -> None:
    global _last_warning
    if time.monotonic() - _last_warning > 60:
        _last_warning = time.monotonic()
        logger.warning("rate limit counters unavailable (%s); not throttling meanwhile", exc)


class _CacheThrottle(SimpleRateThrottle):
    scope = "agent"

    def get_rate(self) -> str | None:
        return settings.MEMORYPR_AGENT_RATE

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}
