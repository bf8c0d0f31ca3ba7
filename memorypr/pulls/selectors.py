from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Count, DurationField, ExpressionWrapper, F, Model, Q, QuerySet, Sum
from django.db.models.expressions import RawSQL
from django.utils import timezone

from memorypr.agents.models import Agent
from memorypr.common.db.rows import ModelRows
from memorypr.common.prefetch import prefetched_set, related_set
from memorypr.pulls.models import (
    KnowledgePullRequest,
    MergeStatus,
    Operation,
    ReviewComment,
    ReviewEvent,
    ReviewStatus,
)


def pull_list(
    *,
    agent: Agent,
    namespace: str | None = None,
    review_status: str | None = None,
    subject: str | None = None,
    since: datetime | None = None,
) -> QuerySet[KnowledgePullRequest]:
    """KPRs in the agent's namespaces, newest first."""
    qs = (
        KnowledgePullRequest.objects.filter(namespace__in=agent.namespaces.all())
        .select_related("namespace", "agent")
        .prefetch_related("operations", "comments")
        .order_by("-created_at", "-id")
    )
    if namespace:
        qs = qs.filter(namespace__name=namespace)
    if review_status:
        qs = qs.filter(review_status=review_status)
    if subject:
        qs = qs.filter(subject=subject)
    if since:
        qs = qs.filter(created_at__gte=since)
    return qs


_PULL_ROWS = ModelRows(KnowledgePullRequest, alias="p")
_PULL_SQL = f"""
    SELECT {_PULL_ROWS.columns}, a.name
    FROM {KnowledgePullRequest._meta.db_table} p JOIN agents_agent a ON a.id = p.agent_id
    WHERE p.id = %s AND p.namespace_id = ANY(%s)
"""


def pull_get_for_agent(*, agent: Agent, pull_id: str) -> KnowledgePullRequest | None:
    """A KPR the agent may see; None for unknown ids and other tenants' KPRs alike.

    A written statement: building the ORM query cost more than running it (a proposer polls
    its KPRs). The namespace comes from the agent's own, loaded with it at authentication;
    the proposing agent is the reader, or is read here by name.
    """
    namespaces = {namespace.pk: namespace for namespace in agent.namespaces.all()}
    try:
        pull_key = uuid.UUID(str(pull_id))
    except ValueError:
        return None
    with connection.cursor() as cursor:
        cursor.execute(_PULL_SQL, [pull_key, list(namespaces)])
        row = cursor.fetchone()
    if row is None:
        return None
    pull = _PULL_ROWS.instance(row)
    related_set(pull, "namespace", namespaces[pull.namespace_id])
    proposer_name = row[-1]
    proposer = (
        agent
        if pull.agent_id == agent.pk
        else Agent.from_db(None, ["id", "name"], [pull.agent_id, proposer_name])
    )
    related_set(pull, "agent", proposer)
    pull_children_load(pull=pull)
    return pull


def _children_statement(model: type[Model], order: str) -> tuple[ModelRows[Any], str]:
    rows: ModelRows[Any] = ModelRows(model)
    return rows, f"SELECT {rows.columns} FROM {model._meta.db_table} WHERE pull_id = %s ORDER BY {order}"


# A KPR's sets, each in its model's order, read by one written statement apiece: what
# prefetch_related() would read, without building the query each time (a KPR read is hot).
_CHILDREN = (
    ("operations", *_children_statement(Operation, "position")),
    ("review_events", *_children_statement(ReviewEvent, "created_at, id")),
    ("comments", *_children_statement(ReviewComment, "created_at, id")),
)


def pull_children_load(*, pull: KnowledgePullRequest) -> None:
    """Load the KPR's operations, review events and comments, as prefetch_related() would."""
    with connection.cursor() as cursor:
        for name, rows, sql in _CHILDREN:
            cursor.execute(sql, [pull.pk])
            prefetched_set(pull, name, rows.instances(cursor.fetchall()))


# The merge lane of a KPR: KPRs of one subject always share one, so draining each lane in
# approval order merges every subject in approval order, while lanes drain side by side.
# hashtext() is int4; the cast keeps abs() of its smallest value in range.
_MERGE_LANE_SQL = "mod(abs(hashtext(namespace_id::text || '/' || subject)::bigint), %s)"


def pull_ids_awaiting_merge(*, older_than: timedelta, lanes: int = 1) -> list[str]:
    """For each merge lane holding APPROVED KPRs still UNMERGED some time after their approval (a
    lost merge hand-off), the last approved of them: a merge of it drains its lane's head up to
    it, so one task per lane hands all of them over, however long the backlog."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT DISTINCT ON (lane) id FROM (
                    SELECT id, reviewed_at, created_at, {_MERGE_LANE_SQL} AS lane
                    FROM pulls_knowledgepullrequest
                    WHERE review_status = %s AND merge_status = %s AND reviewed_at < %s
                ) AS waiting
                ORDER BY lane, reviewed_at DESC, created_at DESC, id DESC""",
            [max(1, lanes), ReviewStatus.APPROVED, MergeStatus.UNMERGED, timezone.now() - older_than],
        )
        return [str(row[0]) for row in cursor.fetchall()]


def pull_ids_merge_queue(*, limit: int, lane: int = 0, lanes: int = 1) -> list[str]:
    """The oldest APPROVED, unmerged KPRs of a merge lane, in the order they were approved
    (index kpr_merge_queue); with one lane, of the whole queue."""
    queue = KnowledgePullRequest.objects.filter(
        review_status=ReviewStatus.APPROVED, merge_status=MergeStatus.UNMERGED
    )
    if lanes > 1:
        queue = queue.alias(lane=RawSQL(_MERGE_LANE_SQL, [lanes])).filter(lane=lane)
    ids = queue.order_by("reviewed_at", "created_at", "id").values_list("id", flat=True)[:limit]
    return [str(pull_id) for pull_id in ids]


def pull_merge_lane(*, pull_id: str, lanes: int) -> int | None:
    """The merge lane of an APPROVED KPR not merged yet; None for any other KPR (or none)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT {_MERGE_LANE_SQL} FROM pulls_knowledgepullrequest
                WHERE id = %s AND review_status = %s AND merge_status = %s""",
            [max(1, lanes), pull_id, ReviewStatus.APPROVED, MergeStatus.UNMERGED],
        )
        row = cursor.fetchone()
    return None if row is None else int(row[0])


def pull_id_merging_first(*, pull: KnowledgePullRequest) -> str | None:
    """An APPROVED, unmerged KPR of the same subject approved before this one: it merges first."""
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT id FROM pulls_knowledgepullrequest
                WHERE review_status = %s AND merge_status = %s AND namespace_id = %s AND subject = %s
                  AND (reviewed_at, created_at, id) < (%s, %s, %s)
                LIMIT 1""",
            [ReviewStatus.APPROVED, MergeStatus.UNMERGED, pull.namespace_id, pull.subject,
             pull.reviewed_at, pull.created_at, pull.pk],
        )  # fmt: skip
        row = cursor.fetchone()
    return None if row is None else str(row[0])


# --- Health and metrics: cluster-wide aggregates, one cheap statement each ------------------


def pull_oldest_pending_created_at() -> datetime | None:
    """When the oldest KPR still waiting for its review was submitted (index kpr_pending_created)."""
    return (
        KnowledgePullRequest.objects.filter(review_status=ReviewStatus.PENDING)
        .order_by("created_at")
        .values_list("created_at", flat=True)
        .first()
    )


def pull_oldest_approved_unmerged_reviewed_at() -> datetime | None:
    """When the oldest KPR approved but not merged yet was approved (index kpr_approved_unmerged_reviewed)."""
    return (
        KnowledgePullRequest.objects.filter(
            review_status=ReviewStatus.APPROVED, merge_status=MergeStatus.UNMERGED
        )
        .order_by("reviewed_at")
        .values_list("reviewed_at", flat=True)
        .first()
    )


def pull_status_counts() -> dict[tuple[str, str], int]:
    """How many KPRs are in each (review_status, merge_status) pair; absent pairs have none."""
    rows = (
        KnowledgePullRequest.objects.order_by()
        .values_list("review_status", "merge_status")
        .annotate(n=Count("pk"))
    )
    return {(review, merge): n for review, merge, n in rows}


@dataclass(frozen=True)
class LatencyCounts:
    """A latency distribution as a Prometheus histogram wants it.

    `buckets` holds (upper bound in seconds, how many are at or below it), ascending; the
    implicit +Inf bucket is `count`.
    """

    buckets: list[tuple[float, int]]
    count: int
    sum_seconds: float


def _latency_counts(
    qs: QuerySet[KnowledgePullRequest], *, start: str, end: str, bounds: Sequence[float]
) -> LatencyCounts:
    # One pass over the rows, every bucket a FILTERed count: the database does the bucketing.
    latency = ExpressionWrapper(F(end) - F(start), output_field=DurationField())
    buckets = {
        f"le_{i}": Count("pk", filter=Q(latency__lte=timedelta(seconds=bound)))
        for i, bound in enumerate(bounds)
    }
    row = qs.order_by().annotate(latency=latency).aggregate(**buckets, n=Count("pk"), total=Sum("latency"))
    total: timedelta | None = row["total"]
    return LatencyCounts(
        buckets=[(bound, row[f"le_{i}"]) for i, bound in enumerate(bounds)],
        count=row["n"],
        sum_seconds=total.total_seconds() if total is not None else 0.0,
    )


def pull_review_latency_counts(*, bounds: Sequence[float]) -> LatencyCounts:
    """Submission (created_at) to the latest decision (reviewed_at), over every reviewed KPR."""
    qs = KnowledgePullRequest.objects.filter(reviewed_at__isnull=False)
    return _latency_counts(qs, start="created_at", end="reviewed_at", bounds=bounds)


def pull_merge_latency_counts(*, bounds: Sequence[float]) -> LatencyCounts:
    """Approval (reviewed_at) to merge (merged_at), over every merged KPR."""
    qs = KnowledgePullRequest.objects.filter(
        merge_status=MergeStatus.MERGED, merged_at__isnull=False, reviewed_at__isnull=False
    )
    return _latency_counts(qs, start="reviewed_at", end="merged_at", bounds=bounds)


def review_decision_counts() -> dict[tuple[str, str], int]:
    """How many review events each kind of reviewer recorded with each verdict."""
    rows = ReviewEvent.objects.order_by().values_list("reviewer_kind", "verdict").annotate(n=Count("pk"))
    return {(kind, verdict): n for kind, verdict, n in rows}


def review_rule_check_counts() -> dict[tuple[str, str], int]:
    """How often each rule reached each verdict, counted per operation checked in a rules review.

    The rules' ReviewEvent findings are `[{operation, ..., checks: [{rule, verdict, reason}]}]`
    (reviewer.checks.ChecksResult.as_findings); the JSON is unnested and counted in SQL.
    """
    sql = f"""
        SELECT c.value ->> 'rule', c.value ->> 'verdict', count(*)
        FROM {ReviewEvent._meta.db_table} e
        CROSS JOIN LATERAL jsonb_array_elements(
            CASE WHEN jsonb_typeof(e.findings) = 'array' THEN e.findings ELSE '[]'::jsonb END) o
        CROSS JOIN LATERAL jsonb_array_elements(
            CASE WHEN jsonb_typeof(o.value -> 'checks') = 'array' THEN o.value -> 'checks' ELSE '[]'::jsonb END) c
        WHERE e.reviewer_kind = %s AND c.value ->> 'rule' IS NOT NULL
        GROUP BY 1, 2
    """  # noqa: S608 - the only interpolation is the model's own table name
    with connection.cursor() as cursor:
        cursor.execute(sql, [ReviewEvent.ReviewerKind.RULES.value])
        return {(rule, verdict or ""): n for rule, verdict, n in cursor.fetchall()}


_FINAL_EXCLUSIONS_SQL = f"""
    SELECT excluded_operations FROM {ReviewEvent._meta.db_table}
    WHERE pull_id = %s AND status_after = %s
    ORDER BY created_at DESC, id DESC LIMIT 1
"""


def pull_final_exclusions(*, pull_id: uuid.UUID) -> set[int]:
    """Positions of the operations the KPR's final approval left out (a human may exclude some).

    A written statement: every merge reads it, and compiling the query cost more than running it."""
    with connection.cursor() as cursor:
        cursor.execute(_FINAL_EXCLUSIONS_SQL, [pull_id, ReviewStatus.APPROVED])
        row = cursor.fetchone()
    # Django has psycopg hand jsonb over as text, as its JSONField reads it.
    excluded = json.loads(row[0]) if row and row[0] is not None else []
    return {int(position) for position in excluded}
