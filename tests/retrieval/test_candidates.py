from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memorypr.agents.services import namespace_get_or_create
from memorypr.facts.models import EdgeType, FactEdge, FactStatus, FactVersion
from memorypr.retrieval.candidates import (
    KEY_ENTITY,
    KEY_WHOLE,
    ServableFact,
    candidates_collect,
    candidates_servable,
    full_text_candidates,
)
from memorypr.retrieval.common_words import common_words_forget
from memorypr.vectors import nearest
from memorypr.vectors.embedding import embed_text
from memorypr.vectors.nearest import Scope, vector_candidates
from memorypr.vectors.store import graph_group_sql
from tests.common.tenants import as_app_role
from tests.retrieval.factories import fact_put, world_facts_put, world_scope

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return namespace_get_or_create(name="world")


def test_full_text_weighs_a_word_in_the_key_over_the_same_word_in_a_value(world):
    # given: one fact has "language" in its key, a newer one only in its value
    facts = world_facts_put(
        world,
        **{"brazil.official_language": "Portuguese", "motto": "music is a universal language"},
    )
    # when
    hits = full_text_candidates(scope=world_scope(world), query="language", limit=5)
    # then
    assert [hit.fact_id for hit in hits] == [facts["brazil.official_language"].pk, facts["motto"].pk]
    assert hits[0].rank > hits[1].rank


def test_full_text_marks_how_much_of_each_key_the_query_names(world):
    # given
    facts = world_facts_put(
        world,
        **{
            "japan.official_language": "Japanese",
            "japan.capital": "Tokyo",
            "sumo.country_of_origin": "Japan",
        },
    )
    # when
    hits = full_text_candidates(
        scope=world_scope(world), query="What is the official language of Japan?", limit=5
    )
    # then
    named = {hit.fact_id: hit.key_named for hit in hits}
    assert named[facts["japan.official_language"].pk] == KEY_WHOLE
    assert named[facts["japan.capital"].pk] == KEY_ENTITY
    assert named[facts["sumo.country_of_origin"].pk] == 0


def test_exact_channel_holds_facts_whose_key_the_query_names_not_those_whose_value_it_names(world):
    # given: Japan is the entity of two facts and the value of two others
    facts = world_facts_put(
        world,
        **{
            "japan.official_language": "Japanese",
            "japan.capital": "Tokyo",
            "sumo.country_of_origin": "Japan",
            "ayumi_hamasaki.country_of_citizenship": "Japan",
        },
    )
    query = "What is the capital of Japan?"
    # when
    found = candidates_collect(scope=world_scope(world), query=query, embedding=embed_text(query), limit=10)
    # then: the whole key first, then the other fact about Japan
    assert found.exact == [facts["japan.capital"].pk, facts["japan.official_language"].pk]
    assert facts["sumo.country_of_origin"].pk in found.full_text  # the value's word still counts there


def test_exact_channel_orders_facts_about_the_same_entity_by_the_vector_channel(world):
    # given: the query names only the entity; which of its facts it asks about is semantic
    facts = world_facts_put(
        world,
        **{
            "tang_empire.capital": "Chang'an",
            "tang_empire.religion": "Buddhism",
            "tang_empire.continent": "Asia",
        },
    )
    query = "Which city was the seat of government of the Tang Empire?"
    # when
    found = candidates_collect(scope=world_scope(world), query=query, embedding=embed_text(query), limit=10)
    # then
    assert set(found.exact) == {fact.pk for fact in facts.values()}
    by_similarity = sorted(found.exact, key=lambda i: -found.similarity[i])
    assert found.exact == by_similarity


def test_exact_channel_names_chinese_entities_by_their_segmented_words(world):
    # given
    facts = world_facts_put(world, **{"日本.官方语言": "日语", "日本.首都": "东京", "相扑.起源国家": "日本"})
    query = "日本的官方语言是什么？"
    # when
    found = candidates_collect(scope=world_scope(world), query=query, embedding=embed_text(query), limit=10)
    # then
    assert found.exact == [facts["日本.官方语言"].pk, facts["日本.首都"].pk]


def test_exact_channel_takes_the_longest_name_the_query_names(world):
    # given: "Windows Server 2008" names windows_server_2008; windows_server is only a part of it
    facts = world_facts_put(
        world, **{"windows_server.developer": "Microsoft", "windows_server_2008.developer": "BlackBerry"}
    )
    query = "Who is the developer of Windows Server 2008?"
    # when
    found = candidates_collect(scope=world_scope(world), query=query, embedding=embed_text(query), limit=10)
    # then
    assert found.exact == [facts["windows_server_2008.developer"].pk]
    assert facts["windows_server.developer"].pk in found.full_text  # its words still count there


def _text_matches(namespace) -> list[int]:  # type: ignore[no-untyped-def]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM fact_text_matches(%s, 'world', to_tsquery('simple', 'portuguese'), now(), false, NULL, 10)",
            [namespace.pk],
        )
        return [row[0] for row in cursor.fetchall()]


def test_the_text_match_answers_the_web_role_only_within_its_scope(world):
    # given facts in two namespaces, the same word in each
    other = namespace_get_or_create(name="elsewhere")
    mine = world_facts_put(world, **{"brazil.official_language": "Portuguese"})
    fact_put(
        namespace=other, subject="world", category="domain_fact", key="portugal.language", value="Portuguese"
    )
    # then the web role scoped to one namespace finds its own match and nothing in the other
    with as_app_role(namespaces=["world"]):
        assert _text_matches(world) == [mine["brazil.official_language"].pk]
        assert _text_matches(other) == []
    # and with no scope, nothing at all
    with as_app_role(namespaces=[]):
        assert _text_matches(world) == []
    # while the owner (the worker, commands) finds either
    assert len(_text_matches(other)) == 1


def test_full_text_through_the_web_role_finds_what_the_owner_finds(world):
    # given facts whose words match the query
    world_facts_put(
        world, **{"brazil.official_language": "Portuguese", "motto": "music is a universal language"}
    )
    as_owner = [
        hit.fact_id
        for hit in full_text_candidates(scope=world_scope(world), query="official language", limit=10)
    ]
    # when the web role, scoped to the namespace, asks the same
    with as_app_role(namespaces=["world"]):
        as_web = [
            hit.fact_id
            for hit in full_text_candidates(scope=world_scope(world), query="official language", limit=10)
        ]
    # then it finds the same facts in the same order
    assert as_web == as_owner and len(as_owner) == 2


def test_the_text_match_answers_within_the_subject_as_of_now_and_in_the_past(world):
    # given the same word in two subjects of one namespace, and a retired version in one
    earlier = timezone.now() - timedelta(days=2)
    retired = fact_put(
        namespace=world, subject="world", category="domain_fact", key="brazil.capital",
        value="Rio de Janeiro, portuguese spoken", version=1, status=FactStatus.SUPERSEDED,
        created_at=earlier, retired_at=earlier + timedelta(days=1),
    )  # fmt: skip
    current = world_facts_put(world, **{"brazil.official_language": "Portuguese"})["brazil.official_language"]
    fact_put(
        namespace=world, subject="mars", category="domain_fact", key="rover.language", value="Portuguese"
    )
    # when the match asks now, and as of the day the retired version was alive
    with connection.cursor() as cursor:
        sql = "SELECT id FROM fact_text_matches(%s, 'world', to_tsquery('simple', 'portuguese'), %s, %s, NULL, 10)"
        cursor.execute(sql, [world.pk, timezone.now(), False])
        now = {row[0] for row in cursor.fetchall()}
        cursor.execute(sql, [world.pk, earlier + timedelta(hours=12), True])
        then = {row[0] for row in cursor.fetchall()}
    # then each finds the subject's version alive at that moment, never the other subject's
    assert now == {current.pk}
    assert then == {retired.pk}


def test_servable_candidates_carry_their_scoring_columns_and_leave_out_those_on_a_retired_basis(world):
    # given a fact never accessed, one accessed yesterday, and a conclusion resting on a retired fact
    facts = world_facts_put(world, never="a", touched="b")
    accessed = timezone.now() - timedelta(days=1)
    FactVersion.objects.filter(pk=facts["touched"].pk).update(last_accessed_at=accessed, importance=0.9)
    basis = fact_put(namespace=world, subject="world", key="basis", value="c", status=FactStatus.SUPERSEDED)
    derived = fact_put(namespace=world, subject="world", category="derived", key="policy", value="d")
    FactEdge.objects.create(source=derived, target=basis, edge_type=EdgeType.DERIVED_FROM)
    ids = [facts["never"].pk, facts["touched"].pk, derived.pk]
    # when
    servable = candidates_servable(fact_ids=ids, scope=world_scope(world))
    # then
    assert set(servable) == {facts["never"].pk, facts["touched"].pk}
    assert servable[facts["never"].pk].last_touched == facts["never"].created_at
    assert servable[facts["touched"].pk] == ServableFact(
        confidence=0.9, importance=0.9, last_touched=accessed
    )


def test_collect_reads_the_scoring_columns_of_what_it_found_and_leaves_out_what_rests_on_a_retired_basis(
    world,
):
    # given facts a query finds by its words, one accessed yesterday, and a conclusion on a retired basis
    facts = world_facts_put(
        world, **{"coffee.origin": "Ethiopia", "coffee.roast": "dark coffee", "tea.origin": "China"}
    )
    accessed = timezone.now() - timedelta(days=1)
    FactVersion.objects.filter(pk=facts["coffee.roast"].pk).update(last_accessed_at=accessed, importance=0.9)
    basis = fact_put(
        namespace=world, subject="world", key="coffee.basis", value="old", status=FactStatus.SUPERSEDED
    )
    derived = fact_put(
        namespace=world, subject="world", category="derived", key="coffee.policy", value="coffee"
    )
    FactEdge.objects.create(source=derived, target=basis, edge_type=EdgeType.DERIVED_FROM)
    query = "Where does coffee come from?"
    # when the channels are collected
    found = candidates_collect(scope=world_scope(world), query=query, embedding=embed_text(query), limit=10)
    # then every candidate but the conclusion carries what the separate read would return for it
    assert derived.pk in found.ids() and derived.pk not in found.servable
    alone = candidates_servable(fact_ids=sorted(found.ids()), scope=world_scope(world))
    assert {i: found.servable[i] for i in alone} == alone
    assert set(alone) == found.ids() - {derived.pk}
    assert found.servable[facts["coffee.roast"].pk] == ServableFact(
        confidence=0.9, importance=0.9, last_touched=accessed
    )


def _collected(world, query, *, limit):
    return candidates_collect(scope=world_scope(world), query=query, embedding=embed_text(query), limit=limit)


def test_the_rows_of_a_walk_are_ranked_by_a_whole_sort_not_by_the_index_order(world, settings):
    # given a subject searched through the HNSW index
    world_facts_put(world, **{"drink.0": "green tea", "drink.1": "black coffee"})
    settings.MEMORYPR_EXACT_SEARCH_MAX_ROWS = 0
    # when the channels are collected in one statement
    with CaptureQueriesContext(connection) as queries:
        found = _collected(world, "tea please", limit=5)
    [statement] = [q["sql"] for q in queries.captured_queries if "v_near" in q["sql"]]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + statement)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    # then the vector channel's ranks come from sorting the walk's rows (fact_nearest(): the HNSW
    # index) as a whole: relaxed order returns them slightly out of order, and an incremental sort
    # would take that order for exact
    assert "Function Scan on fact_nearest" in plan, plan
    assert "Sort Key: ((v_near.distance + '0'::double precision))" in plan and "Presorted Key" not in plan, (
        plan
    )
    similarities = [found.similarity[i] for i in found.vector]
    assert similarities == sorted(similarities, reverse=True)


def test_in_a_large_subject_the_any_word_phase_ranks_only_the_nearest_rows(world, settings):
    # given drinks near the query in meaning, and a far fact that shares only the number with it
    kinds = ["green", "black", "jasmine", "mint", "oolong", "chai"]
    near = world_facts_put(world, **{f"drink.{n}": f"{kind} tea" for n, kind in enumerate(kinds)})
    far = fact_put(
        namespace=world, subject="world", category="domain_fact", key="castle.built", value="in 1583"
    )
    query = "tea 1583"
    # when the subject counts as small (searched exactly), and no fact holds both words
    small = _collected(world, query, limit=3)
    # then the any-word phase searches the whole subject, beyond the three nearest rows
    assert far.pk not in small.vector
    assert far.pk in small.full_text
    # when the subject counts as large (HNSW)
    settings.MEMORYPR_EXACT_SEARCH_MAX_ROWS = 0
    large = _collected(world, query, limit=3)
    # then the any-word phase ranks only the rows the vector channel found
    assert set(large.vector) <= {fact.pk for fact in near.values()}
    assert large.vector and set(large.full_text) == set(large.vector)
    # and the web role, under row-level security, ranks the same rows
    with as_app_role(namespaces=["world"]):
        assert _collected(world, query, limit=3).full_text == large.full_text
    # and a one-word query, whose only phase is the all-words phase, still searches the whole subject
    assert far.pk in _collected(world, "1583", limit=1).full_text


def test_a_query_of_words_common_in_a_large_subject_ranks_them_among_the_nearest_rows(world, settings):
    # given a large subject (HNSW) where far facts holding "tea" were written first, so that a
    # search of the whole subject finds them first (and, "tea" being in their keys, ranks them
    # over the nearest rows that match too), then drinks near the query
    far = [
        fact_put(namespace=world, subject="world", category="domain_fact", key=f"tea_ledger.{n}",
                 value=f"the {n}th tax on imported tea was repealed in {1700 + n}")
        for n in range(4)
    ]  # fmt: skip
    near = world_facts_put(
        world, **{f"drink.{n}": f"{kind} tea" for n, kind in enumerate(("green", "black"))}
    )
    settings.MEMORYPR_EXACT_SEARCH_MAX_ROWS = 0
    settings.MEMORYPR_FTS_MAX_MATCHES = 3
    common_words_forget()
    # when the subject's statistics are not gathered yet: "tea" is not known to be common
    before = _collected(world, "tea", limit=2)
    # then the one-word phase searches the whole subject and ranks facts the vector channel did not find
    assert set(before.vector) == {fact.pk for fact in near.values()}
    assert set(before.full_text) - set(before.vector) <= {fact.pk for fact in far}
    assert set(before.full_text) - set(before.vector)
    # when the statistics say that more facts of the subject hold "tea" than a phase ranks
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE facts_factversion")
    common_words_forget()
    after = _collected(world, "tea", limit=2)
    # then the phase ranks the vector channel's rows only
    assert set(after.vector) == set(before.vector)
    assert set(after.full_text) == set(after.vector)
    # and the web role, under row-level security, ranks the same rows
    common_words_forget()
    with as_app_role(namespaces=["world"]):
        assert _collected(world, "tea", limit=2).full_text == after.full_text
    # and a query with a word that is not common still searches the whole subject
    assert far[1].pk in _collected(world, "tea 1701", limit=2).full_text


def test_a_possessive_question_finds_all_its_words_beyond_the_nearest_rows(world, settings):
    # given a large subject (HNSW), dishes near the question in meaning, and a far fact that
    # holds every word the question names
    dishes = ["ramen", "pad thai", "lasagne", "paella", "sushi", "pho"]
    world_facts_put(
        world,
        **{
            f"user.favourite_meal_{n}": f"the user's favourite meal is {dish}"
            for n, dish in enumerate(dishes)
        },
    )
    far = fact_put(
        namespace=world, subject="world", category="domain_fact", key="ship.log",
        value="the cargo hold was sealed; favorite of the crew, the food store, flooded at dawn",
    )  # fmt: skip
    settings.MEMORYPR_EXACT_SEARCH_MAX_ROWS = 0
    # when a question says "user's" and "what's", whose apostrophes split off "s"
    found = _collected(world, "What's the user's favorite food?", limit=2)
    # then the all-words phase, which searches the whole subject, finds the fact
    assert far.pk not in found.vector
    assert far.pk in found.full_text


def _prepared_nearest_scans() -> dict[str, int]:
    """Prepared statements of this connection that search the nearest rows, by kind of scan."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE statement LIKE '%%v_near%%'")
        statements = [row[0] for row in cursor.fetchall()]
    exact = sum("::vector) + 0" in statement for statement in statements)
    return {"exact": exact, "index": len(statements) - exact}


def _nearest_scan_plans(*, exact: bool) -> dict[str, int]:
    kind = "LIKE" if exact else "NOT LIKE"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
            f" WHERE statement LIKE '%%v_near%%' AND statement {kind} '%%::vector) + 0%%'"
        )
        generic, custom = cursor.fetchone()
    return {"generic": int(generic), "custom": int(custom)}


def test_the_nearest_rows_statement_is_prepared_on_its_connection_for_a_scan_and_a_walk_alike(
    world, settings
):
    # given a small subject, and a connection that prepares what it runs twice
    world_facts_put(world, **{"drink.0": "green tea", "drink.1": "black coffee"})
    connection.ensure_connection()
    threshold = connection.connection.prepare_threshold
    connection.connection.prepare_threshold = 1
    # (PostgreSQL plans a prepared statement for its values five times before it chooses)
    runs = 1 + 5 + 4
    try:
        # when the same retrieval runs several times on a small subject
        for _ in range(runs):
            assert _collected(world, "tea please", limit=5).vector
        # then its exact scan is prepared: parsed once, and planned for its values no more than
        # until PostgreSQL chose (by itself, or asked for the generic plan after its choice)
        assert _prepared_nearest_scans() == {"exact": 1, "index": 0}
        assert _planned_once_chosen(_nearest_scan_plans(exact=True), runs=runs)
        # when the subject counts as large, so the search walks the HNSW index (fact_nearest())
        settings.MEMORYPR_EXACT_SEARCH_MAX_ROWS = 0
        for _ in range(runs):
            assert _collected(world, "tea please", limit=5).vector
    finally:
        connection.connection.prepare_threshold = threshold
    # then that statement is prepared and planned once too: the walk's plan is the same for every subject
    assert _prepared_nearest_scans() == {"exact": 1, "index": 1}
    assert _planned_once_chosen(_nearest_scan_plans(exact=False), runs=runs)


def _planned_once_chosen(plans: dict[str, int], *, runs: int) -> bool:
    """Whether a statement prepared at its second run was planned for its values at most six
    times (PostgreSQL's five, and its choice; none if this connection already knew to ask for the
    generic plan) and ran its generic plan every time since."""
    return plans["custom"] <= 6 and plans["generic"] + plans["custom"] == runs - 1


def _graph_group(namespace, subject: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT " + graph_group_sql(namespace="%(ns)s::bigint", subject="%(subject)s::text"),
            {"ns": namespace.pk, "subject": subject},
        )
        return int(cursor.fetchone()[0])


def _subject_beside(namespace, other: str, *, same_graph: bool) -> str:
    """A subject name whose graph is (or is not) the graph of `other`."""
    group = _graph_group(namespace, other)
    return next(
        name
        for name in (f"user-{n}" for n in range(1000))
        if (_graph_group(namespace, name) == group) == same_graph and name != other
    )


@pytest.mark.parametrize("same_graph", [True, False])
def test_a_walk_of_the_index_that_falls_short_is_done_again_exactly(world, settings, same_graph):
    # given a subject of three facts beside a crowd of facts nearer to the query, in its graph or another
    crowd = [
        fact_put(namespace=world, subject="crowd", key=f"city_{i}", value=f"lives in city number {i}")
        for i in range(60)
    ]
    subject = _subject_beside(world, "crowd", same_graph=same_graph)
    mine = [
        fact_put(namespace=world, subject=subject, key=f"bike.{n}", value=f"owns {n} bicycles")
        for n in range(3)
    ]
    query = "which city does the user live in"
    # when the walk is forced, and ends early (no iterative scan, one candidate): with the crowd's
    # nearest rows where the subject shares their graph, with one of its own where it does not
    settings.MEMORYPR_EXACT_SEARCH_MAX_ROWS = 0
    settings.MEMORYPR_HNSW_ITERATIVE_SCAN = "off"
    settings.MEMORYPR_HNSW_EF_SEARCH = 1
    nearest._COUNTS.clear()
    scope = Scope(namespace_id=world.pk, subject=subject, at=timezone.now())
    walked = vector_candidates(scope=scope, embedding=embed_text(query), limit=3)
    collected = candidates_collect(scope=scope, query=query, embedding=embed_text(query), limit=3)
    # then the exact scan finds every fact of the subject, and none of the crowd
    assert sorted(i for i, _ in walked) == sorted(f.pk for f in mine)
    assert sorted(collected.vector) == sorted(f.pk for f in mine)
    assert not {f.pk for f in crowd} & set(collected.vector)


@contextmanager
def _statements_holding(marker: str) -> Iterator[list[tuple[str, dict]]]:
    """The (sql, params) of each statement run in the block whose text holds `marker`."""
    captured: list[tuple[str, dict]] = []

    def capture(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        if marker in sql:
            captured.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture):
        yield captured


def _explain_generic(sql: str, params: dict, *, verbose: bool = False) -> str:
    """EXPLAIN ANALYZE of a statement under a generic plan, the one its prepared form keeps
    (VERBOSE: with what each node computes for its rows)."""
    import psycopg
    from psycopg._queries import PostgresQuery

    raw = connection.connection
    query = PostgresQuery(psycopg.adapt.Transformer(raw))
    query.convert(sql, params)
    names = query._order or []  # the named parameters, in the order of $1, $2, ...
    with raw.cursor() as cursor:
        cursor.execute("PREPARE collect_generic AS " + query.query.decode())
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
    try:
        with psycopg.ClientCursor(raw) as cursor:
            placeholders = ", ".join(["%s"] * len(names))
            cursor.execute(
                f"EXPLAIN (ANALYZE{', VERBOSE' if verbose else ''}) EXECUTE collect_generic({placeholders})",
                [params[n] for n in names],
            )
            return "\n".join(row[0] for row in cursor.fetchall())
    finally:
        with raw.cursor() as cursor:
            cursor.execute("DEALLOCATE collect_generic")


def test_keys_named_by_a_query_are_looked_up_one_by_one_in_the_key_index_whatever_the_statistics(world):
    # given a store whose facts share a few keys across many subjects, its statistics fresh
    now = timezone.now()
    FactVersion.objects.bulk_create(
        [FactVersion(namespace=world, subject=f"user-{s}", category="user_profile", key=f"k{k}", value="x",
                     version=1, confidence=0.9, created_at=now)
         for s in range(400) for k in range(8)],
        batch_size=500,
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE facts_factversion")
    scope = Scope(namespace_id=world.pk, subject="user-1", at=now)
    # when the retrieval statement that names a key is planned once for all values
    with _statements_holding("k_hits") as captured:
        found = candidates_collect(scope=scope, query="what is k3", embedding=embed_text("k3"), limit=5)
    [(sql, params)] = captured
    plan = _explain_generic(sql, params)
    # then the keys are looked up through the key index, one lookup per key, not by reading the subject
    k_hits = plan[plan.index("CTE k_hits") :]
    k_hits = k_hits[: k_hits.index("CTE ", 5)] if "CTE " in k_hits[5:] else k_hits
    assert "Index Scan using fact_ns_subject_key" in k_hits, plan
    assert "(key)::text = k.key" in k_hits, plan
    # and the fact the query names is the exact channel's hit
    assert found.exact[:1] == [FactVersion.objects.get(subject="user-1", key="k3").pk]


@pytest.mark.parametrize("exact", [True, False], ids=["scan", "walk"])
def test_each_phase_parses_its_words_once_per_statement_not_once_per_row(world, exact):
    # given a subject whose facts share the query's words
    world_facts_put(
        world, **{f"drink.{n}": f"{kind} green tea" for n, kind in enumerate(["hot", "iced", "sweet"])}
    )
    scope = world_scope(world)
    # when the statement of a query of several words (an all-words and an any-word phase) runs
    with _statements_holding("t_any_matched") as captured:
        found = candidates_collect(
            scope=scope, query="green tea please", embedding=embed_text("green tea"), limit=3, exact=exact
        )
    plan = _explain_generic(*captured[0], verbose=True)
    # then, under the generic plan it keeps, no row's match or ranking parses a tsquery: each
    # phase's is made once, by an InitPlan (whose own output is the one call of to_tsquery)
    lines = [line for line in plan.splitlines() if line.strip().startswith(("Filter", "Output"))]
    per_row = [line for line in lines if "@@" in line or "ts_rank(" in line]
    assert per_row and not [line for line in per_row if "to_tsquery" in line], plan
    assert all("(InitPlan" in line for line in per_row), plan
    # and the words still find the facts
    assert len(found.full_text) == 3


def test_the_check_for_a_retired_basis_reads_derived_from_edges_only_not_the_updates_edges(world):
    # given a store where 2,000 facts were each updated once (an UPDATES edge apiece), a subject
    # with a conclusion resting on a retired fact, and fresh statistics
    now = timezone.now()
    old, new = (
        FactVersion.objects.bulk_create(
            [FactVersion(namespace=world, subject="others", category="user_profile", key=f"k{k}", value="x",
                         version=version, status=status, confidence=0.9, created_at=now,
                         retired_at=now if status == FactStatus.SUPERSEDED else None)
             for k in range(2000)],
            batch_size=500,
        )
        for version, status in ((1, FactStatus.SUPERSEDED), (2, FactStatus.ACTIVE))
    )  # fmt: skip
    FactEdge.objects.bulk_create(
        [FactEdge(source=n, target=o, edge_type=EdgeType.UPDATES) for n, o in zip(new, old, strict=True)],
        batch_size=500,
    )
    world_facts_put(world, **{"drink.morning": "coffee", "drink.evening": "tea"})
    basis = fact_put(namespace=world, subject="world", key="basis", value="old", status=FactStatus.SUPERSEDED)
    derived = fact_put(
        namespace=world, subject="world", category="derived", key="drink.policy", value="coffee"
    )
    FactEdge.objects.create(source=derived, target=basis, edge_type=EdgeType.DERIVED_FROM)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE facts_factedge")
    # when the channels are collected
    with _statements_holding("v_near") as captured:
        found = _collected(world, "coffee", limit=10)
    [(sql, params)] = captured
    plan = _explain_generic(sql, params)
    # then the conclusion is left out, and the edges are read through the index of DERIVED_FROM edges alone
    assert derived.pk in found.ids() and derived.pk not in found.servable
    reads = [line for line in plan.splitlines() if " on facts_factedge " in line]
    assert reads and all("using fact_edge_derived_source" in line for line in reads), plan


def test_a_capped_text_phase_still_ranks_the_nearest_rows_that_match(world, settings):
    # given a small subject where a common word ("country") matches more rows than a phase ranks,
    # and the fact whose key names the question's entity was stored after them (found last)
    settings.MEMORYPR_FTS_MAX_MATCHES = 3
    world_facts_put(
        world,
        **{f"{genre}.country_of_origin": country for genre, country in _GENRES},
    )
    heartland = world_facts_put(world, **{"heartland_rock.country_of_origin": "Scotland"})[
        "heartland_rock.country_of_origin"
    ]
    question = "Which country was heartland rock created in?"
    # when the channels are collected (no fact holds every word: the any-word phase runs, capped)
    found = _collected(world, question, limit=5)
    # then the fact is among the nearest rows, so the capped phase ranks it too: it is the
    # text channel's first, and the exact channel's entity hit
    assert heartland.pk in found.vector
    assert found.full_text[0] == heartland.pk
    assert found.exact == [heartland.pk]
    # while the whole-subject phase alone (no nearest rows to add) stopped at the cap without it
    alone = full_text_candidates(scope=world_scope(world), query=question, limit=5)
    assert heartland.pk not in [hit.fact_id for hit in alone]


_GENRES = [
    ("jazz", "United States of America"),
    ("bossa_nova", "Brazil"),
    ("flamenco", "Spain"),
    ("fado", "Portugal"),
    ("tango", "Argentina"),
    ("k_pop", "South Korea"),
]
