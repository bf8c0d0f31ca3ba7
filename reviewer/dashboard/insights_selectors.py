"""What the insights page reads: how the queue and the decisions went over a time window, in
the reviewer's namespaces. Aggregates are computed in PostgreSQL; only buckets come back."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Count, Q
from django.utils import timezone

from memorypr.audit.models import AuditEvent
from memorypr.pulls.models import KnowledgePullRequest, ReviewEvent, ReviewStatus

# name: (span, bucket width)
RANGES: dict[str, tuple[timedelta, timedelta]] = {
    "24h": (timedelta(hours=24), timedelta(hours=1)),
    "7d": (timedelta(days=7), timedelta(hours=12)),
    "30d": (timedelta(days=30), timedelta(days=1)),
    "90d": (timedelta(days=90), timedelta(days=3)),
}
TOP_ROWS = 12
# Upper bounds of the time-to-decision bins, in seconds, and their labels.
DECISION_BINS: list[tuple[float, str]] = [
    (1, "< 1 s"), (10, "1–10 s"), (60, "10 s–1 min"), (600, "1–10 min"), (3600, "10 min–1 h"),
    (86400, "1 h–1 day"), (math.inf, "≥ 1 day"),
]  # fmt: skip


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime
    step: timedelta

    @property
    def buckets(self) -> list[datetime]:
        count = round((self.end - self.start) / self.step)
        return [self.start + self.step * i for i in range(count)]

    def label(self, moment: datetime) -> str:
        return moment.strftime("%m-%d %H:%M" if self.step < timedelta(days=1) else "%m-%d")


def insights_window(*, name: str, now: datetime | None = None) -> Window:
    """The last `name` of time in whole buckets, the current bucket last."""
    span, step = RANGES[name]
    now = now or timezone.now()
    epoch = datetime(2000, 1, 1, tzinfo=now.tzinfo)
    end = epoch + step * (math.floor((now - epoch) / step) + 1)
    return Window(start=end - span, end=end, step=step)


def _tables() -> dict[str, str]:
    return {"event": ReviewEvent._meta.db_table, "pull": KnowledgePullRequest._meta.db_table}


def _rows(sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql.format(**_tables()), params)
        return list(cursor.fetchall())


@dataclass(frozen=True)
class QueuePoint:
    at: datetime
    size: int
    oldest_hours: float
    median_hours: float


def insights_queue(*, namespace_ids: list[int], window: Window) -> list[QueuePoint]:
    """The human queue at the end of each bucket: how many KPRs waited for a person, and how
    long the oldest and the median one had waited. A KPR waits from the decision that sent it
    to a person until the next decision about it."""
    intervals = _rows(
        """
        SELECT entered, left_at FROM (
            SELECT e.created_at AS entered, e.status_after,
                   LEAD(e.created_at) OVER (PARTITION BY e.pull_id ORDER BY e.created_at, e.id) AS left_at
            FROM {event} e JOIN {pull} p ON p.id = e.pull_id
            WHERE p.namespace_id = ANY(%(ns)s) AND e.reviewer_kind IN ('system', 'human')
              AND e.created_at < %(end)s
              AND (p.reviewed_at >= %(start)s OR p.review_status = 'NEEDS_HUMAN_REVIEW')
        ) spans
        WHERE status_after = 'NEEDS_HUMAN_REVIEW' AND (left_at IS NULL OR left_at > %(start)s)
        """,
        {"ns": namespace_ids, "start": window.start, "end": window.end},
    )
    now = timezone.now()
    points = []
    for bucket in window.buckets:
        at = min(bucket + window.step, now)
        ages = sorted(
            (at - entered).total_seconds() / 3600
            for entered, left_at in intervals
            if entered <= at and (left_at is None or left_at > at)
        )
        points.append(
            QueuePoint(
                at=bucket,
                size=len(ages),
                oldest_hours=ages[-1] if ages else 0.0,
                median_hours=ages[len(ages) // 2] if ages else 0.0,
            )
        )
    return points


def insights_verdicts_by_source(*, namespace_ids: list[int], window: Window) -> dict[str, dict[str, int]]:
    """Verdicts given in the window by the rules, the LLM and people: {source: {verdict: n}}."""
    rows = (
        ReviewEvent.objects.filter(
            pull__namespace_id__in=namespace_ids,
            created_at__gte=window.start,
            created_at__lt=window.end,
            reviewer_kind__in=["rules", "llm", "human"],
        )
        .values("reviewer_kind", "verdict")
        .annotate(n=Count("pk"))
    )
    result: dict[str, dict[str, int]] = {kind: {} for kind in ("rules", "llm", "human")}
    for row in rows:
        result[row["reviewer_kind"]][row["verdict"]] = row["n"]
    return result


def insights_rules(*, namespace_ids: list[int], window: Window) -> list[tuple[str, int, int]]:
    """Rules that held operations in the window: (rule, escalations, rejections), most first."""
    rows = _rows(
        """
        SELECT c.value ->> 'rule' AS rule,
               COUNT(*) FILTER (WHERE c.value ->> 'verdict' = 'escalate'),
               COUNT(*) FILTER (WHERE c.value ->> 'verdict' = 'reject')
        FROM {event} e JOIN {pull} p ON p.id = e.pull_id
        CROSS JOIN LATERAL jsonb_array_elements(
            CASE WHEN jsonb_typeof(e.findings) = 'array' THEN e.findings ELSE '[]'::jsonb END) f
        CROSS JOIN LATERAL jsonb_array_elements(
            CASE WHEN jsonb_typeof(f.value -> 'checks') = 'array' THEN f.value -> 'checks' ELSE '[]'::jsonb END) c
        WHERE p.namespace_id = ANY(%(ns)s) AND e.reviewer_kind = 'rules'
          AND e.created_at >= %(start)s AND e.created_at < %(end)s
          AND c.value ->> 'verdict' IN ('escalate', 'reject')
        GROUP BY 1 ORDER BY COUNT(*) DESC, 1 LIMIT %(top)s
        """,
        {"ns": namespace_ids, "start": window.start, "end": window.end, "top": TOP_ROWS},
    )
    return [(str(rule), int(escalated), int(rejected)) for rule, escalated, rejected in rows]


AGENT_OUTCOMES = [
    ("approved", Q(review_status=ReviewStatus.APPROVED)),
    ("rejected", Q(review_status=ReviewStatus.REJECTED)),
    ("waiting for a person", Q(review_status=ReviewStatus.NEEDS_HUMAN_REVIEW)),
    ("pending", Q(review_status=ReviewStatus.PENDING)),
]


def insights_agents(*, namespace_ids: list[int], window: Window) -> list[tuple[str, list[int]]]:
    """KPRs each agent proposed in the window, by where they stand now, busiest first."""
    rows = (
        KnowledgePullRequest.objects.filter(
            namespace_id__in=namespace_ids, created_at__gte=window.start, created_at__lt=window.end
        )
        .values("agent__name")
        .annotate(
            total=Count("pk"), **{f"o{i}": Count("pk", filter=q) for i, (_, q) in enumerate(AGENT_OUTCOMES)}
        )
        .order_by("-total", "agent__name")[:TOP_ROWS]
    )
    found: list[dict[str, Any]] = [dict(row) for row in rows]
    return [(row["agent__name"], [row[f"o{i}"] for i in range(len(AGENT_OUTCOMES))]) for row in found]


@dataclass(frozen=True)
class DecisionTimes:
    bins: list[str]
    automatic: list[int]
    person: list[int]
    percentiles: dict[str, tuple[float, float] | None]  # source: (p50, p90) seconds


def insights_decision_times(*, namespace_ids: list[int], window: Window) -> DecisionTimes:
    """From submission to the first approval or rejection, for KPRs decided in the window,
    by whether the automatic review or a person decided."""
    decided = """
        SELECT DISTINCT ON (e.pull_id) e.reviewer_kind AS kind,
               EXTRACT(EPOCH FROM e.created_at - p.created_at)::float8 AS seconds
        FROM {event} e JOIN {pull} p ON p.id = e.pull_id
        WHERE p.namespace_id = ANY(%(ns)s) AND e.reviewer_kind IN ('system', 'human')
          AND e.status_after IN ('APPROVED', 'REJECTED')
          AND e.created_at >= %(start)s AND e.created_at < %(end)s
        ORDER BY e.pull_id, e.created_at, e.id
    """
    params = {"ns": namespace_ids, "start": window.start, "end": window.end}
    bounds = [bound for bound, _ in DECISION_BINS[:-1]]
    counts = _rows(
        f"SELECT kind, width_bucket(seconds, %(bounds)s::float8[]), COUNT(*) FROM ({decided}) d GROUP BY 1, 2",
        {**params, "bounds": bounds},
    )
    automatic, person = [0] * len(DECISION_BINS), [0] * len(DECISION_BINS)
    for kind, index, n in counts:
        (person if kind == "human" else automatic)[int(index)] += int(n)
    percentiles: dict[str, tuple[float, float] | None] = {"automatic": None, "person": None}
    for kind, p50, p90 in _rows(
        f"SELECT kind, percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds),"
        f" percentile_cont(0.9) WITHIN GROUP (ORDER BY seconds) FROM ({decided}) d GROUP BY 1",
        params,
    ):
        percentiles["person" if kind == "human" else "automatic"] = (float(p50), float(p90))
    return DecisionTimes(
        bins=[label for _, label in DECISION_BINS],
        automatic=automatic,
        person=person,
        percentiles=percentiles,
    )


@dataclass(frozen=True)
class BucketCounts:
    at: datetime
    values: dict[str, int]


def _bucketed(sql: str, params: dict[str, Any], window: Window, names: list[str]) -> list[BucketCounts]:
    found: dict[datetime, dict[str, int]] = {}
    for bucket, name, n in _rows(sql, {**params, "step": window.step, "origin": window.start}):
        found.setdefault(bucket, {})[name] = int(n)
    return [
        BucketCounts(at=bucket, values={name: found.get(bucket, {}).get(name, 0) for name in names})
        for bucket in window.buckets
    ]


def insights_automatic_decisions(*, namespace_ids: list[int], window: Window) -> list[BucketCounts]:
    """The automatic review's decisions per bucket: approved, escalated to a person, rejected."""
    return _bucketed(
        """
        SELECT date_bin(%(step)s, e.created_at, %(origin)s), e.verdict, COUNT(*)
        FROM {event} e JOIN {pull} p ON p.id = e.pull_id
        WHERE p.namespace_id = ANY(%(ns)s) AND e.reviewer_kind = 'system' AND e.reviewer = 'policy'
          AND e.created_at >= %(start)s AND e.created_at < %(end)s
        GROUP BY 1, 2
        """,
        {"ns": namespace_ids, "start": window.start, "end": window.end},
        window,
        ["APPROVE", "ESCALATE", "REJECT"],
    )


def insights_conflicts_and_reverts(
    *, namespace_ids: list[int], namespace_names: list[str], window: Window
) -> list[BucketCounts]:
    """Merge conflicts (from the audit trail) and reverts proposed, per bucket."""
    conflicts = (
        AuditEvent.objects.filter(
            namespace__in=namespace_names,
            event_type="pull.merge_conflict",
            created_at__gte=window.start,
            created_at__lt=window.end,
        )
        .values_list("created_at", flat=True)
        .iterator()
    )
    reverts = (
        KnowledgePullRequest.objects.filter(
            namespace_id__in=namespace_ids,
            reverts__isnull=False,
            created_at__gte=window.start,
            created_at__lt=window.end,
        )
        .values_list("created_at", flat=True)
        .iterator()
    )
    buckets = window.buckets
    counts = {bucket: {"conflicts": 0, "reverts": 0} for bucket in buckets}
    for name, moments in (("conflicts", conflicts), ("reverts", reverts)):
        for moment in moments:
            index = min(int((moment - window.start) / window.step), len(buckets) - 1)
            counts[buckets[index]][name] += 1
    return [BucketCounts(at=bucket, values=counts[bucket]) for bucket in buckets]
