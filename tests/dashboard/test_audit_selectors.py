from __future__ import annotations

import csv
import io
import json
import uuid
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import connection, transaction
from django.utils import timezone

from memorypr.audit.models import AuditEvent
from memorypr.audit.services import audit_record
from reviewer.dashboard.audit_selectors import (
    CHAIN_CACHE_KEY,
    audit_chain_status,
    audit_event_list,
    audit_event_types,
    audit_export_csv,
    audit_export_json,
    uuid_prefix_range,
)

pytestmark = pytest.mark.django_db

PULL = uuid.UUID("3f2a9c1e-0000-4000-8000-000000000001")
OTHER_PULL = uuid.UUID("3f2b0000-0000-4000-8000-000000000002")


@pytest.fixture(autouse=True)
def fresh_cache():  # type: ignore[no-untyped-def]
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def trail() -> list[AuditEvent]:
    return [
        audit_record(event_type="pull.submitted", actor="agent:proposer", namespace="demo", pull_id=PULL, subject="u1"),
        audit_record(event_type="pull.reviewed", actor="human:ann", namespace="demo", pull_id=PULL, subject="u1",
                     payload={"verdict": "=HYPERLINK(\"x\")"}),
        audit_record(event_type="pull.submitted", actor="agent:proposer", namespace="demo", pull_id=OTHER_PULL),
        audit_record(event_type="pull.submitted", actor="agent:other", namespace="elsewhere", pull_id=PULL),
    ]  # fmt: skip


def _ids(qs) -> list[int]:  # type: ignore[no-untyped-def]
    return [e.sequence for e in qs]


def test_only_the_given_namespaces_newest_first(trail):
    assert _ids(audit_event_list(namespaces=["demo"])) == [3, 2, 1]
    assert audit_event_types(namespaces=["demo"]) == ["pull.reviewed", "pull.submitted"]
    assert _ids(audit_event_list(namespaces=[])) == []


def test_filters_by_type_actor_kpr_and_time(trail):
    assert _ids(audit_event_list(namespaces=["demo"], event_type="pull.reviewed")) == [2]
    assert _ids(audit_event_list(namespaces=["demo"], actor="ANN")) == [2]
    # the eight characters the dashboard shows find the KPR's events, and only its own
    assert _ids(audit_event_list(namespaces=["demo"], pull=str(PULL)[:8])) == [2, 1]
    assert _ids(audit_event_list(namespaces=["demo"], pull=str(PULL))) == [2, 1]
    assert _ids(audit_event_list(namespaces=["demo"], pull="3f2")) == [3, 2, 1]
    assert _ids(audit_event_list(namespaces=["demo"], pull="not-hex")) == []
    later = timezone.now() + timedelta(minutes=1)
    assert _ids(audit_event_list(namespaces=["demo"], since=later)) == []
    assert _ids(audit_event_list(namespaces=["demo"], until=later)) == [3, 2, 1]


def test_search_by_id_prefix_hash_prefix_sequence_or_subject(trail):
    assert _ids(audit_event_list(namespaces=["demo"], search="3f2a9c1e")) == [2, 1]
    assert _ids(audit_event_list(namespaces=["demo"], search=trail[2].hash[:10])) == [3]
    assert _ids(audit_event_list(namespaces=["demo"], search="#2")) == [2]
    assert _ids(audit_event_list(namespaces=["demo"], search="#4")) == []  # another namespace's event
    assert _ids(audit_event_list(namespaces=["demo"], search="u1")) == [2, 1]


def test_a_uuid_prefix_is_a_range():
    low, high = uuid_prefix_range("3F2A-9c1e")  # type: ignore[misc]
    assert str(low) == "3f2a9c1e-0000-0000-0000-000000000000"
    assert str(high) == "3f2a9c1e-ffff-ffff-ffff-ffffffffffff"
    assert uuid_prefix_range("xyz") is None


def test_exports_carry_every_field_and_defuse_formulas(trail):
    events = audit_event_list(namespaces=["demo"]).order_by("sequence")
    rows = list(csv.DictReader(io.StringIO("".join(audit_export_csv(events)))))
    assert [r["sequence"] for r in rows] == ["1", "2", "3"]
    assert rows[0]["pullId"] == str(PULL) and rows[0]["hash"] == trail[0].hash
    assert json.loads(rows[1]["payload"]) == {"verdict": '=HYPERLINK("x")'}  # JSON text starts with "{"
    body = json.loads("".join(audit_export_json(events)))
    assert [e["sequence"] for e in body] == [1, 2, 3]
    assert body[2]["prevHash"] == trail[1].hash and body[2]["eventType"] == "pull.submitted"
    assert json.loads("".join(audit_export_json(events.none()))) == []
    # the same fields the chain hashes, as verify_audit reads them
    assert {k: v for k, v in body[0].items() if k not in ("hash", "prevHash")} == trail[0].canonical_fields()


def test_the_chain_status_is_walked_once_then_read_from_the_cache(trail, django_assert_max_num_queries):
    # when the page asks first, a walk runs (inline here: tasks are eager in the tests)
    status = audit_chain_status(namespaces=["demo"])
    assert (status.state, status.checked) == ("intact", 4)
    # then the next pages read the cached result without walking again
    audit_record(event_type="test.more", actor="tester", namespace="demo")
    with django_assert_max_num_queries(0):
        again = audit_chain_status(namespaces=["demo"])
    assert (again.state, again.checked) == ("intact", 4)
    # and a result older than five minutes asks for a new walk
    saved = cache.get(CHAIN_CACHE_KEY)
    cache.set(CHAIN_CACHE_KEY, {**saved, "at": saved["at"] - timedelta(minutes=6)})
    assert audit_chain_status(namespaces=["demo"]).checked == 5


def _tamper(sequence: int) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("ALTER TABLE audit_auditevent DISABLE TRIGGER ALL")
        cursor.execute("UPDATE audit_auditevent SET actor = 'mallory' WHERE sequence = %s", [sequence])
        cursor.execute("ALTER TABLE audit_auditevent ENABLE TRIGGER ALL")


def test_a_broken_chain_is_named_only_to_the_namespace_it_broke_in(trail):
    # given an event of namespace elsewhere changed behind the triggers' back
    _tamper(4)
    # then a reviewer of demo learns the chain is broken, not where or why
    mine = audit_chain_status(namespaces=["demo"])
    assert (mine.state, mine.checked, mine.broken_sequence, mine.broken_reason) == ("broken", 3, None, "")
    # and a reviewer of elsewhere is told which event
    theirs = audit_chain_status(namespaces=["elsewhere"])
    assert (theirs.state, theirs.broken_sequence) == ("broken", 4)
    assert "hash" in theirs.broken_reason
