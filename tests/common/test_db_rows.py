"""ModelRows builds from a written statement's rows the same instances as the ORM's own read."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models import signals

from memorypr.agents.models import Namespace
from memorypr.agents.services import namespace_get_or_create
from memorypr.common.db.rows import ModelRows
from memorypr.facts.models import FactVersion
from memorypr.pulls.models import KnowledgePullRequest, Operation, ReviewEvent
from tests.factories import agent_with_token
from tests.facts.kprs import approve, create, merged, submit

pytestmark = pytest.mark.django_db


def _values(instance):  # type: ignore[no-untyped-def]
    return {field.attname: getattr(instance, field.attname) for field in instance._meta.concrete_fields}


@pytest.mark.parametrize("model", [KnowledgePullRequest, Operation, ReviewEvent])
def test_rows_become_the_instances_the_orm_reads(model):
    # given a reviewed KPR: JSON values, evidence, findings, times, uuids and nulls in its rows
    agent, _ = agent_with_token(name="proposer", namespaces=["demo"])
    pull = submit(agent, Namespace.objects.get(name="demo"), create("pet", {"kind": "cat", "age": 3}))
    approve(pull)
    rows = ModelRows(model, alias="t")
    expected = list(model.objects.order_by("pk"))
    assert expected
    # when the same rows are read by a written statement with an extra trailing column
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {rows.columns}, 'extra' FROM {model._meta.db_table} t ORDER BY t.id")
        read = rows.instances(cursor.fetchall())
    # then every field holds what the ORM holds, and the instances are saved ones
    assert [_values(instance) for instance in read] == [_values(instance) for instance in expected]
    assert all(not instance._state.adding and instance._state.db == "default" for instance in read)


def test_deferred_fields_stay_out_of_the_columns_and_load_on_first_access():
    # given a merged fact, read without its embedding and search documents
    agent, _ = agent_with_token(name="proposer", namespaces=["demo"])
    merged(agent, Namespace.objects.get(name="demo"), create("pet", "cat"))
    rows = ModelRows(FactVersion, deferred=("embedding", "search_text", "search_vector"))
    assert "embedding" not in rows.columns and '"value"' in rows.columns
    # when the statement reads the other columns
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {rows.columns} FROM facts_factversion")
        (fact,) = rows.instances(cursor.fetchall())
    # then the fact holds them, defers the rest, and loads the embedding when asked
    expected = FactVersion.objects.get()
    assert fact.get_deferred_fields() == {"embedding", "search_text", "search_vector"}
    assert (fact.pk, fact.key, fact.value, fact.created_at) == (
        expected.pk, expected.key, expected.value, expected.created_at,
    )  # fmt: skip
    assert list(fact.embedding) == list(expected.embedding)


def _namespace_rows(name: str) -> Namespace:
    rows = ModelRows(Namespace)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {rows.columns} FROM agents_namespace WHERE name = %s", [name])
        (namespace,) = rows.instances(cursor.fetchall())
    return namespace


def test_an_instance_from_rows_saves_as_the_row_it_was_read_from():
    # given a namespace read by a written statement
    namespace_get_or_create(name="demo")
    namespace = _namespace_rows("demo")
    before = Namespace.objects.count()
    # when it is changed and saved
    namespace.name = "demo-renamed"
    namespace.save()
    # then its own row changed: no row was added
    assert Namespace.objects.count() == before
    assert Namespace.objects.get(pk=namespace.pk).name == "demo-renamed"


def test_an_instance_from_rows_reaches_its_related_objects():
    # given a merged fact read by a written statement
    agent, _ = agent_with_token(name="proposer", namespaces=["demo"])
    merged(agent, Namespace.objects.get(name="demo"), create("pet", "cat"))
    rows = ModelRows(FactVersion, deferred=("embedding", "search_text", "search_vector"))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {rows.columns} FROM facts_factversion")
        (fact,) = rows.instances(cursor.fetchall())
    # then its foreign key loads the related row, and it compares equal to the ORM's instance
    assert fact.namespace.name == "demo"
    assert fact == FactVersion.objects.get()


def test_a_model_with_init_receivers_is_built_through_its_init():
    # given a namespace, and a receiver of post_init for namespaces
    namespace_get_or_create(name="demo")
    seen: list[int] = []

    def receiver(sender, instance, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(instance.pk)

    signals.post_init.connect(receiver, sender=Namespace)
    try:
        # when a namespace is read by a written statement
        namespace = _namespace_rows("demo")
    finally:
        signals.post_init.disconnect(receiver, sender=Namespace)
    # then the receiver saw it, as it sees the ORM's instances
    assert seen == [namespace.pk]
