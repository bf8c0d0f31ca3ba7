"""Prometheus metrics: request latency from every web process, the work queues from the database."""

from memorypr.common.metrics.exposition import metrics_text
from memorypr.common.metrics.middleware import RequestMetricsMiddleware

__all__ = ["RequestMetricsMiddleware", "metrics_text"]
