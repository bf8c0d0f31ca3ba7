"""One scrape: this process's (or, under gunicorn, every process's) samples plus the database's."""

from __future__ import annotations

import os
from collections.abc import Iterable

from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from memorypr.monitoring.metrics.database import DatabaseCollector


class _ProcessCollector(Collector):
    """This process's default registry, when there is only one process to ask."""

    def collect(self) -> Iterable[Metric]:
        yield from REGISTRY.collect()


def metrics_registry() -> CollectorRegistry:
    """A registry for one scrape.

    With PROMETHEUS_MULTIPROC_DIR set (several gunicorn processes), request samples come from the
    files every process writes there; otherwise from this process. The database figures are the
    same whichever process answers, so they are read once per scrape and never written to files.
    """
    registry = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        MultiProcessCollector(registry)
    else:
        registry.register(_ProcessCollector())
    registry.register(DatabaseCollector())
    return registry


def metrics_text() -> bytes:
    return generate_latest(metrics_registry())
