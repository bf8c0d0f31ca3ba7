from __future__ import annotations

from django.conf import settings


def turns_kept() -> int:
    return int(getattr(settings, "MEMORYPR_WORKING_MEMORY_TURNS", 20))


def idle_ttl_seconds() -> int:
    return int(getattr(settings, "MEMORYPR_WORKING_MEMORY_TTL_SECONDS", 1800))


def redis_prefix() -> str:
    return str(getattr(settings, "MEMORYPR_WORKING_MEMORY_PREFIX", "memorypr:wm"))


def transcript_retention_days() -> int:
    return int(getattr(settings, "MEMORYPR_TRANSCRIPT_RETENTION_DAYS", 90))


def max_turn_chars() -> int:
    return int(getattr(settings, "MEMORYPR_MAX_TURN_CHARS", 32000))
