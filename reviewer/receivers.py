"""The review's subscription to the workflow: a submitted KPR is handed to the review task."""

from __future__ import annotations

from typing import Any

from reviewer.tasks import review_pull


def review_enqueue(sender: Any, *, pull_id: str, **kwargs: Any) -> None:
    """On `pull_submitted`: enqueue the review (a failure is logged by the sender)."""
    review_pull.delay(pull_id)
