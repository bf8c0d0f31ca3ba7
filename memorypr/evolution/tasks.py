"""Evolution jobs on Celery beat (schedule in memorypr.evolution.schedule). Thin: each calls a service."""

from __future__ import annotations

from typing import Any

from celery import shared_task


@shared_task(name="evolution.forgetting", acks_late=True, ignore_result=True)
def forgetting_task() -> dict[str, Any]:
    from memorypr.evolution.services.forgetting import forgetting_run

    return forgetting_run().as_dict()


@shared_task(name="evolution.capacity", acks_late=True, ignore_result=True)
def capacity_task() -> dict[str, Any]:
    from memorypr.evolution.services.forgetting import capacity_run

    return capacity_run().as_dict()


@shared_task(name="evolution.consolidation", acks_late=True, ignore_result=True)
def consolidation_task() -> dict[str, Any]:
    from memorypr.evolution.services.consolidation import consolidation_run

    return consolidation_run().as_dict()


@shared_task(name="evolution.expiry", acks_late=True, ignore_result=True)
def expiry_task() -> dict[str, Any]:
    from memorypr.evolution.services.expiry import expiry_run

    return expiry_run().as_dict()


@shared_task(name="evolution.purge", acks_late=True, ignore_result=True)
def purge_task() -> dict[str, Any]:
    from memorypr.evolution.services.purge import purge_run

    return purge_run().as_dict()
