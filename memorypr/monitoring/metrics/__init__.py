"""Prometheus metrics: request latency from every web process, the work queues from the database."""

from memorypr.monitoring.metrics.exposition import metrics_text
from memorypr.monitoring.metrics.middleware import RequestMetricsMiddleware

__all__ = ["RequestMetricsMiddleware", "metrics_text"]
