"""Tampering with the audit log behind the application's back, as a superuser can (the
append-only triggers switched off), is found by `verify_audit`: editing, deleting, inserting
and reordering events, also while other transactions keep appending through the service. A
rewrite of the whole chain, or the loss of its newest events, is found against an anchor kept
outside the database."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, connection, transaction

from memorypr.audit.models import AuditEvent
from memorypr.audit.selectors import audit_chain_verify
from memorypr.audit.services import GENESIS_HASH, audit_hash, audit_record


def tamper(*statements: str) -> None:
    """Run statements with every trigger of the audit table disabled, as a superuser can."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("ALTER TABLE audit_auditevent DISABLE TRIGGER ALL")
        for statement in statements:
            cursor.execute(statement)
        cursor.execute("ALTER TABLE audit_auditevent ENABLE TRIGGER ALL")


def forged_row(*, after: AuditEvent) -> str:
    """An INSERT of an event chained to `after` that hashes correctly on its own (the forger knows
    the algorithm): only the events after it can tell."""
    sequence, prev_hash = after.sequence + 1, after.hash
    event = AuditEvent(
        sequence=sequence, created_at=after.created_at, namespace="demo", actor="mallory", event_type="pull.approved", subject="", payload={"forged": True},
        prev_hash=prev_hash,
    )  # fmt: skip
    event.hash = audit_hash(prev_hash=prev_hash, fields=event.canonical_fields())
    return (
        "INSERT INTO audit_auditevent (sequence, created_at, namespace, actor, event_type, subject, payload,"
        f" prev_hash, hash) VALUES ({sequence}, '{event.created_at.isoformat()}', 'demo', 'mallory',"
        f" 'pull.approved', '', '{{\"forged\": true}}', '{prev_hash}', '{event.hash}')"
    )


def edit(target: AuditEvent) -> list[str]:
    return [f"UPDATE audit_auditevent SET actor = 'mallory' WHERE sequence = {target.sequence}"]


def delete(target: AuditEvent) -> list[str]:
    return [f"DELETE FROM audit_auditevent WHERE sequence = {target.sequence}"]


def insert(target: AuditEvent) -> list[str]:
    # Make room after the target (a detour through large numbers keeps `sequence` unique), then
    # put a forged event there, chained to the target.
    return [
        f"UPDATE audit_auditevent SET sequence = sequence + 1000000000 WHERE sequence > {target.sequence}",
        "UPDATE audit_auditevent SET sequence = sequence - 999999999 WHERE sequence > 1000000000",
        forged_row(after=target),
    ]


def reorder(target: AuditEvent) -> list[str]:
    # Swap the target and the event after it.
    a, b = target.sequence, target.sequence + 1
    return [
        f"UPDATE audit_auditevent SET sequence = -1 WHERE sequence = {a}",
        f"UPDATE audit_auditevent SET sequence = {a} WHERE sequence = {b}",
        f"UPDATE audit_auditevent SET sequence = {b} WHERE sequence = -1",
    ]


# Each kind of tampering with the event at sequence t, and where verification stops: the
# sequence of the first event that fails, relative to t. An edit or a swap fails at t itself; a
# deletion at the event that moves into the gap; an insertion (the forged event chains correctly
# to t) at the event it pushed along.
TAMPERINGS: dict[str, tuple[Callable[[AuditEvent], list[str]], int]] = {
    "edit": (edit, 0),
    "delete": (delete, 1),
    "insert": (insert, 2),
    "reorder": (reorder, 0),
}


def expected_break(how: str, target: AuditEvent) -> tuple[int, int]:
    """(events verified before the break, sequence of the event that breaks)."""
    at = target.sequence + TAMPERINGS[how][1]
    # everything before t verifies, and so do t and the forged event after it on an insertion
    return (target.sequence + 1 if how == "insert" else target.sequence - 1), at


def append(n: int) -> list[AuditEvent]:
    return [audit_record(event_type="test", actor="tester", payload={"n": i}) for i in range(n)]


@pytest.mark.django_db
@pytest.mark.parametrize("how", sorted(TAMPERINGS))
def test_each_kind_of_tampering_is_detected(how):
    # given an intact chain of six events
    events = append(6)
    assert audit_chain_verify() == (6, None)
    # when the third is tampered with, triggers disabled
    tamper(*TAMPERINGS[how][0](events[2]))
    # then verification stops at the tampered place and the command fails
    checked, broken = audit_chain_verify()
    assert broken is not None
    assert (checked, broken.sequence) == expected_break(how, events[2])
    with pytest.raises(CommandError, match="audit chain broken"):
        call_command("verify_audit")


@contextmanager
def writers(count: int, stop: threading.Event, errors: list[BaseException]) -> Iterator[list[int]]:
    """Threads appending events through the service, each in its own short transaction."""
    written = [0] * count

    def work(n: int) -> None:
        try:
            while not stop.is_set():
                try:
                    with transaction.atomic():
                        audit_record(
                            event_type="test.concurrent", actor=f"writer:{n}", payload={"i": written[n]}
                        )
                except IntegrityError:
                    # An insertion that renumbers the events under a writer who has read the head
                    # makes that writer's append collide: the tampering shows, and nothing forks.
                    continue
                written[n] += 1
        except BaseException as exc:  # surfaced in the test's thread
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    try:
        yield written
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)


def wait_for_events(count: int) -> None:
    while AuditEvent.objects.count() < count:
        threading.Event().wait(0.01)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("how", sorted(TAMPERINGS))
def test_tampering_is_detected_while_writers_append(how):
    # given four writers appending to the chain
    errors: list[BaseException] = []
    stop = threading.Event()
    with writers(4, stop, errors) as written:
        wait_for_events(40)
        # when an event in the middle is tampered with while they go on writing
        target = AuditEvent.objects.get(sequence=20)
        tamper(*TAMPERINGS[how][0](target))
        before = AuditEvent.objects.count()
        wait_for_events(before + 40)
        # then verification, while they still write, stops at the tampered place
        checked, broken = audit_chain_verify()
    assert errors == []
    assert sum(written) >= 80
    assert broken is not None
    assert (checked, broken.sequence) == expected_break(how, target)
    # and it still does once they have stopped
    assert audit_chain_verify()[1] == broken


@pytest.mark.django_db(transaction=True)
def test_verify_audit_passes_while_writers_append_to_an_intact_chain():
    # given writers appending, and no tampering (the tests above would pass on a verifier that
    # always fails)
    errors: list[BaseException] = []
    stop = threading.Event()
    with writers(4, stop, errors):
        wait_for_events(40)
        # then the chain verifies while they write
        checked, broken = audit_chain_verify()
        call_command("verify_audit")
    assert errors == []
    assert broken is None and checked >= 40


def rewrite_whole_chain(*, actor: str) -> None:
    """A forger who recomputes every hash from the first event on: the chain verifies again."""
    statements = []
    prev_hash = GENESIS_HASH
    for event in AuditEvent.objects.order_by("sequence"):
        event.actor = actor
        event.prev_hash = prev_hash
        event.hash = audit_hash(prev_hash=prev_hash, fields=event.canonical_fields())
        statements.append(
            f"UPDATE audit_auditevent SET actor = '{actor}', prev_hash = '{prev_hash}', hash = '{event.hash}'"
            f" WHERE sequence = {event.sequence}"
        )
        prev_hash = event.hash
    tamper(*statements)


@pytest.mark.django_db
def test_an_anchor_detects_a_rewrite_of_the_whole_chain(tmp_path: Path, capsys):
    # given an anchor written by a first verification
    anchor = tmp_path / "audit-head.json"
    events = append(4)
    call_command("verify_audit", "--anchor", str(anchor))
    assert f"head: #{events[-1].sequence} {events[-1].hash}" in capsys.readouterr().out
    assert events[-1].hash in anchor.read_text()
    # and events appended since, which move the anchor forward
    append(2)
    call_command("verify_audit", "--anchor", str(anchor))
    head = AuditEvent.objects.order_by("-sequence").first()
    assert head is not None and head.hash in anchor.read_text()
    # when the whole chain is rewritten consistently
    rewrite_whole_chain(actor="mallory")
    # then the chain alone verifies, but not against the anchor
    assert audit_chain_verify() == (6, None)
    call_command("verify_audit")
    with pytest.raises(CommandError, match="no longer has the anchored hash"):
        call_command("verify_audit", "--anchor", str(anchor))
    assert head.hash in anchor.read_text()  # a failed check does not move the anchor


@pytest.mark.django_db
def test_an_anchor_detects_the_loss_of_the_newest_events(tmp_path: Path):
    # given an anchored chain
    anchor = tmp_path / "audit-head.json"
    events = append(4)
    call_command("verify_audit", "--anchor", str(anchor))
    # when its newest event is deleted, which leaves a shorter chain that verifies
    tamper(*delete(events[-1]))
    assert audit_chain_verify() == (3, None)
    # then the anchor tells
    with pytest.raises(CommandError, match="is gone"):
        call_command("verify_audit", "--anchor", str(anchor))


@pytest.mark.django_db
def test_an_unreadable_anchor_is_an_error_not_a_fresh_start(tmp_path: Path):
    anchor = tmp_path / "audit-head.json"
    anchor.write_text("not json")
    append(1)
    with pytest.raises(CommandError, match="unreadable"):
        call_command("verify_audit", "--anchor", str(anchor))
