"""The hash chain stays intact when many transactions append to it at once."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from memorypr.audit.models import AuditEvent
from memorypr.audit.selectors import audit_chain_verify
from memorypr.audit.services import audit_batch, audit_record


@pytest.mark.django_db(transaction=True)
def test_the_chain_verifies_after_concurrent_writers():
    # given eight writers, each appending twenty events in transactions of two
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def writer(n: int) -> None:
        try:
            start.wait()
            for i in range(10):
                with transaction.atomic():
                    for j in range(2):
                        audit_record(event_type="test.concurrent", actor=f"writer:{n}", namespace="demo",
                                     payload={"writer": n, "batch": i, "item": j})  # fmt: skip
        except BaseException as exc:  # surfaced below, in the test's thread
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    # when they all write at once
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    # then every event is in the chain and the chain verifies
    assert errors == []
    checked, broken = audit_chain_verify()
    assert broken is None
    assert checked >= 160


@pytest.mark.django_db(transaction=True)
def test_a_batch_holds_the_chain_lock_only_when_it_appends():
    # given a transaction that has recorded an event in a batch that has not ended
    other_done = threading.Event()
    errors: list[BaseException] = []

    def other_writer() -> None:
        try:
            with transaction.atomic():
                audit_record(event_type="test.other", actor="other")
            other_done.set()
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    with transaction.atomic(), audit_batch():
        audit_record(event_type="test.batched", actor="batch")
        # when another transaction appends meanwhile, then it does not wait for this one
        thread = threading.Thread(target=other_writer)
        thread.start()
        assert other_done.wait(timeout=10), "the other writer waited for the open batch"
        thread.join(timeout=10)
    # and the batch's event follows it in the chain, which verifies
    assert not errors
    assert list(AuditEvent.objects.order_by("sequence").values_list("event_type", flat=True)) == [
        "test.other",
        "test.batched",
    ]
    assert audit_chain_verify() == (2, None)
