from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memorypr.agents.services import namespace_get_or_create
from memorypr.audit.models import AuditEvent
from memorypr.evolution.services.purge import purge_run
from memorypr.facts.models import EdgeType, FactEdge, FactVersion
from tests.retrieval.factories import fact_put, fact_replace

pytestmark = pytest.mark.django_db


def test_retired_versions_older_than_the_retention_are_purged_with_an_audit_record():
    # given: Beijing retired 40 days ago, Shanghai 5 days ago, Shenzhen active
    demo = namespace_get_or_create(name="demo")
    now = timezone.now()
    beijing = fact_put(namespace=demo, key="home_city", value="Beijing", created_at=now - timedelta(days=60))
    shanghai = fact_replace(beijing, value="Shanghai", at=now - timedelta(days=40))
    shenzhen = fact_replace(shanghai, value="Shenzhen", at=now - timedelta(days=5))
    # when
    report = purge_run()
    # then
    assert report.proposed == 1
    assert not FactVersion.objects.filter(pk=beijing.pk).exists()
    assert FactVersion.objects.filter(pk__in=[shanghai.pk, shenzhen.pk]).count() == 2
    assert not FactEdge.objects.filter(target_id=beijing.pk).exists()
    assert FactEdge.objects.filter(source=shenzhen, target=shanghai, edge_type=EdgeType.UPDATES).exists()
    event = AuditEvent.objects.get(event_type="facts.purged")
    assert event.actor == "system:purge" and event.namespace == "demo" and event.subject == "user-1"
    [snapshot] = event.payload["facts"]
    assert snapshot["factId"] == beijing.pk and snapshot["value"] == "Beijing"
    assert snapshot["status"] == "superseded" and snapshot["version"] == 1
    assert event.payload["edges"] == [{"source": shanghai.pk, "target": beijing.pk, "type": "UPDATES"}]
    # and nothing is left to purge
    assert purge_run().examined == 0


def test_purge_is_bounded_per_run():
    # given
    demo = namespace_get_or_create(name="demo")
    old = timezone.now() - timedelta(days=90)
    for i in range(3):
        fact_put(
            namespace=demo, key=f"k{i}", value=f"v{i}", status="retracted", created_at=old, retired_at=old
        )
    # when
    first, second = purge_run(limit=2), purge_run(limit=2)
    # then
    assert (first.proposed, second.proposed) == (2, 1)
    assert AuditEvent.objects.filter(event_type="facts.purged").count() == 2
