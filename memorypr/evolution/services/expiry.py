"""Expiry: a fact whose validTo has passed is proposed for removal.

Retrieval already stops serving it the moment validTo passes (the valid-time filter);
this job makes the store say so too, through a reviewed DELETE.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import CharField, Exists, OuterRef, Value
from django.db.models.functions import Cast, Concat
from django.utils import timezone

from memorypr.evolution.conf import conf_int
from memorypr.evolution.services.proposals import (
    JobReport,
    delete_op,
    report_add,
    system_agent_id,
    system_propose,
)
from memorypr.facts.models import FactStatus, FactVersion
from memorypr.pulls.models import KnowledgePullRequest


def expire_key(fact_id: int) -> str:
    return f"evolution:expire:{fact_id}"


def expiry_run(*, now: datetime | None = None, limit: int | None = None) -> JobReport:
    now = now or timezone.now()
    budget = limit if limit is not None else conf_int("MEMORYPR_EVOLUTION_BATCH")
    report = JobReport(job="expiry")
    proposed = KnowledgePullRequest.objects.filter(
        agent_id=system_agent_id() or -1, idempotency_key=OuterRef("expire_key")
    )
    due = (
        FactVersion.objects.filter(status=FactStatus.ACTIVE, valid_to__lte=now)
        .annotate(expire_key=Concat(Value("evolution:expire:"), Cast("pk", CharField())))
        .exclude(Exists(proposed))
        .select_related("namespace")
        .defer("embedding")
        .order_by("valid_to", "pk")[:budget]
    )
    for fact in due:
        report.examined += 1
        assert fact.valid_to is not None
        pull, created = system_propose(
            namespace=fact.namespace,
            subject=fact.subject,
            job="expiry",
            idempotency_key=expire_key(fact.pk),
            operations=[
                delete_op(
                    fact=fact, reason=f"Expired: valid until {fact.valid_to.isoformat()}, which has passed."
                )
            ],
        )
        report_add(report, pull, created)
    return report
