from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memorypr.agents.services import namespace_get_or_create
from memorypr.audit.models import AuditEvent
from memorypr.working_memory.models import SessionTurn
from memorypr.working_memory.services import transcript_purge, turn_append
from memorypr.working_memory.stores import working_memory_store

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


@pytest.mark.django_db(transaction=True)
def test_a_turn_is_one_statement_and_then_in_working_memory():
    # given a namespace, and no transaction open (as in a request)
    namespace = namespace_get_or_create(name="demo")
    # when a turn is appended
    with CaptureQueriesContext(connection) as queries:
        row = turn_append(
            namespace=namespace, session_id="s-1", role="user", content="I like tea.", agent=None
        )
    # then it was stored by its insert alone, which committed it
    assert [q["sql"].split()[0] for q in queries] == ["INSERT"]
    assert SessionTurn.objects.filter(pk=row.pk).exists()
    # and it reached tier-1 working memory
    window = working_memory_store().window(namespace_id=namespace.pk, session_id="s-1", now=timezone.now())
    assert [t.content for t in window.turns] == ["I like tea."]
