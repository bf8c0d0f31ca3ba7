"""The merge's subscription to the workflow: an approved KPR is handed to the merge task."""

from __future__ import annotations

from typing import Any

from memorypr.facts.tasks import merge_pull


def merge_enqueue(sender: Any, *, pull_id: str, **kwargs: Any) -> None:
    """On `pull_approved`: enqueue the merge (a failure is logged by the sender)."""
    merge_pull.delay(pull_id)
