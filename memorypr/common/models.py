from __future__ import annotations

from django.db import models


class Heartbeat(models.Model):
    """The last time a named background loop proved it runs.

    The worker heartbeat is written by a task that travels beat → broker → worker → database,
    so a fresh row means queued work is being executed, not merely that a process is alive.
    It lives in PostgreSQL so that every web node reads the same value.
    """

    name = models.CharField(max_length=64, primary_key=True)
    beat_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} @ {self.beat_at.isoformat()}"
