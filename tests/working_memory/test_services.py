from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memorypr.agents.services import namespace_get_or_create
from memorypr.audit.models import AuditEvent
from memorypr.working_memory.models import SessionTurn
from memorypr.working_memory.services import transcript_purge, turn_append

pytestmark = pytest.mark.django_db


def test_retention_purge_removes_only_old_turns_and_is_audited(settings):
    # given: turns now; the purge looks from 91 days ahead with a 90-day retention
    demo = namespace_get_or_create(name="demo")
    for i in range(3):
        turn_append(namespace=demo, session_id=f"s{i % 2}", role="user", content=f"t{i}", agent=None)
    # when
    kept = transcript_purge(now=timezone.now() + timedelta(days=89))
    purged = transcript_purge(now=timezone.now() + timedelta(days=91))
    # then
    assert kept == 0
    assert purged == 3
    assert SessionTurn.objects.count() == 0
    event = AuditEvent.objects.get(event_type="transcripts.purged")
    assert event.actor == "system:transcript_purge" and event.namespace == "demo"
    assert event.payload["turns"] == 3 and event.payload["sessions"] == 2
    assert event.payload["retentionDays"] == 90
