from __future__ import annotations

import time

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memorypr.agents.services import namespace_get_or_create
from memorypr.facts.models import FactVersion
from memorypr.vectors import nearest
from memorypr.vectors.embedding import embed_text
from memorypr.vectors.nearest import Scope, subject_is_small, vector_candidates, walk_fell_short
from tests.common.tenants import as_app_role
from tests.retrieval.factories import fact_put, world_facts_put, world_scope

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return namespace_get_or_create(name="world")


def _session_ef_search() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('hnsw.ef_search')")
        return str(cursor.fetchone()[0])


@pytest.mark.django_db(transaction=True)
def test_hnsw_settings_are_set_once_per_connection_and_never_outlive_a_transaction(settings):
    # given a fact in a subject searched through the HNSW index, and a search of more
    # candidates than ef_search outside any transaction
    world = namespace_get_or_create(name="world")
    world_facts_put(world, likes="coffee")
    settings.MEMORYPR_EXACT_SEARCH_MAX_ROWS = 0
    settings.MEMORYPR_HNSW_EF_SEARCH = 40
    vector = embed_text("coffee")
    vector_candidates(scope=world_scope(world), embedding=vector, limit=60)
    # then the connection's session holds the search's ef_search
    assert _session_ef_search() == "60"
    # when a search inside a transaction asks for more
    with transaction.atomic():
        vector_candidates(scope=world_scope(world), embedding=vector, limit=90)
        assert _session_ef_search() == "90"
    # then its setting ended with the transaction
    assert _session_ef_search() == "60"
    # and a search outside a transaction with another limit sets the session again
    vector_candidates(scope=world_scope(world), embedding=vector, limit=10)
    assert _session_ef_search() == "40"


def test_historical_retrieval_is_always_exact_and_the_ceiling_caps_the_scan(world, settings):
    world_facts_put(world, **{f"note.{n}": f"value {n}" for n in range(3)})
    now = Scope(namespace_id=world.pk, subject="world", at=timezone.now())
    then = Scope(namespace_id=world.pk, subject="world", at=timezone.now(), historical=True)
    assert subject_is_small(now) and subject_is_small(then)
    settings.MEMORYPR_EXACT_SEARCH_MAX_ROWS = 0
    assert not subject_is_small(now) and subject_is_small(then)


def test_a_walk_that_found_fewer_rows_than_the_subject_holds_fell_short_whatever_the_ceiling(world, settings):
    # given a subject of three facts, and an exact-scan ceiling below them
    world_facts_put(world, **{f"bike.{n}": f"owns {n} bicycles" for n in range(3)})
    settings.MEMORYPR_EXACT_SEARCH_MAX_ROWS = 0
    nearest._COUNTS.clear()
    # when a walk asked for three found one, two or three
    # then it fell short while it found fewer than the subject holds
    assert walk_fell_short(world_scope(world), found=1, limit=3)
    assert walk_fell_short(world_scope(world), found=2, limit=3)
    assert not walk_fell_short(world_scope(world), found=3, limit=3)


def _profile_among_domain_facts(world) -> list[FactVersion]:
    """Six domain facts of the subject, and its two profile facts (returned)."""
    world_facts_put(world, **{f"bike.{n}": f"owns {n} bicycles" for n in range(6)})
    return [
        fact_put(namespace=world, subject="world", category="user_profile", key=key, value=value)
        for key, value in (("home_city", "Lisbon"), ("pet", "a cat"))
    ]


def _profile_scope(world, settings, *, ceiling: int) -> Scope:
    """The subject's profile facts, under this exact-scan ceiling, with no size counted yet."""
    settings.MEMORYPR_EXACT_SEARCH_MAX_ROWS = ceiling
    nearest._COUNTS.clear()
    return Scope(namespace_id=world.pk, subject="world", at=timezone.now(), categories=("user_profile",))


def test_a_walk_within_categories_is_short_only_of_the_rows_those_categories_hold(world, settings):
    # given a subject of many domain facts and two profile facts, beside a nearer crowd
    for i in range(40):
        fact_put(namespace=world, subject="crowd", key=f"city_{i}", value=f"lives in city number {i}")
    profile = _profile_among_domain_facts(world)
    # (a subject and categories above the exact-scan ceiling, so they are walked)
    scope = _profile_scope(world, settings, ceiling=1)
    embedding = embed_text("which city does the user live in")
    # when the walk finds both profile facts, fewer than the limit but all the categories hold
    with CaptureQueriesContext(connection) as queries:
        found = vector_candidates(scope=scope, embedding=embedding, limit=50)
    # then it is not done again as an exact scan
    assert sorted(i for i, _ in found) == sorted(f.pk for f in profile)
    assert not [q["sql"] for q in queries.captured_queries if "::vector) + 0" in q["sql"]]
    # and when the walk ends with the crowd's rows (no iterative scan), the exact scan finds them
    settings.MEMORYPR_HNSW_ITERATIVE_SCAN = "off"
    settings.MEMORYPR_HNSW_EF_SEARCH = 1
    found = vector_candidates(scope=scope, embedding=embedding, limit=50)
    assert sorted(i for i, _ in found) == sorted(f.pk for f in profile)


def test_categories_that_hold_few_rows_of_a_large_subject_are_searched_exactly(world, settings):
    # given a subject of many domain facts and two profile facts
    profile = _profile_among_domain_facts(world)
    # (a subject above the exact-scan ceiling, its profile facts below it)
    scope = _profile_scope(world, settings, ceiling=5)
    # when the profile facts are searched
    with CaptureQueriesContext(connection) as queries:
        found = vector_candidates(
            scope=scope, embedding=embed_text("which city does the user live in"), limit=50
        )
    # then they are scanned exactly, without a walk past the subject's other rows
    assert sorted(i for i, _ in found) == sorted(f.pk for f in profile)
    assert not [q["sql"] for q in queries.captured_queries if "fact_nearest" in q["sql"]]
    # while the whole subject is walked
    with CaptureQueriesContext(connection) as queries:
        vector_candidates(
            scope=world_scope(world), embedding=embed_text("which city does the user live in"), limit=50
        )
    assert [q["sql"] for q in queries.captured_queries if "fact_nearest" in q["sql"]]


def test_the_web_role_walks_only_the_namespaces_in_its_scope(world, settings):
    # given the same fact in two namespaces' subjects, searched through the HNSW index
    other = namespace_get_or_create(name="other-world")
    mine = world_facts_put(world, **{"pet": "a cat named Tom"})["pet"]
    world_facts_put(other, **{"pet": "a cat named Tom"})
    settings.MEMORYPR_EXACT_SEARCH_MAX_ROWS = 0
    embedding = embed_text("which cat does the user have")
    # when the web role, scoped to one namespace, walks both subjects
    with as_app_role(namespaces=["world"]):
        own = vector_candidates(scope=world_scope(world), embedding=embedding, limit=5)
        foreign = vector_candidates(scope=world_scope(other), embedding=embedding, limit=5)
    # then it finds its own fact, and nothing of the other tenant
    assert [fact_id for fact_id, _ in own] == [mine.pk]
    assert foreign == []


def _walks(scope: Scope) -> bool:
    """Whether a search of the scope walks the HNSW index (else it scans the subject)."""
    with CaptureQueriesContext(connection) as queries:
        vector_candidates(scope=scope, embedding=embed_text("which drink"), limit=5)
    return any("fact_nearest" in q["sql"] for q in queries.captured_queries)


def test_a_subject_that_is_most_of_its_graph_is_walked_and_one_of_many_is_scanned(world, settings):
    # given a subject of 4 facts and one of 60, both below the exact-scan ceiling, counted by the statistics
    world_facts_put(
        world, **{f"drink.{n}": f"{kind} tea" for n, kind in enumerate(["green", "black", "mint", "oolong"])}
    )
    for i in range(60):
        fact_put(namespace=world, subject="crowd", key=f"city_{i}", value=f"lives in city number {i}")
    for i in range(300):
        fact_put(namespace=world, subject=f"neighbour-{i}", key="city", value=f"lives in city number {i}")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE facts_factversion")
    nearest._COUNTS.clear()
    crowd = Scope(namespace_id=world.pk, subject="crowd", at=timezone.now())
    now = time.monotonic()
    # (each subject's graph holds its group's active versions: its own and some neighbours')
    crowd_graph, small_graph = (
        nearest._cached_graph_rows(crowd, now),
        nearest._cached_graph_rows(world_scope(world), now),
    )
    assert crowd_graph >= 60 and small_graph >= 4
    # when a walk pays from a weight between the two subjects' rows times their share of their graph
    crowd_weight, small_weight = 60 * min(1.0, 60 / crowd_graph), 4 * min(1.0, 4 / small_graph)
    assert crowd_weight > small_weight + 1
    settings.MEMORYPR_WALK_MIN_WEIGHTED_ROWS = int((crowd_weight + small_weight) / 2) + 1
    # then the large share is walked and the small one scanned
    assert _walks(crowd)
    assert not _walks(world_scope(world))
    # and the web role reads the graph's count as well
    nearest._COUNTS.clear()
    with as_app_role(namespaces=["world"]):
        assert _walks(crowd)
    # and with the rule off, both are scanned
    settings.MEMORYPR_WALK_MIN_WEIGHTED_ROWS = 0
    assert not _walks(crowd)


def test_categories_that_are_most_of_their_graph_are_walked_as_such_a_subject_is(world, settings):
    # given a subject below the exact-scan ceiling whose facts are all of one category, counted by
    # the statistics
    world_facts_put(
        world, **{f"drink.{n}": f"{kind} tea" for n, kind in enumerate(["green", "black", "mint", "oolong"])}
    )
    in_category = Scope(
        namespace_id=world.pk, subject="world", at=timezone.now(), categories=("domain_fact",)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE facts_factversion")
    nearest._COUNTS.clear()
    # when a walk pays from a weight that the category's rows times their share of the graph reach
    settings.MEMORYPR_WALK_MIN_WEIGHTED_ROWS = 1
    # then the category is walked, as the whole subject is
    assert _walks(world_scope(world))
    assert _walks(in_category)
    # and with a bar they do not reach, both are scanned
    settings.MEMORYPR_WALK_MIN_WEIGHTED_ROWS = 1000
    assert not _walks(world_scope(world))
    assert not _walks(in_category)
