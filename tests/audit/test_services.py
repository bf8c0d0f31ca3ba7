from __future__ import annotations

import contextlib

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, connection, transaction
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext

from memorypr.audit.models import AuditEvent
from memorypr.audit.selectors import audit_chain_verify
from memorypr.audit.services import GENESIS_HASH, audit_batch, audit_flushed_once, audit_hash, audit_record


@pytest.mark.django_db
def test_each_event_holds_the_previous_hash():
    # given / when
    first = audit_record(event_type="test.one", actor="tester", payload={"n": 1, "text": "深圳"})
    second = audit_record(event_type="test.two", actor="tester", payload={"n": 2})
    # then
    assert first.prev_hash == GENESIS_HASH
    assert second.prev_hash == first.hash
    assert second.sequence == first.sequence + 1
    stored = AuditEvent.objects.get(pk=first.pk)
    assert audit_hash(prev_hash=stored.prev_hash, fields=stored.canonical_fields()) == stored.hash
    assert audit_chain_verify() == (2, None)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "statement", ["UPDATE audit_auditevent SET actor = 'mallory'", "DELETE FROM audit_auditevent"]
)
def test_raw_sql_cannot_rewrite_the_audit_log(statement):
    audit_record(event_type="test.one", actor="tester")
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(statement)
    assert AuditEvent.objects.get().actor == "tester"


def _tamper(sql: str) -> None:
    # As a superuser can: switch the triggers off for this session only.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(sql)


@pytest.mark.django_db
def test_verify_audit_names_the_first_tampered_event(capsys):
    # given an intact chain of three events
    events = [audit_record(event_type="test", actor="tester", payload={"n": n}) for n in range(3)]
    call_command("verify_audit")
    assert "intact: 3 events" in capsys.readouterr().out
    # when the second event's payload is rewritten behind the application's back
    _tamper(f"UPDATE audit_auditevent SET payload = '{{\"n\": 99}}' WHERE id = {events[1].pk}")
    # then verification fails and names it
    with pytest.raises(CommandError, match=f"#{events[1].sequence}"):
        call_command("verify_audit")


@pytest.mark.django_db
def test_verify_audit_detects_a_deleted_event():
    events = [audit_record(event_type="test", actor="tester") for _ in range(3)]
    _tamper(f"DELETE FROM audit_auditevent WHERE id = {events[1].pk}")
    checked, broken = audit_chain_verify()
    assert checked == 1
    assert broken is not None and broken.sequence == events[2].sequence


@pytest.mark.django_db
def test_verify_audit_detects_a_rehashed_event():
    # A forger who recomputes the tampered row's own hash still breaks the next link.
    events = [audit_record(event_type="test", actor="tester", payload={"n": n}) for n in range(3)]
    forged = AuditEvent.objects.get(pk=events[1].pk)
    forged.payload = {"n": 42}
    new_hash = audit_hash(prev_hash=forged.prev_hash, fields=forged.canonical_fields())
    _tamper(
        f"UPDATE audit_auditevent SET payload = '{{\"n\": 42}}', hash = '{new_hash}' WHERE id = {forged.pk}"
    )
    _, broken = audit_chain_verify()
    assert broken is not None and broken.sequence == events[2].sequence
    assert "prev_hash" in broken.reason


@pytest.mark.django_db
def test_truncate_is_refused_to_ordinary_sessions():
    audit_record(event_type="test.one", actor="tester")
    with (
        pytest.raises(DatabaseError, match="TRUNCATE refused"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("SET LOCAL memorypr.allow_truncate = 'off'")
        cursor.execute("TRUNCATE audit_auditevent")
    assert AuditEvent.objects.count() == 1


@pytest.mark.django_db
def test_a_batch_appends_its_events_in_order_when_it_ends():
    # given a transaction that records three events in a batch
    with transaction.atomic():
        with audit_batch():
            recorded = [
                audit_record(event_type=f"test.{n}", actor="tester", payload={"n": n}) for n in range(3)
            ]
            # then nothing is in the chain before the batch ends
            assert AuditEvent.objects.count() == 0
            assert all(event.pk is None for event in recorded)
        # when it ends, then all three are appended, in the order recorded, chained
        assert [event.sequence for event in recorded] == [1, 2, 3]
    stored = list(AuditEvent.objects.order_by("sequence"))
    assert [event.event_type for event in stored] == ["test.0", "test.1", "test.2"]
    assert [event.pk for event in stored] == [event.pk for event in recorded]
    assert stored[1].prev_hash == stored[0].hash and stored[2].prev_hash == stored[1].hash
    assert audit_chain_verify() == (3, None)


@pytest.mark.django_db
def test_a_batch_that_fails_appends_nothing():
    with pytest.raises(RuntimeError), transaction.atomic(), audit_batch():
        audit_record(event_type="test.lost", actor="tester")
        raise RuntimeError("the work failed")
    audit_record(event_type="test.after", actor="tester")
    assert list(AuditEvent.objects.values_list("event_type", "sequence")) == [("test.after", 1)]
    assert audit_chain_verify() == (1, None)


@pytest.mark.django_db
def test_inside_a_change_the_append_is_one_statement_and_no_savepoint():
    # given a change's transaction
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        # when it records its event
        event = audit_record(event_type="test.lean", actor="tester", payload={"n": 1})
    # then one statement took the chain lock, read the head and appended the row, with no savepoint
    statements = [query["sql"] for query in queries]
    assert len(statements) == 1 and "audit_chain_extend" in statements[0]
    stored = AuditEvent.objects.get(pk=event.pk)
    assert (stored.sequence, stored.created_at, stored.hash) == (event.sequence, event.created_at, event.hash)


@pytest.mark.django_db(transaction=True)
def test_an_audited_commit_releases_the_lock_before_its_flush_and_is_flushed_before_the_caller_goes_on():
    # given a change's transaction that records its event
    with CaptureQueriesContext(connection) as queries:
        with transaction.atomic():
            audit_record(event_type="test.flushed", actor="tester", payload={"n": 1})
            audit_record(event_type="test.flushed", actor="tester", payload={"n": 2})
            with connection.cursor() as cursor:
                cursor.execute("SHOW synchronous_commit")
                # then its commit does not wait for the disk while it holds the chain lock
                assert cursor.fetchone()[0] == "off"
        # when the block has ended (committed)
        statements = [query["sql"] for query in queries]
    # then the flush was waited for after the commit, and the connection commits durably again
    flushed = [i for i, sql in enumerate(statements) if "pg_logical_emit_message" in sql]
    assert len(flushed) == 1
    assert flushed[0] > max(i for i, sql in enumerate(statements) if "audit_chain_extend" in sql)
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"
    assert audit_chain_verify() == (2, None)


@pytest.mark.django_db(transaction=True)
def test_audited_commits_inside_a_flushed_once_block_wait_for_the_disk_once_after_the_last():
    # given a block in which three audited transactions commit
    with CaptureQueriesContext(connection) as queries:
        with audit_flushed_once():
            for n in range(3):
                with transaction.atomic():
                    audit_record(event_type="test.batch", actor="tester", payload={"n": n})
            # then none of them waited for the flush on its own
            assert not any("pg_logical_emit_message" in query["sql"] for query in queries)
        # when the block ends
        statements = [query["sql"] for query in queries]
    # then one wait followed the last append
    flushed = [i for i, sql in enumerate(statements) if "pg_logical_emit_message" in sql]
    assert flushed == [len(statements) - 1]
    assert sum("audit_chain_extend" in sql for sql in statements) == 3
    assert audit_chain_verify() == (3, None)


@pytest.mark.django_db(transaction=True)
def test_a_flushed_once_block_that_commits_nothing_audited_waits_for_nothing():
    # given a block whose only audited transaction rolls back
    with (
        CaptureQueriesContext(connection) as queries,
        audit_flushed_once(),
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        audit_record(event_type="test.rolled_back", actor="tester", payload={})
        raise RuntimeError("rolled back")
    # then nothing was waited for, and nothing was appended
    assert not any("pg_logical_emit_message" in query["sql"] for query in queries)
    assert AuditEvent.objects.count() == 0


PAYLOADS = [
    {},
    {"text": "上个月我举家搬迁到了深圳", "emoji": "🙂", "quote": 'she said "hi"\n', "slash": "a\\b"},
    {
        "n": 12345678901234567890,
        "x": 0.1,
        "small": 1e-7,
        "big": 1.5e300,
        "neg": -0.0,
        "t": True,
        "none": None,
    },
    {"nested": {"b": [1, {"z": "sequence-", "a": "time-"}], "a": []}, "createdAt": "not the event's"},
]


@pytest.mark.django_db
@pytest.mark.parametrize("payload", PAYLOADS)
def test_the_server_hashes_exactly_what_verification_recomputes(payload):
    # given events of every kind of payload, some with the markers' words inside
    # when they are appended (the server joins the pieces and hashes them)
    events = [
        audit_record(
            event_type="test.hashed", actor="ağent:ü", namespace="ns", subject="s 1", payload=payload
        ),
        audit_record(
            event_type="test.hashed", actor="tester", pull_id="7a0f7a4e-8f43-4a43-9d5e-0d4f7a2b9c11"
        ),
    ]
    # then each stored row's hash is what Python computes from the row read back
    for event in events:
        stored = AuditEvent.objects.get(pk=event.pk)
        assert (
            audit_hash(prev_hash=stored.prev_hash, fields=stored.canonical_fields())
            == stored.hash
            == event.hash
        )
    assert audit_chain_verify() == (2, None)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "moment",
    ["2026-12-01T08:11:09.920091+00:00", "2026-12-01T08:11:09+00:00", "2026-12-01T08:11:09.000100+00:00"],
)
def test_the_server_writes_a_time_as_python_does(moment):
    from datetime import datetime

    # when the database writes the time that the hash covers
    with connection.cursor() as cursor:
        cursor.execute("SELECT audit_time_text(%s)", [datetime.fromisoformat(moment)])
        (text,) = cursor.fetchone()
    # then it is Python's isoformat, with the fraction only when there is one
    assert text == datetime.fromisoformat(moment).isoformat() == moment


@pytest.mark.django_db(transaction=True)
def test_a_change_whose_audit_failed_cannot_commit_even_if_the_caller_swallows_the_error(monkeypatch):
    from memorypr.agents.models import Namespace
    from memorypr.audit import services

    # given an append that fails on the database
    def failing_append(events, **options):  # type: ignore[no-untyped-def]
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 / 0")

    monkeypatch.setattr(services, "_audit_chain_append", failing_append)
    # when a change records its event, and the caller catches the error and tries to go on
    with pytest.raises(TransactionManagementError), transaction.atomic():
        Namespace.objects.create(name="swallowed-space")
        with contextlib.suppress(DatabaseError):
            audit_record(event_type="test.swallowed", actor="tester", namespace="swallowed-space")
        Namespace.objects.create(name="after-the-failure")
    # then nothing of the change was committed, and the chain holds no event for it
    assert not Namespace.objects.filter(name__in=["swallowed-space", "after-the-failure"]).exists()
    assert not AuditEvent.objects.filter(event_type="test.swallowed").exists()
