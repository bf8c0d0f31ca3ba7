from __future__ import annotations

from memorypr.facts.models import FactStatus, FactVersion


def fact_get_active(*, namespace_id: int, subject: str, category: str, key: str) -> FactVersion | None:
    """The one active version of a key, or None."""
    return FactVersion.objects.filter(
        namespace_id=namespace_id, subject=subject, category=category, key=key, status=FactStatus.ACTIVE
    ).first()
