from __future__ import annotations

from django.utils import timezone

from memorypr.common.models import Heartbeat


def heartbeat_record(*, name: str) -> Heartbeat:
    """Upsert the heartbeat `name` to now, in one statement (concurrent workers never collide)."""
    beat = Heartbeat(name=name, beat_at=timezone.now())
    Heartbeat.objects.bulk_create(
        [beat], update_conflicts=True, unique_fields=["name"], update_fields=["beat_at"]
    )
    return beat
