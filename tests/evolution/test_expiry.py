from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memorypr.agents.services import namespace_get_or_create
from memorypr.audit.models import AuditEvent
from memorypr.evolution.services.expiry import expiry_run
from memorypr.pulls.models import KnowledgePullRequest
from tests.retrieval.factories import fact_put

pytestmark = pytest.mark.django_db


def test_fact_past_valid_to_is_proposed_for_removal_once():
    # given
    demo = namespace_get_or_create(name="demo")
    now = timezone.now()
    gone = fact_put(
        namespace=demo,
        key="work_location",
        value="working from home this week",
        valid_from=now - timedelta(days=8),
        valid_to=now - timedelta(hours=2),
    )
    fact_put(namespace=demo, key="trip", value="in Osaka", valid_to=now + timedelta(days=2))
    fact_put(namespace=demo, key="home_city", value="Shenzhen")
    # when
    report = expiry_run()
    # then
    assert report.proposed == 1
    pull = KnowledgePullRequest.objects.get(agent__name="system")
    assert pull.idempotency_key == f"evolution:expire:{gone.pk}"
    assert pull.proposed_by == "system:expiry"
    op = pull.operations.get()
    assert (op.action, op.key, op.old_value) == ("DELETE", "work_location", "working from home this week")
    assert "has passed" in op.evidence["rawMessageQuote"]
    assert AuditEvent.objects.filter(
        event_type="pull.submitted", pull_id=pull.pk, actor="agent:system"
    ).exists()
    # and a second run is a no-op
    assert expiry_run().examined == 0
    assert KnowledgePullRequest.objects.filter(agent__name="system").count() == 1
