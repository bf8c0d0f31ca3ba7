"""lock_pull: the KPR row locked for this transaction, its namespace loaded with it."""

from __future__ import annotations

import uuid

import psycopg
import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from memorypr.agents.models import Namespace
from memorypr.common.locks import lock_fact_versions_active, lock_pull
from memorypr.facts.models import VECTOR_STORE_FIELDS, FactVersion
from memorypr.pulls.models import KnowledgePullRequest
from tests.factories import agent_with_token
from tests.facts.kprs import SUBJECT, create, merged, submit, update

pytestmark = pytest.mark.django_db(transaction=True)


def _other_connection() -> psycopg.Connection:
    settings = connection.get_connection_params()
    settings.pop("cursor_factory", None)
    settings.pop("context", None)
    settings.pop("prepare_threshold", None)
    return psycopg.connect(**settings, autocommit=True)


def test_the_kpr_is_locked_until_the_transaction_ends_and_holds_its_namespace():
    # given a KPR
    agent, _ = agent_with_token(name="proposer", namespaces=["demo"])
    pull = submit(agent, Namespace.objects.get(name="demo"), create("pet", "cat"))
    expected = KnowledgePullRequest.objects.get(pk=pull.pk)
    other = _other_connection()
    try:
        with transaction.atomic():
            # when it is locked
            with CaptureQueriesContext(connection) as queries:
                locked = lock_pull(pull_id=str(pull.pk))
                namespace = locked.namespace.name
            # then one statement read it with its namespace, as the ORM would have
            assert len(queries) == 1 and "FOR UPDATE OF" in queries[0]["sql"]
            assert namespace == "demo"
            fields = [field.attname for field in KnowledgePullRequest._meta.concrete_fields]
            assert [getattr(locked, name) for name in fields] == [getattr(expected, name) for name in fields]
            # and another session can neither lock nor update its row meanwhile, but can its namespace's
            with pytest.raises(psycopg.errors.LockNotAvailable):
                other.execute(f"SELECT 1 FROM {KnowledgePullRequest._meta.db_table} WHERE id = %s FOR UPDATE NOWAIT",
                              [pull.pk])  # fmt: skip
            other.execute("SELECT 1 FROM agents_namespace WHERE name = 'demo' FOR UPDATE NOWAIT")
        # once the transaction ends, the row is free
        assert other.execute(
            f"SELECT 1 FROM {KnowledgePullRequest._meta.db_table} WHERE id = %s FOR UPDATE NOWAIT", [pull.pk]
        ).fetchone() == (1,)
    finally:
        other.close()


def test_an_unknown_kpr_raises_does_not_exist():
    with transaction.atomic(), pytest.raises(KnowledgePullRequest.DoesNotExist):
        lock_pull(pull_id=str(uuid.uuid4()))


def test_the_active_versions_of_a_subjects_keys_are_locked_in_id_order_without_their_vectors():
    # given a subject with two active facts, one retired version and a fact of another subject
    agent, _ = agent_with_token(name="proposer", namespaces=["demo"])
    demo = Namespace.objects.get(name="demo")
    merged(agent, demo, create("pet", "cat"), create("home_city", "Beijing"))
    merged(agent, demo, update("pet", "cat", "dog"))
    merged(agent, demo, create("pet", "fish"), subject="user-2")
    expected = list(
        FactVersion.objects.filter(
            namespace=demo, subject=SUBJECT, status="active", key__in=["pet", "home_city"]
        )
        .defer(*VECTOR_STORE_FIELDS)
        .order_by("pk")
    )
    other = _other_connection()
    try:
        with transaction.atomic():
            # when they are locked, the vector store's columns deferred
            locked = lock_fact_versions_active(
                namespace_id=demo.pk,
                subject=SUBJECT,
                keys=["pet", "home_city", "job"],
                deferred=VECTOR_STORE_FIELDS,
            )
            # then the active versions come back as the ORM reads them, in id order, vectors not loaded
            assert [fact.pk for fact in locked] == [fact.pk for fact in expected]
            assert sorted((f.key, f.value, f.version, f.status) for f in locked) == [
                ("home_city", "Beijing", 1, "active"),
                ("pet", "dog", 2, "active"),
            ]
            assert [f.pk for f in locked] == sorted(f.pk for f in locked)
            assert all(name in fact.get_deferred_fields() for fact in locked for name in VECTOR_STORE_FIELDS)
            # and another session can update neither row meanwhile, but can the other subject's
            for fact in locked:
                with pytest.raises(psycopg.errors.LockNotAvailable):
                    other.execute(
                        "SELECT 1 FROM facts_factversion WHERE id = %s FOR UPDATE NOWAIT", [fact.pk]
                    )
            other.execute(
                "SELECT 1 FROM facts_factversion WHERE subject = 'user-2' AND key = 'pet' FOR UPDATE NOWAIT"
            )
        # once the transaction ends, the rows are free
        for fact in locked:
            assert other.execute(
                "SELECT 1 FROM facts_factversion WHERE id = %s FOR UPDATE NOWAIT", [fact.pk]
            ).fetchone() == (1,)
    finally:
        other.close()
