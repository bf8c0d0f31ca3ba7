"""The retrieval body written by hand says exactly what the schema's serializer says."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memorypr.agents.services import namespace_get_or_create
from memorypr.facts.models import FactVersion
from memorypr.retrieval.bodies import retrieval_body
from memorypr.retrieval.selectors import retrieve
from memorypr.retrieval.serializers import RetrieveOutSerializer
from tests.retrieval.factories import fact_put, fact_replace

pytestmark = pytest.mark.django_db


def _serialized(found, *, history: bool):  # type: ignore[no-untyped-def]
    body = RetrieveOutSerializer(found).data
    if not history:
        for item in body["results"]:
            item.pop("history")
    return body


@pytest.mark.parametrize("history", [False, True])
def test_a_retrieval_with_updates_history_and_every_channel(history):
    # given an updated city (with valid time), a value that is JSON, an accessed fact and a doubtful one
    demo = namespace_get_or_create(name="demo")
    beijing = fact_put(namespace=demo, key="home_city", value="Beijing")
    fact_replace(beijing, value="Shenzhen")
    fact_put(namespace=demo, key="pets", value={"cat": "Mimi", "dogs": 2}, importance=0.95)
    accessed = fact_put(namespace=demo, key="favorite_drink", value="green tea")
    FactVersion.objects.filter(pk=accessed.pk).update(access_count=3, last_accessed_at=timezone.now())
    fact_put(namespace=demo, key="home_city_rumour", value="Lisbon", confidence=0.4)
    # when retrieving now, and as of a moment before the update
    now = retrieve(namespace=demo, subject="user-1", query="home city", top_k=5, include_history=history)
    then = retrieve(
        namespace=demo, subject="user-1", query="home city", as_of=timezone.now() - timedelta(seconds=1)
    )
    # then the bodies are the serializer's output
    assert len(now.results) >= 3 and any(item.updates for item in now.results)
    assert retrieval_body(now, history=history) == _serialized(now, history=history)
    assert retrieval_body(then, history=history) == _serialized(then, history=history)


def test_a_retrieval_that_asks_for_reformation():
    # given only doubtful facts
    demo = namespace_get_or_create(name="demo")
    fact_put(namespace=demo, key="home_city", value="Lisbon", confidence=0.3)
    # when
    found = retrieve(namespace=demo, subject="user-1", query="home city", top_k=3)
    # then
    assert found.reformation_needed and not found.results
    assert retrieval_body(found, history=False) == _serialized(found, history=False)
