"""What /healthz reports: whether work flows end to end, not only whether processes answer.

`ok` needs a database that answers, a broker that accepts a connection, a worker heartbeat
younger than MEMORYPR_HEALTH_HEARTBEAT_MAX_SECONDS, and no KPR waiting for its review or its
merge longer than MEMORYPR_HEALTH_STUCK_SECONDS. A database that does not answer is `down`;
anything else amiss is `degraded`, with one line per reason in `problems`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memorypr.common.db.tenancy import tenancy_scope_all_local
from memorypr.common.selectors import database_pgvector_version, heartbeat_last
from memorypr.common.tasks import WORKER_HEARTBEAT
from memorypr.pulls.selectors import pull_oldest_approved_unmerged_reviewed_at, pull_oldest_pending_created_at

# /healthz answers within about this long even when the broker or the database hangs.
BROKER_TIMEOUT_SECONDS = 1.5
DATABASE_TIMEOUT_MS = 1500

OK, DEGRADED, DOWN = "ok", "degraded", "down"


@dataclass
class HealthReport:
    database: str = OK
    pgvector: str | None = None
    broker: str = OK
    worker_seconds: float | None = None
    oldest_pending_seconds: float | None = None
    oldest_approved_unmerged_seconds: float | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        if self.database != OK:
            return DOWN
        return DEGRADED if self.problems else OK

    def as_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "database": self.database,
            "pgvector": self.pgvector,
            "broker": self.broker,
            "worker": _rounded(self.worker_seconds),
            "oldestPendingSeconds": _rounded(self.oldest_pending_seconds),
            "oldestApprovedUnmergedSeconds": _rounded(self.oldest_approved_unmerged_seconds),
            "problems": self.problems,
        }


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 1)


def _age(since: datetime | None, now: datetime) -> float | None:
    # A web node's clock slightly behind a worker's must not report a negative age.
    return None if since is None else max((now - since).total_seconds(), 0.0)


def _broker_probe() -> str:
    from memorypr.celery import app

    try:
        with app.connection_for_write(connect_timeout=BROKER_TIMEOUT_SECONDS) as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, timeout=BROKER_TIMEOUT_SECONDS)
        return OK
    except Exception as exc:  # noqa: BLE001 - any transport failure is reported, never raised
        return f"error: {type(exc).__name__}"


def _start_broker_probe() -> tuple[threading.Thread, list[str]]:
    # In a thread of its own: a broker that swallows packets cannot hold /healthz past the
    # deadline, and the probe overlaps with the database reads.
    result: list[str] = []
    thread = threading.Thread(
        target=lambda: result.append(_broker_probe()), name="healthz-broker", daemon=True
    )
    thread.start()
    return thread, result


def _read_database(report: HealthReport, *, now: datetime) -> None:
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('statement_timeout', %s, true)", [str(DATABASE_TIMEOUT_MS)])
        # Counts over every namespace, never a row's content: the only cross-tenant read of the web tier.
        tenancy_scope_all_local()
        version = database_pgvector_version()
        heartbeat = heartbeat_last(name=WORKER_HEARTBEAT)
        pending = pull_oldest_pending_created_at()
        unmerged = pull_oldest_approved_unmerged_reviewed_at()
    report.pgvector = version or "missing"
    report.worker_seconds = _age(heartbeat, now)
    report.oldest_pending_seconds = _age(pending, now)
    report.oldest_approved_unmerged_seconds = _age(unmerged, now)


def _work_problems(report: HealthReport) -> list[str]:
    heartbeat_max = float(settings.MEMORYPR_HEALTH_HEARTBEAT_MAX_SECONDS)
    stuck = float(settings.MEMORYPR_HEALTH_STUCK_SECONDS)
    problems = []
    if report.worker_seconds is None:
        problems.append("worker: no heartbeat recorded (is a worker and beat running?)")
    elif report.worker_seconds > heartbeat_max:
        problems.append(
            f"worker: last heartbeat {report.worker_seconds:.0f} s ago (limit {heartbeat_max:.0f} s)"
        )
    if report.oldest_pending_seconds is not None and report.oldest_pending_seconds > stuck:
        problems.append(
            f"review: a KPR has waited {report.oldest_pending_seconds:.0f} s for its review (limit {stuck:.0f} s)"
        )
    if (
        report.oldest_approved_unmerged_seconds is not None
        and report.oldest_approved_unmerged_seconds > stuck
    ):
        problems.append(
            f"merge: an approved KPR has waited {report.oldest_approved_unmerged_seconds:.0f} s"
            f" for its merge (limit {stuck:.0f} s)"
        )
    return problems


def health_check(*, now: datetime | None = None) -> HealthReport:
    """Database, broker, worker heartbeat and the oldest waiting KPRs, as of `now`."""
    now = now or timezone.now()
    report = HealthReport()
    deadline = time.monotonic() + BROKER_TIMEOUT_SECONDS + 0.3
    probe, broker = _start_broker_probe()
    try:
        _read_database(report, now=now)
    except Exception as exc:  # noqa: BLE001 - a database that does not answer is reported, never raised
        report.database = f"error: {type(exc).__name__}"
        report.problems.append(f"database: {report.database}")
    probe.join(max(deadline - time.monotonic(), 0.0))
    report.broker = broker[0] if broker else "error: timeout"
    if report.database == OK:
        report.problems.extend(_work_problems(report))
    if report.broker != OK:
        report.problems.append(f"broker: {report.broker}")
    return report
