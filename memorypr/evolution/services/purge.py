"""Purge: retired versions older than the retention (default 30 days) leave the fact store.

Not a KPR: nothing that is true changes (the rows are history, already out of retrieval),
and a KPR's operations act on current facts. The audit log keeps every purged row's
content and the edges that went with it (FactEdge rows cascade), so history stays
answerable after the purge. Each batch is one transaction under the subjects' merge locks.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from django.db import DatabaseError, transaction
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from memorypr.audit.services import audit_record
from memorypr.common.locks import lock_rows, lock_subjects
from memorypr.evolution.conf import conf, conf_int
from memorypr.evolution.services.proposals import JobReport
from memorypr.facts.models import FactEdge, FactStatus, FactVersion

logger = logging.getLogger(__name__)


def _snapshot(fact: FactVersion) -> dict[str, Any]:
    return {
        "factId": fact.pk,
        "category": fact.category,
        "key": fact.key,
        "version": fact.version,
        "status": fact.status,
        "value": fact.value,
        "confidence": fact.confidence,
        "createdAt": fact.created_at.isoformat(),
        "retiredAt": fact.retired_at.isoformat() if fact.retired_at else None,
        "pullId": str(fact.pull_id) if fact.pull_id else None,
        "retiredByPullId": str(fact.retired_by_pull_id) if fact.retired_by_pull_id else None,
    }


def purge_run(*, now: datetime | None = None, limit: int | None = None) -> JobReport:
    now = now or timezone.now()
    budget = limit if limit is not None else conf_int("MEMORYPR_EVOLUTION_BATCH")
    cutoff = now - timedelta(days=conf("MEMORYPR_PURGE_AFTER_DAYS"))
    report = JobReport(job="purge")
    ids = list(
        FactVersion.objects.exclude(status=FactStatus.ACTIVE)
        .annotate(retired=Coalesce("retired_at", "updated_at"))
        .filter(retired__lt=cutoff)
        .order_by("retired", "pk")
        .values_list("pk", flat=True)[:budget]
    )
    if not ids:
        return report
    try:
        report.proposed = _purge(ids=ids)
    except DatabaseError:
        # A row someone else still references (or a store that refuses deletes): leave the batch.
        logger.warning("purge of %d retired versions failed; kept", len(ids), exc_info=True)
    report.examined = len(ids)
    return report


def _purge(*, ids: list[int]) -> int:
    with transaction.atomic():
        rows = FactVersion.objects.filter(pk__in=ids).select_related("namespace").defer("embedding")
        lock_subjects(keys={(f.namespace.name, f.subject) for f in rows})
        facts = lock_rows(
            FactVersion.objects.filter(pk__in=ids)
            .exclude(status=FactStatus.ACTIVE)
            .select_related("namespace")
            .defer("embedding")
        )
        edges = list(
            FactEdge.objects.filter(Q(source_id__in=ids) | Q(target_id__in=ids)).values(
                "source_id", "target_id", "edge_type"
            )
        )
        groups: dict[tuple[str, str], list[FactVersion]] = defaultdict(list)
        for fact in facts:
            groups[(fact.namespace.name, fact.subject)].append(fact)
        for (namespace, subject), members in sorted(groups.items()):
            member_ids = {f.pk for f in members}
            audit_record(
                event_type="facts.purged",
                actor="system:purge",
                namespace=namespace,
                subject=subject,
                payload={
                    "facts": [_snapshot(f) for f in members],
                    "edges": [
                        {"source": e["source_id"], "target": e["target_id"], "type": e["edge_type"]}
                        for e in edges
                        if e["source_id"] in member_ids or e["target_id"] in member_ids
                    ],
                },
            )
        FactVersion.objects.filter(pk__in=[f.pk for f in facts]).delete()
    return len(facts)
