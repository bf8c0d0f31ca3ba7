"""The database itself keeps the fact store's invariants, whoever writes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import IntegrityError, InternalError, ProgrammingError, transaction
from django.utils import timezone

from memorypr.facts.models import EdgeType, FactEdge, FactStatus, FactVersion
from tests.facts.kprs import active, create, merged, update

pytestmark = pytest.mark.django_db

REFUSED = (InternalError, ProgrammingError)  # insufficient_privilege raised by the trigger


def fact(namespace, key="k", version=1, status=FactStatus.ACTIVE, **extra) -> FactVersion:
    return FactVersion.objects.create(
        namespace=namespace, subject="s", category="user_profile", key=key, value="v",
        version=version, status=status, confidence=0.9, **extra,
    )  # fmt: skip


def test_one_active_version_per_key(namespace):
    fact(namespace)
    with pytest.raises(IntegrityError), transaction.atomic():
        fact(namespace, version=2)


@pytest.mark.parametrize(
    "fields",
    [
        {"status": "forgotten"},
        {"version": 0},
        {"status": FactStatus.ACTIVE, "retired_at": timezone.now()},
        {"valid_from": timezone.now(), "valid_to": timezone.now() - timedelta(days=1)},
    ],
)
def test_check_constraints(namespace, fields):
    with pytest.raises(IntegrityError), transaction.atomic():
        fact(namespace, **fields)


def test_a_retired_insert_gets_its_retirement_time(namespace):
    row = fact(namespace, status=FactStatus.SUPERSEDED)
    row.refresh_from_db()
    assert row.retired_at == row.created_at


def test_leaving_active_fills_in_retired_at(namespace):
    row = fact(namespace)
    FactVersion.objects.filter(pk=row.pk).update(status=FactStatus.EXPIRED)
    row.refresh_from_db()
    assert row.status == FactStatus.EXPIRED and row.retired_at is not None


@pytest.mark.parametrize(
    "change",
    [{"value": "rewritten"}, {"key": "other"}, {"version": 7}, {"created_at": timezone.now()}],
)
def test_history_content_cannot_change(namespace, change):
    row = fact(namespace)
    with pytest.raises(REFUSED, match="cannot change"), transaction.atomic():
        FactVersion.objects.filter(pk=row.pk).update(**change)


@pytest.mark.parametrize("change", [{"status": FactStatus.ACTIVE, "retired_at": None}, {"status": "stale"}])
def test_a_retired_version_stays_retired(namespace, change):
    row = fact(namespace, status=FactStatus.SUPERSEDED)
    with pytest.raises(REFUSED, match="its status is final"), transaction.atomic():
        FactVersion.objects.filter(pk=row.pk).update(**change)


def test_feedback_columns_stay_updatable(namespace):
    row = fact(namespace)
    FactVersion.objects.filter(pk=row.pk).update(confidence=0.5, access_count=3, importance=0.9)
    row.refresh_from_db()
    assert (row.confidence, row.access_count, row.importance) == (0.5, 3, 0.9)


def test_edges_never_loop_on_themselves(namespace):
    row = fact(namespace)
    with pytest.raises(IntegrityError), transaction.atomic():
        FactEdge.objects.create(source=row, target=row, edge_type=EdgeType.SUPPORTS)
    other = fact(namespace, key="other")
    with pytest.raises(IntegrityError), transaction.atomic():
        FactEdge.objects.create(source=row, target=other, edge_type="LIKES")


def test_merged_history_satisfies_every_invariant(proposer, namespace):
    # the merge writes through the same constraints and trigger
    merged(proposer, namespace, create("home_city", "Beijing"))
    merged(proposer, namespace, update("home_city", "Beijing", "Shenzhen"))
    assert active(namespace, "home_city").version == 2
