from __future__ import annotations

from celery import shared_task
from django.core.cache import cache

from reviewer.dashboard.audit_selectors import CHAIN_CACHE_KEY, CHAIN_REQUESTED_KEY, audit_chain_walk


@shared_task(name="dashboard.audit_chain_check", ignore_result=True)
def audit_chain_check() -> None:
    """Verify the audit chain on a worker, which sees every namespace's events, for the
    dashboard's audit page to show."""
    cache.set(CHAIN_CACHE_KEY, audit_chain_walk(), timeout=None)
    cache.delete(CHAIN_REQUESTED_KEY)
