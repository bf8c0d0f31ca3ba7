"""Forgetting and capacity: propose DELETE KPRs for facts whose score fell below the bar,
for facts marked by feedback, and for the lowest-scoring share of an over-full subject.

Importance-critical facts (≥ MEMORYPR_DECAY_EXEMPT_IMPORTANCE) are never proposed here.
"""

from __future__ import annotations

import math
from datetime import datetime

from django.db import connection
from django.utils import timezone

from memorypr.evolution.conf import conf, conf_int
from memorypr.evolution.models import ForgettingMark
from memorypr.evolution.services.proposals import (
    JobReport,
    delete_op,
    forget_key,
    report_add,
    system_agent_id,
    system_propose,
)
from memorypr.evolution.services.scoring import SCORE_SQL, score_params
from memorypr.facts.models import FactVersion
from memorypr.pulls.models import MergeStatus, ReviewStatus

_NOT_PROPOSED = """
    NOT EXISTS (SELECT 1 FROM pulls_knowledgepullrequest k
                WHERE k.agent_id = %(system)s AND k.idempotency_key = 'evolution:forget:' || f.id)
"""


def _propose_forget(*, fact: FactVersion, job: str, reason: str, report: JobReport) -> None:
    pull, created = system_propose(
        namespace=fact.namespace,
        subject=fact.subject,
        job=job,
        idempotency_key=forget_key(fact.pk),
        operations=[delete_op(fact=fact, reason=reason)],
    )
    report_add(report, pull, created)
    ForgettingMark.objects.filter(fact=fact, pull__isnull=True).update(pull=pull)


def forgetting_run(*, now: datetime | None = None, limit: int | None = None) -> JobReport:
    """Marked facts first (feedback said they are wrong), then the lowest scores under the threshold."""
    now = now or timezone.now()
    budget = limit if limit is not None else conf_int("MEMORYPR_EVOLUTION_BATCH")
    report = JobReport(job="forgetting")
    marks = (
        ForgettingMark.objects.filter(pull__isnull=True, fact__status="active")
        .select_related("fact__namespace")
        .order_by("marked_at", "pk")[:budget]
    )
    for mark in marks:
        report.examined += 1
        _propose_forget(
            fact=mark.fact,
            job="forgetting",
            reason=(
                f"Forget: feedback lowered its confidence to {mark.fact.confidence:.2f},"
                f" below the forgetting bar {conf('MEMORYPR_FORGET_CONFIDENCE'):.2f}."
            ),
            report=report,
        )
    remaining = budget - report.examined
    if remaining <= 0:
        return report
    params = score_params(now=now) | {
        "system": system_agent_id() or -1,
        "threshold": conf("MEMORYPR_FORGET_THRESHOLD"),
        "exempt": conf("MEMORYPR_DECAY_EXEMPT_IMPORTANCE"),
        "n": remaining,
    }
    sql = f"""
        SELECT f.id, {SCORE_SQL} AS score FROM facts_factversion f
        WHERE f.status = 'active' AND f.importance < %(exempt)s AND {SCORE_SQL} < %(threshold)s
          AND {_NOT_PROPOSED}
        ORDER BY score, f.id LIMIT %(n)s
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        scores = dict(cursor.fetchall())
    facts = FactVersion.objects.filter(pk__in=scores).select_related("namespace").defer("embedding")
    for fact in sorted(facts, key=lambda f: (scores[f.pk], f.pk)):
        report.examined += 1
        last = fact.last_accessed_at or fact.created_at
        _propose_forget(
            fact=fact,
            job="forgetting",
            reason=(
                f"Forget: score {scores[fact.pk]:.3f} is below {params['threshold']:.3f}"
                f" (last used {(now - last).days} days ago, {fact.access_count} accesses,"
                f" importance {fact.importance:.2f})."
            ),
            report=report,
        )
    return report


def capacity_run(*, now: datetime | None = None, limit: int | None = None) -> JobReport:
    """Subjects over capacity: propose forgetting their lowest-scoring share (default 10%).

    Facts whose forgetting is already pending count towards the share, so a re-run before
    the KPRs are decided proposes nothing more.
    """
    now = now or timezone.now()
    budget = limit if limit is not None else conf_int("MEMORYPR_EVOLUTION_BATCH")
    capacity = conf_int("MEMORYPR_CAPACITY_PER_SUBJECT")
    report = JobReport(job="capacity")
    system = system_agent_id() or -1
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT namespace_id, subject, count(*) FROM facts_factversion WHERE status = 'active'
               GROUP BY namespace_id, subject HAVING count(*) > %s ORDER BY count(*) DESC, namespace_id, subject""",
            [capacity],
        )
        over = cursor.fetchall()
    for namespace_id, subject, count in over:
        if budget <= 0:
            break
        share = max(count - capacity, math.ceil(count * conf("MEMORYPR_CAPACITY_DROP_FRACTION")))
        pending = _pending_forgets(namespace_id=namespace_id, subject=subject, system=system)
        wanted = min(share - pending, budget)
        if wanted <= 0:
            continue
        params = score_params(now=now) | {
            "system": system,
            "ns": namespace_id,
            "subject": subject,
            "exempt": conf("MEMORYPR_DECAY_EXEMPT_IMPORTANCE"),
            "n": wanted,
        }
        with connection.cursor() as cursor:
            cursor.execute(
                f"""SELECT f.id, {SCORE_SQL} AS score FROM facts_factversion f
                    WHERE f.namespace_id = %(ns)s AND f.subject = %(subject)s AND f.status = 'active'
                      AND f.importance < %(exempt)s AND {_NOT_PROPOSED}
                    ORDER BY score, f.id LIMIT %(n)s""",
                params,
            )
            scores = dict(cursor.fetchall())
        facts = FactVersion.objects.filter(pk__in=scores).select_related("namespace").defer("embedding")
        for fact in sorted(facts, key=lambda f: (scores[f.pk], f.pk)):
            report.examined += 1
            budget -= 1
            _propose_forget(
                fact=fact,
                job="capacity",
                reason=(
                    f"Forget: subject holds {count} active facts, over its capacity of {capacity};"
                    f" this fact is among the lowest-scoring {share} (score {scores[fact.pk]:.3f})."
                ),
                report=report,
            )
    return report


def _pending_forgets(*, namespace_id: int, subject: str, system: int) -> int:
    """Active facts of the subject with an undecided or approved-but-unmerged forgetting KPR."""
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT count(*) FROM facts_factversion f JOIN pulls_knowledgepullrequest k
                 ON k.agent_id = %(system)s AND k.idempotency_key = 'evolution:forget:' || f.id
               WHERE f.namespace_id = %(ns)s AND f.subject = %(subject)s AND f.status = 'active'
                 AND k.merge_status = %(unmerged)s AND k.review_status = ANY(%(open)s)""",
            {
                "system": system,
                "ns": namespace_id,
                "subject": subject,
                "unmerged": MergeStatus.UNMERGED,
                "open": [ReviewStatus.PENDING, ReviewStatus.NEEDS_HUMAN_REVIEW, ReviewStatus.APPROVED],
            },
        )
        row = cursor.fetchone()
    return int(row[0]) if row else 0
