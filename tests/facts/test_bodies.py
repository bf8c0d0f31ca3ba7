"""The fact bodies written by hand say exactly what the schema's serializer says."""

from __future__ import annotations

import pytest
from django.utils import timezone

from memorypr.facts.bodies import fact_body
from memorypr.facts.selectors import fact_list, fact_list_rows
from memorypr.facts.serializers import FactOutSerializer
from tests.facts.kprs import create, merged, update
from tests.retrieval.factories import fact_put

pytestmark = pytest.mark.django_db


def test_fact_bodies_now_and_as_of_a_past_moment(proposer, namespace):
    # given facts written by KPRs (one updated since), one written straight into the store
    first = merged(proposer, namespace, create("home_city", "Beijing"), create("pets", {"cat": "Mimi"}))
    merged(proposer, namespace, update("home_city", "Beijing", "Shenzhen", importance=0.7))
    fact_put(namespace=namespace, key="imported", value="no KPR wrote this")
    # when the list is read now, every status, and as of the first merge
    for status, as_of in (
        ("active", None),
        (None, None),
        ("active", first.merged_at),
        (None, timezone.now()),
    ):
        listed = fact_list(namespace_id=namespace.pk, subject="user-1", status=status, as_of=as_of)
        facts, rows = list(listed), list(fact_list_rows(listed))
        # then each body, from a row or from a version, is the serializer's output
        assert facts
        expected = FactOutSerializer(facts, many=True, context={"as_of": as_of}).data
        assert [fact_body(row, as_of=as_of) for row in rows] == expected
        assert [fact_body(fact, as_of=as_of) for fact in facts] == expected
