from __future__ import annotations

import pytest
from django.db import connection

from memorypr.agents.services import namespace_get_or_create
from memorypr.facts.models import FactStatus
from memorypr.retrieval.common_words import common_words_forget, subject_common_words
from tests.common.tenants import as_app_role
from tests.retrieval.factories import fact_put, world_facts_put, world_scope

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return namespace_get_or_create(name="world")


@pytest.fixture(autouse=True)
def _read_afresh():
    common_words_forget()
    yield
    common_words_forget()


def _statistics_gathered() -> None:
    # ANALYZE counts the rows this test's transaction wrote, and its statistics roll back with it.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE facts_factversion")


def test_the_words_that_many_active_facts_of_the_subject_hold_are_common(world, settings):
    # given six facts of the subject with "tea", one with "castle", and "castle" in retired
    # versions and in another subject's facts
    settings.MEMORYPR_FTS_MAX_MATCHES = 4
    world_facts_put(world, **{f"drink.{n}": f"{kind} tea" for n, kind in enumerate("abcdef")})
    world_facts_put(world, **{"landmark.castle": "the old castle"})
    for n in range(5):
        fact_put(
            namespace=world, subject="world", category="domain_fact", key=f"ruin.{n}",
            value="a ruined castle", status=FactStatus.SUPERSEDED,
        )  # fmt: skip
        fact_put(namespace=world, subject="elsewhere", key=f"trip.{n}", value="visited a castle")
    # when the statistics are gathered
    _statistics_gathered()
    # then "tea" (and the key's "drink") is common in the subject; "castle" is not: retired versions
    # and other subjects' facts do not count
    assert subject_common_words(scope=world_scope(world)) == {"drink", "tea"}


def test_no_word_is_common_before_the_statistics_are_gathered(world, settings):
    # given many facts with the same word, and no ANALYZE since they were written
    settings.MEMORYPR_FTS_MAX_MATCHES = 2
    world_facts_put(world, **{f"drink.{n}": f"{kind} tea" for n, kind in enumerate("abcdef")})
    # when / then
    assert subject_common_words(scope=world_scope(world)) == frozenset()


def test_the_words_are_kept_for_a_minute_then_read_again(world, settings):
    # given the statistics of a subject whose facts all hold "tea", read once
    settings.MEMORYPR_FTS_MAX_MATCHES = 3
    world_facts_put(world, **{f"drink.{n}": f"{kind} tea" for n, kind in enumerate("abcdef")})
    _statistics_gathered()
    assert subject_common_words(scope=world_scope(world), now=100.0) == {"drink", "tea"}
    # when "coffee" becomes common too
    world_facts_put(world, **{f"cup.{n}": f"{kind} coffee" for n, kind in enumerate("abcdef")})
    _statistics_gathered()
    # then the words read a moment ago stand for a minute, and are read again after it
    assert subject_common_words(scope=world_scope(world), now=159.0) == {"drink", "tea"}
    assert subject_common_words(scope=world_scope(world), now=161.0) == {"drink", "tea", "cup", "coffee"}


def test_the_web_role_learns_the_common_words_of_its_own_namespaces_only(world, settings):
    # given a subject whose facts all hold "tea", and another tenant
    settings.MEMORYPR_FTS_MAX_MATCHES = 3
    namespace_get_or_create(name="other")
    world_facts_put(world, **{f"drink.{n}": f"{kind} tea" for n, kind in enumerate("abcdef")})
    _statistics_gathered()
    # when the web tier's role asks, scoped to the other tenant
    with as_app_role(namespaces=["other"]):
        foreign = subject_common_words(scope=world_scope(world))
    common_words_forget()
    # and scoped to the subject's own namespace
    with as_app_role(namespaces=["world"]):
        own = subject_common_words(scope=world_scope(world))
    # then
    assert foreign == frozenset()
    assert own == {"drink", "tea"}
