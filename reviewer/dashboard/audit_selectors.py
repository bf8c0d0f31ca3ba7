"""What the dashboard's audit pages read: a reviewer's events, filtered, and the chain's state.

The chain spans every namespace, so it is verified by a worker (which sees every event), with
the same walk as `manage.py verify_audit`; the result waits in the cache and the page reads
it. A result older than `CHAIN_FRESH` asks a worker for a new walk, at most once a minute,
and the page shows the last result with its age meanwhile: it never walks the chain itself.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db.models import Q, QuerySet
from django.utils import timezone

from memorypr.audit.models import AuditEvent
from memorypr.audit.selectors import audit_chain_verify
from reviewer.dashboard.selectors import reviewer_namespaces

logger = logging.getLogger(__name__)

CHAIN_CACHE_KEY = "dashboard:audit-chain:v1"
CHAIN_REQUESTED_KEY = "dashboard:audit-chain:requested"
CHAIN_FRESH = timedelta(minutes=5)
EXPORT_COLUMNS = ("sequence", "createdAt", "namespace", "actor", "eventType", "pullId", "subject", "payload", "hash", "prevHash")  # fmt: skip
_HEX_PREFIX = re.compile(r"^[0-9a-f]{1,32}$")


def audit_namespaces(*, user: AbstractBaseUser) -> list[str]:
    return list(reviewer_namespaces(user=user).values_list("name", flat=True))


def uuid_prefix_range(prefix: str) -> tuple[uuid.UUID, uuid.UUID] | None:
    """The UUIDs that start with a hex prefix (dashes optional), as an index-friendly range."""
    digits = prefix.strip().lower().replace("-", "")
    if not _HEX_PREFIX.match(digits):
        return None
    return uuid.UUID(digits.ljust(32, "0")), uuid.UUID(digits.ljust(32, "f"))


def audit_event_list(
    *,
    namespaces: list[str],
    event_type: str = "",
    actor: str = "",
    since: datetime | None = None,
    until: datetime | None = None,
    pull: str = "",
    search: str = "",
) -> QuerySet[AuditEvent]:
    """Events of the given namespaces, newest first, filtered.

    `pull` is a KPR id or its prefix (the eight characters the dashboard shows); `search`
    matches a KPR id prefix, an event hash prefix, `#<sequence>`, a subject or an actor.
    A `pull` that is not hex matches nothing, rather than everything.
    """
    qs = AuditEvent.objects.filter(namespace__in=namespaces)
    if event_type:
        qs = qs.filter(event_type=event_type)
    if actor:
        qs = qs.filter(actor__icontains=actor)
    if since is not None:
        qs = qs.filter(created_at__gte=since)
    if until is not None:
        qs = qs.filter(created_at__lte=until)
    if pull:
        bounds = uuid_prefix_range(pull)
        qs = qs.filter(pull_id__range=bounds) if bounds else qs.none()
    if search:
        qs = qs.filter(_search_q(search.strip()))
    return qs.order_by("-sequence")


def _search_q(term: str) -> Q:
    if re.fullmatch(r"#\d{1,18}", term):
        return Q(sequence=int(term[1:]))
    condition = Q(subject=term) | Q(actor__icontains=term)
    bounds = uuid_prefix_range(term)
    if bounds:
        condition |= Q(pull_id__range=bounds) | Q(hash__startswith=term.lower())
    return condition


def audit_event_types(*, namespaces: list[str]) -> list[str]:
    return list(
        AuditEvent.objects.filter(namespace__in=namespaces)
        .values_list("event_type", flat=True)
        .distinct()
        .order_by("event_type")
    )


def audit_chain_walk() -> dict[str, Any]:
    """Walk the whole chain (as `verify_audit` does) and say what was found, for the cache."""
    checked, broken = audit_chain_verify()
    result: dict[str, Any] = {"checked": checked, "at": timezone.now(), "broken": None}
    if broken is not None:
        namespace = AuditEvent.objects.filter(pk=broken.event_id).values_list("namespace", flat=True).first()
        result["broken"] = {
            "sequence": broken.sequence,
            "reason": broken.reason,
            "namespace": namespace or "",
        }
    return result


@dataclass(frozen=True)
class ChainStatus:
    state: str  # "intact", "broken" or "unknown" (no walk has finished yet)
    checked: int = 0
    at: datetime | None = None
    broken_sequence: int | None = None  # only when the broken event is in the reader's namespaces
    broken_reason: str = ""


def audit_chain_status(*, namespaces: list[str]) -> ChainStatus:
    saved: dict[str, Any] | None = cache.get(CHAIN_CACHE_KEY)
    if saved is None or timezone.now() - saved["at"] > CHAIN_FRESH:
        _request_walk()
        saved = cache.get(CHAIN_CACHE_KEY) or saved  # a worker in eager mode has answered already
    if saved is None:
        return ChainStatus(state="unknown")
    broken = saved["broken"]
    if broken is None:
        return ChainStatus(state="intact", checked=saved["checked"], at=saved["at"])
    mine = broken["namespace"] in namespaces
    return ChainStatus(
        state="broken",
        checked=saved["checked"],
        at=saved["at"],
        broken_sequence=broken["sequence"] if mine else None,
        broken_reason=broken["reason"] if mine else "",
    )


def _request_walk() -> None:
    from reviewer.dashboard.tasks import audit_chain_check

    if not cache.add(CHAIN_REQUESTED_KEY, True, timeout=60):
        return
    try:
        audit_chain_check.delay()
    except Exception:  # the broker is away: the page shows the last result, a later load asks again
        logger.warning("could not ask a worker to verify the audit chain", exc_info=True)
        cache.delete(CHAIN_REQUESTED_KEY)


_EXPORT_FIELDS = ("sequence", "created_at", "namespace", "actor", "event_type", "pull_id", "subject", "payload", "hash", "prev_hash")  # fmt: skip
EXPORT_BATCH = 500
_FORMULA_STARTS = frozenset("=+-@\t\r")


def audit_export_rows(events: QuerySet[AuditEvent]) -> Iterator[dict[str, Any]]:
    """Each event as `canonical_fields()` names it, with its hashes, read in chunks as plain
    values: an export of the whole trail never holds it in memory."""
    for values in events.values_list(*_EXPORT_FIELDS).iterator(chunk_size=2000):
        row = dict(zip(EXPORT_COLUMNS, values, strict=True))
        row["createdAt"] = row["createdAt"].isoformat()
        row["pullId"] = str(row["pullId"]) if row["pullId"] else None
        yield row


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, int):
        return str(value)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    # A spreadsheet runs a cell that starts like a formula: quote it as text.
    return "'" + text if text[:1] in _FORMULA_STARTS else text


def audit_export_csv(events: QuerySet[AuditEvent]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(EXPORT_COLUMNS)
    for index, row in enumerate(audit_export_rows(events), start=1):
        writer.writerow([_cell(row[column]) for column in EXPORT_COLUMNS])
        if index % EXPORT_BATCH == 0:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


def audit_export_json(events: QuerySet[AuditEvent]) -> Iterator[str]:
    batch = ["["]
    for index, row in enumerate(audit_export_rows(events)):
        batch.append(("," if index else "") + "\n" + json.dumps(row, ensure_ascii=False))
        if len(batch) >= EXPORT_BATCH:
            yield "".join(batch)
            batch = []
    batch.append("\n]\n")
    yield "".join(batch)
