"""Every lock the application takes, in one place, always in the same order.

Order: (0) the KPR row lock (memorypr.pulls.selectors.pull_lock), before any other;
(1) per-subject merge locks, sorted by key; (2) row locks on fact versions (`lock_rows`,
primary-key order); (3) the audit chain lock last, because every transaction appends its
audit rows at the end of its work.
Advisory locks are transaction-scoped: they are released at commit or rollback.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from typing import TypeVar

from django.db import connection, models

_M = TypeVar("_M", bound=models.Model)

AUDIT_CHAIN_LOCK = 0x4D505241  # "MPRA"
_SUBJECT_LOCK_SPACE = 0x4D505253  # "MPRS"


def _lock_id(text: str) -> int:
    return zlib.crc32(text.encode())


def lock_audit_chain() -> None:
    """Serialise appends to the hash chain: each row needs the previous row's hash."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [AUDIT_CHAIN_LOCK])


def lock_subjects(*, keys: Iterable[tuple[str, str]]) -> None:
    """Lock (namespace name, subject) pairs for a merge, sorted so two merges never deadlock."""
    ordered = sorted(set(keys))
    with connection.cursor() as cursor:
        for namespace, subject in ordered:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(%s, %s)",
                [_SUBJECT_LOCK_SPACE, _lock_id(f"{namespace}\x1f{subject}") - 2**31],
            )


def lock_rows(queryset: models.QuerySet[_M]) -> list[_M]:
    """Row-lock a queryset's rows (FOR UPDATE of its own table) in primary-key order."""
    return list(queryset.select_for_update(of=("self",)).order_by("pk"))
