from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest
import redis
from django.db import DatabaseError, transaction
from django.utils import timezone

from memorypr.agents.services import namespace_get_or_create
from memorypr.working_memory.models import SessionTurn
from memorypr.working_memory.selectors import session_view
from memorypr.working_memory.services import turn_append
from memorypr.working_memory.stores import PostgresStore

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo():
    return namespace_get_or_create(name="demo")


@pytest.fixture
def redis_store(settings):
    """Working memory on the local Redis, under a key prefix of this test's own."""
    prefix = f"memorypr-test:{uuid.uuid4().hex}"
    settings.REDIS_URL = settings.TEST_REDIS_URL
    settings.MEMORYPR_WORKING_MEMORY_PREFIX = prefix
    client = redis.Redis.from_url(settings.TEST_REDIS_URL)
    yield client, prefix
    for key in client.scan_iter(f"{prefix}:*"):
        client.delete(key)


def _append(namespace, session, *contents, role="user"):
    return [
        turn_append(namespace=namespace, session_id=session, role=role, content=c, agent=None)
        for c in contents
    ]


def test_postgres_window_ends_at_an_idle_gap(demo, settings):
    # given: 30-minute idle TTL (the default) and three turns
    assert PostgresStore().window(namespace_id=demo.pk, session_id="s", now=timezone.now()).turns == []
    turns = _append(demo, "s", "one", "two", "three")
    now = timezone.now()
    # when / then: inside the TTL everything is there
    view = session_view(namespace=demo, session_id="s", now=now + timedelta(minutes=29))
    assert view is not None
    assert [t.content for t in view.window.turns] == ["one", "two", "three"]
    assert view.window.expires_at == turns[-1].created_at + timedelta(minutes=30)
    # idle past the TTL: working memory is empty, the transcript is not
    idle = session_view(namespace=demo, session_id="s", now=now + timedelta(minutes=31))
    assert idle is not None and idle.window.turns == [] and idle.expired is True
    assert idle.total_turns == 3


def test_postgres_ttl_and_size_are_configurable(demo, settings):
    # given
    settings.MEMORYPR_WORKING_MEMORY_TURNS = 2
    settings.MEMORYPR_WORKING_MEMORY_TTL_SECONDS = 60
    _append(demo, "s", "a", "b", "c")
    now = timezone.now()
    # then
    assert [t.content for t in session_view(namespace=demo, session_id="s", now=now).window.turns] == [
        "b",
        "c",
    ]
    assert session_view(namespace=demo, session_id="s", now=now + timedelta(seconds=61)).expired


def test_redis_store_keeps_the_last_turns_with_an_idle_ttl(
    demo, redis_store, settings, django_capture_on_commit_callbacks
):
    # given
    client, prefix = redis_store
    settings.MEMORYPR_WORKING_MEMORY_TURNS = 3
    with django_capture_on_commit_callbacks(execute=True):
        _append(demo, "s-r", *[f"m{i}" for i in range(5)])
    # when
    view = session_view(namespace=demo, session_id="s-r")
    # then
    assert view is not None and view.window.store == "redis"
    assert [t.content for t in view.window.turns] == ["m2", "m3", "m4"]
    key = f"{prefix}:{demo.pk}:s-r"
    assert client.llen(key) == 3
    assert 1790 <= client.ttl(key) <= 1800
    assert view.window.expires_at is not None
    # the durable transcript holds every turn
    assert SessionTurn.objects.filter(session_id="s-r").count() == 5


def test_redis_working_memory_expires_after_the_idle_ttl(
    demo, redis_store, settings, django_capture_on_commit_callbacks
):
    # given: a one-second idle TTL
    settings.MEMORYPR_WORKING_MEMORY_TTL_SECONDS = 1
    with django_capture_on_commit_callbacks(execute=True):
        _append(demo, "s-e", "hello")
    assert [t.content for t in session_view(namespace=demo, session_id="s-e").window.turns] == ["hello"]
    # when
    time.sleep(1.3)
    # then
    view = session_view(namespace=demo, session_id="s-e")
    assert view is not None and view.expired is True and view.window.turns == []
    # a new turn starts a fresh working memory
    with django_capture_on_commit_callbacks(execute=True):
        _append(demo, "s-e", "back again")
    assert [t.content for t in session_view(namespace=demo, session_id="s-e").window.turns] == ["back again"]


def test_unreachable_redis_degrades_to_postgres(demo, settings, django_capture_on_commit_callbacks):
    # given: nothing listens on port 1
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    with django_capture_on_commit_callbacks(execute=True):
        _append(demo, "s-d", "still recorded")
    # when
    view = session_view(namespace=demo, session_id="s-d")
    # then
    assert view is not None and view.window.store == "postgres"
    assert [t.content for t in view.window.turns] == ["still recorded"]


def test_transcript_is_append_only(demo):
    # given
    [turn] = _append(demo, "s-x", "I live in Beijing.")
    # then
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        SessionTurn.objects.filter(pk=turn.pk).update(content="I live in Shenzhen.")
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        SessionTurn.objects.filter(pk=turn.pk).delete()
    assert SessionTurn.objects.get(pk=turn.pk).content == "I live in Beijing."
