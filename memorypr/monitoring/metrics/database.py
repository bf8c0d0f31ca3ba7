"""Figures of the whole deployment, read from PostgreSQL (and the broker) at scrape time.

Computed in the database on every scrape rather than counted in processes: any web node
answers with the same, cluster-wide truth, whatever worker did the work.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable

from django.db import connection, transaction
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from memorypr.common.db.tenancy import tenancy_scope_all_local
from memorypr.pulls.models import MergeStatus, ReviewStatus
from memorypr.pulls.selectors import (
    LatencyCounts,
    pull_merge_latency_counts,
    pull_review_latency_counts,
    pull_status_counts,
    review_decision_counts,
    review_rule_check_counts,
)

logger = logging.getLogger(__name__)

# Reviews run in seconds (rules) to minutes (LLM); escalations wait hours for a human.
REVIEW_BUCKETS = (1.0, 5.0, 15.0, 30.0, 60.0, 150.0, 300.0, 900.0, 3600.0, 14400.0, 86400.0)
# A merge follows its approval within seconds, or within a sweep period (60 s) after a lost hand-off.
MERGE_BUCKETS = (0.5, 1.0, 2.5, 5.0, 15.0, 30.0, 60.0, 150.0, 300.0, 900.0, 3600.0)
# A scrape that would take longer is abandoned rather than piling up behind a slow database.
STATEMENT_TIMEOUT_MS = 5000
BROKER_TIMEOUT_SECONDS = 1.0
MERGE_OUTCOMES = (MergeStatus.MERGED, MergeStatus.CONFLICT, MergeStatus.FAILED)


def _histogram(name: str, documentation: str, counts: LatencyCounts) -> HistogramMetricFamily:
    buckets = [(repr(float(bound)), float(n)) for bound, n in counts.buckets]
    buckets.append(("+Inf", float(counts.count)))
    return HistogramMetricFamily(name, documentation, buckets=buckets, sum_value=counts.sum_seconds)


def _pull_families() -> Iterable[Metric]:
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('statement_timeout', %s, true)", [str(STATEMENT_TIMEOUT_MS)])
        # Counts over every namespace, never a row's content: the only cross-tenant read of the web tier.
        tenancy_scope_all_local()
        statuses = pull_status_counts()
        review = pull_review_latency_counts(bounds=REVIEW_BUCKETS)
        merge = pull_merge_latency_counts(bounds=MERGE_BUCKETS)
        decisions = review_decision_counts()
        checks = review_rule_check_counts()

    pulls = GaugeMetricFamily(
        "memorypr_pulls",
        "KPRs by review and merge status: review_status=PENDING is the review queue,"
        " APPROVED with UNMERGED the merge queue.",
        labels=["review_status", "merge_status"],
    )
    for review_status in ReviewStatus.values:
        for merge_status in MergeStatus.values:
            pulls.add_metric([review_status, merge_status], statuses.get((review_status, merge_status), 0))
    outcomes = GaugeMetricFamily(
        "memorypr_pull_merge_outcomes", "KPRs whose merge ended in each outcome.", labels=["outcome"]
    )
    for outcome in MERGE_OUTCOMES:
        outcomes.add_metric([outcome], sum(n for (_, merged), n in statuses.items() if merged == outcome))
    decided = CounterMetricFamily(
        "memorypr_review_decisions",
        "Review events by kind of reviewer (rules, llm, human, system) and verdict.",
        labels=["reviewer_kind", "verdict"],
    )
    for (kind, verdict), n in sorted(decisions.items()):
        decided.add_metric([kind, verdict], n)
    by_rule = CounterMetricFamily(
        "memorypr_review_rule_checks",
        "Rule checks by rule and verdict (pass, escalate, reject), one per operation in each rules review.",
        labels=["rule", "verdict"],
    )
    for (rule, verdict), n in sorted(checks.items()):
        by_rule.add_metric([rule, verdict], n)
    yield pulls
    yield outcomes
    yield _histogram(
        "memorypr_review_latency_seconds",
        "Time from a KPR's submission to its latest review decision, over every reviewed KPR.",
        review,
    )
    yield _histogram(
        "memorypr_merge_latency_seconds",
        "Time from a KPR's approval to its merge, over every merged KPR.",
        merge,
    )
    yield decided
    yield by_rule


def celery_queue_lengths() -> dict[str, int] | None:
    """Messages waiting in the default queue when the broker is Redis (LLEN); None for other brokers."""
    from memorypr.celery import app

    queue = app.conf.task_default_queue
    timeouts = {"socket_timeout": BROKER_TIMEOUT_SECONDS, "socket_connect_timeout": BROKER_TIMEOUT_SECONDS}
    with app.connection_for_read(transport_options=timeouts) as conn:
        if conn.transport.driver_type != "redis":
            return None
        conn.ensure_connection(max_retries=1, interval_start=0, timeout=BROKER_TIMEOUT_SECONDS)
        return {queue: int(conn.default_channel.client.llen(queue))}


class DatabaseCollector(Collector):
    def collect(self) -> Iterable[Metric]:
        start = time.perf_counter()
        up = 1
        try:
            yield from list(_pull_families())
        except Exception:  # a scrape reports the failure as a sample, the process keeps serving
            logger.exception("database metrics failed")
            up = 0
        yield GaugeMetricFamily(
            "memorypr_database_metrics_up", "1 when the database figures of this scrape were read.", value=up
        )
        yield GaugeMetricFamily(
            "memorypr_database_metrics_scrape_seconds",
            "Time to read the database figures of this scrape.",
            value=time.perf_counter() - start,
        )
        try:
            lengths = celery_queue_lengths()
        except Exception as exc:  # noqa: BLE001 - an unreachable broker leaves the gauge out
            logger.warning("celery queue length unavailable: %s", exc)
            lengths = None
        if lengths is not None:
            queued = GaugeMetricFamily(
                "memorypr_celery_queue_length", "Tasks waiting in the broker's queue.", labels=["queue"]
            )
            for queue, n in lengths.items():
                queued.add_metric([queue], n)
            yield queued
