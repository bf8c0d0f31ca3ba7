"""The expiry options shared by the commands that issue tokens."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import CommandError

from memorypr.agents.services import DEFAULT_EXPIRY, Expiry


def expiry_arguments(parser: Any) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--expires-in-days", type=int, help="lifetime of the new token (default MEMORYPR_TOKEN_TTL_DAYS)"
    )
    group.add_argument("--no-expiry", action="store_true", help="the new token never expires")


def expiry_from(options: dict[str, Any]) -> Expiry:
    if options["no_expiry"]:
        return None
    days = options["expires_in_days"]
    if days is None:
        return DEFAULT_EXPIRY
    if days <= 0:
        raise CommandError("--expires-in-days must be positive (or use --no-expiry)")
    return timedelta(days=days)


def expiry_text(expires_at: Any) -> str:
    return f"expires {expires_at.isoformat()}" if expires_at else "never expires"
