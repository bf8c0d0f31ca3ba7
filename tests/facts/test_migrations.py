from __future__ import annotations

import importlib
import re

import numpy
import pytest
from django.db import connection

from memorypr.facts.models import FactStatus, FactVersion
from memorypr.vectors.embedding import embed_texts
from memorypr.vectors.store import GRAPH_GROUPS, vector_index_options, vector_literal
from tests.retrieval.factories import fact_put

pytestmark = pytest.mark.django_db

migration = importlib.import_module("memorypr.facts.migrations.0014_hnsw_graph_per_subject_group")


def test_migrate_builds_the_hnsw_graphs_with_the_configured_parameters(settings):
    # given settings that differ from the declared m=16, ef_construction=64
    settings.MEMORYPR_HNSW_M = 24
    settings.MEMORYPR_HNSW_EF_CONSTRUCTION = 100
    # when the migration step runs
    with connection.schema_editor() as editor:
        migration.graphs_per_group(None, editor)
    # then every group's graph has them
    assert _graph_options() == [["m=24", "ef_construction=100"]] * GRAPH_GROUPS


def _graph_options() -> list[list[str]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reloptions FROM pg_class WHERE relname LIKE 'fact_embedding_hnsw_%%' ORDER BY relname"
        )
        return [list(row[0]) for row in cursor.fetchall()]


def test_migrate_keeps_the_declared_graphs_at_the_defaults():
    before = vector_index_options()
    with connection.schema_editor() as editor:
        migration.graphs_per_group(None, editor)
    assert vector_index_options() == before == {"m": "16", "ef_construction": "64"}


def _scoped_ids(namespace, *, historical: bool) -> set[int]:
    """The ids the full-text index answers for the subject's scope (through the index: no seq scan)."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(
            """SELECT id FROM facts_factversion
               WHERE memorypr_scoped_document(search_vector, namespace_id, subject, status)
                     @@ memorypr_scoped_query(to_tsquery('simple', 'tea'), %s, 'user-1', %s)""",
            [namespace.pk, historical],
        )
        return {row[0] for row in cursor.fetchall()}


def test_the_text_index_holds_the_subject_scope_of_active_versions_and_history_apart(namespace):
    # given a key with two retired versions and its active one, all holding the word "tea"
    retired = [
        fact_put(namespace=namespace, key="drink", value=f"{kind} tea", version=version, status=status)
        for version, kind, status in [(1, "green", FactStatus.SUPERSEDED), (2, "black", FactStatus.RETRACTED)]
    ]
    active = fact_put(namespace=namespace, key="drink", value="mint tea", version=3)
    # when the index is asked for what is true now, and for history
    now, history = _scoped_ids(namespace, historical=False), _scoped_ids(namespace, historical=True)
    # then now holds the active version alone, and history every version
    assert now == {active.pk}
    assert history == {active.pk, *(fact.pk for fact in retired)}
    # and when the active version is retired it leaves the scope of now
    FactVersion.objects.filter(pk=active.pk).update(status=FactStatus.SUPERSEDED)
    assert _scoped_ids(namespace, historical=False) == set()


def _scoped_query(query: str, *, historical: bool) -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT memorypr_scoped_query(to_tsquery('simple', %s), 7, 'user-1', %s)::text, md5('7§user-1')",
            [query, historical],
        )
        scoped, digest = cursor.fetchone()
    return scoped.replace(digest[:8], "S")


def test_a_query_keeps_its_operators_prefixes_and_weights_when_scoped():
    # when a query with AND, OR, NOT, a phrase, a prefix and weights is scoped to the subject
    now = _scoped_query("fre:* & (tea | 'o''brien') & !milk & green <-> tea & leaf:AB", historical=False)
    # then each lexeme is the subject's, and nothing else changed
    assert now == (
        "'S§fre':* & ( 'S§tea' | 'S§o' <-> 'S§brien' ) & !'S§milk' & 'S§green' <-> 'S§tea' & 'S§leaf':AB"
    )
    # and history asks for the active or the retired version of each
    assert _scoped_query("fre:* & tea", historical=True) == (
        "( 'S§fre':* | 'S§r§fre':* ) & ( 'S§tea' | 'S§r§tea' )"
    )


def test_a_word_of_another_subject_is_no_match(namespace):
    # given the same word in two subjects of the namespace
    mine = fact_put(namespace=namespace, subject="user-1", key="drink", value="mint tea")
    fact_put(namespace=namespace, subject="user-2", key="drink", value="mint tea")
    # when the index is asked for the word within one subject
    # then it answers that subject's version alone
    assert _scoped_ids(namespace, historical=False) == {mine.pk}


def test_the_text_index_is_the_one_the_match_asks():
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_indexdef('fact_scoped_search_gin'::regclass)")
        (definition,) = cursor.fetchone()
        cursor.execute("SELECT prosrc FROM pg_proc WHERE proname = 'fact_text_matches'")
        (body,) = cursor.fetchone()
    assert "memorypr_scoped_document(search_vector, namespace_id, subject, status)" in definition
    assert "memorypr_scoped_document(f.search_vector, f.namespace_id, f.subject, f.status)" in body


_MATCH_PARAMETERS = (
    "p_namespace_id",
    "p_subject",
    "p_query",
    "p_at",
    "p_historical",
    "p_categories",
    "p_limit",
)


def test_the_text_match_is_planned_once_and_that_plan_reads_the_scoped_index(namespace):
    # given the statement inside fact_text_matches(), prepared with its parameters as the function has them
    fact_put(namespace=namespace, subject="world", key="brazil.official_language", value="Portuguese")
    with connection.cursor() as cursor:
        cursor.execute("SELECT prosrc, proconfig FROM pg_proc WHERE proname = 'fact_text_matches'")
        body, config = cursor.fetchone()
        statement = body
        for position, name in enumerate(_MATCH_PARAMETERS, start=1):
            statement = re.sub(rf"\b{name}\b", f"${position}", statement)
        cursor.execute(
            "PREPARE text_match (bigint, varchar, tsquery, timestamptz, boolean, varchar[], integer) AS "
            + statement
        )
        # when it is planned once for any values, as the function's setting has it, over a table
        # too large to read whole (these few rows would be read whole: cheaper than any index)
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        cursor.execute("SET LOCAL enable_seqscan = off")
        plans = {}
        for historical in ("false", "true"):
            cursor.execute(
                f"EXPLAIN EXECUTE text_match({namespace.pk}, 'world', to_tsquery('simple', 'portuguese'),"
                f" now(), {historical}, NULL, 10)"
            )
            plans[historical] = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("DEALLOCATE text_match")
    # then the function keeps one plan, and that plan goes through the scoped GIN index, now and in history
    assert "plan_cache_mode=force_generic_plan" in config
    assert all("fact_scoped_search_gin" in plan for plan in plans.values()), plans


kept_in_row = importlib.import_module("memorypr.facts.migrations.0011_embedding_kept_in_the_row")

# A value of a few sentences: with its search text and vector, the row passes PostgreSQL's 2 kB
# threshold for moving values out of it.
LONG_VALUE = (
    "Spends every August on a walking tour of the Scottish Highlands with her sister, staying in"
    " small guest houses, carrying a paper map, and she wants a quiet room that looks at the hills"
    " because she sleeps badly in cities and always brings her own tea"
)


def _embedding_out_of_line(fact_id: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_column_toast_chunk_id(embedding) IS NOT NULL FROM facts_factversion WHERE id = %s",
            [fact_id],
        )
        (out_of_line,) = cursor.fetchone()
    return bool(out_of_line)


def _embedding_storage(storage: str) -> None:
    with connection.cursor() as cursor:
        # The deferred checks of the rows written so far run now: ALTER TABLE refuses to leave them pending.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(f"ALTER TABLE facts_factversion ALTER COLUMN embedding SET STORAGE {storage}")


def test_a_long_fact_keeps_its_embedding_in_its_row(namespace):
    # given a fact whose value runs to a few sentences
    fact = fact_put(namespace=namespace, key="summer_travel", value=LONG_VALUE)
    # then its embedding is stored in the row, where a distance reads it without a second lookup
    assert not _embedding_out_of_line(fact.pk)
    # while the same row written under pgvector's own storage would have moved it out
    _embedding_storage("EXTERNAL")
    written_before = fact_put(namespace=namespace, key="summer_travel_again", value=LONG_VALUE)
    _embedding_storage("MAIN")
    assert _embedding_out_of_line(written_before.pk)


def test_the_migration_moves_embeddings_stored_out_of_line_into_their_rows(namespace):
    # given a long fact and a short one written under pgvector's own storage, and a long one since
    _embedding_storage("EXTERNAL")
    long_before = fact_put(namespace=namespace, key="summer_travel", value=LONG_VALUE)
    short_before = fact_put(namespace=namespace, key="drink", value="tea")
    _embedding_storage("MAIN")
    long_since = fact_put(namespace=namespace, key="winter_travel", value=LONG_VALUE)
    assert [_embedding_out_of_line(f.pk) for f in (long_before, short_before, long_since)] == [
        True,
        False,
        False,
    ]
    stored_before = list(FactVersion.objects.get(pk=long_before.pk).embedding)
    # when the migration's rewrite runs
    with connection.schema_editor() as editor:
        moved = kept_in_row.embeddings_moved_into_rows(None, editor)
    # then the one embedding out of line is back in its row, with the same values
    assert moved == 1
    assert not _embedding_out_of_line(long_before.pk)
    assert list(FactVersion.objects.get(pk=long_before.pk).embedding) == stored_before
    # and a second run finds nothing left to move
    with connection.schema_editor() as editor:
        assert kept_in_row.embeddings_moved_into_rows(None, editor) == 0


def _index_scans() -> dict[str, int]:
    """The scans of each index of the fact table in this transaction, and its sequential scans."""
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT c.relname, pg_stat_get_xact_numscans(c.oid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
               WHERE i.indrelid = 'facts_factversion'::regclass
               UNION ALL SELECT 'sequential', pg_stat_get_xact_numscans('facts_factversion'::regclass)"""
        )
        return {str(name): int(scans) for name, scans in cursor.fetchall()}


def test_the_walk_is_planned_once_and_walks_the_graph_of_the_subjects_group_only(namespace):
    # given many small subjects, where a plan made for any subject would rather read one
    # subject's rows through its btree index and sort them
    vectors = numpy.random.default_rng(5).normal(size=(2000, 384)).astype(numpy.float32)
    vectors /= numpy.linalg.norm(vectors, axis=1, keepdims=True)
    FactVersion.objects.bulk_create(
        FactVersion(namespace=namespace, subject=f"user-{i % 400}", category="domain_fact",
                    key=f"filler_{i}", value=i, version=1, confidence=0.9, embedding=vector.tolist())
        for i, vector in enumerate(vectors)
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE facts_factversion")
        cursor.execute("SELECT proconfig FROM pg_proc WHERE proname = 'fact_nearest'")
        (config,) = cursor.fetchone()
    for subject in ("user-7", "user-8", "user-7"):
        with connection.cursor() as cursor:
            cursor.execute("SELECT hashtextextended(%s, %s) & 15", [subject, namespace.pk])
            (group,) = cursor.fetchone()
        before = _index_scans()
        # when a subject's nearest rows are asked for, with the search settings retrieval uses
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            cursor.execute(
                "SELECT id FROM fact_nearest(%s, %s, %s::vector, now(), NULL, 50)",
                [namespace.pk, subject, vector_literal(vectors[7].tolist())],
            )
            assert len(cursor.fetchall()) == 5
        scanned = {name for name, scans in _index_scans().items() if scans > before.get(name, 0)}
        # then the walk went through its group's HNSW graph alone: no other graph, btree or sequential scan
        assert scanned == {f"fact_embedding_hnsw_{group}"}, scanned
    # and the function keeps one generic plan per walk, with neither sequential scans nor sorts
    assert {"plan_cache_mode=force_generic_plan", "enable_sort=off", "enable_seqscan=off"} <= set(config)
    assert {f"fact_embedding_hnsw_{n}" for n in range(GRAPH_GROUPS)} <= set(_index_scans())


def test_the_walk_returns_the_nearest_live_rows_of_the_subject(namespace):
    # given three facts of a subject, one retired, and one of another subject
    near = fact_put(namespace=namespace, key="pet", value="a cat named Tom")
    far = fact_put(namespace=namespace, key="employer", value="a bank in Lyon")
    fact_put(namespace=namespace, key="old_pet", value="a cat named Tim", status=FactStatus.SUPERSEDED)
    fact_put(namespace=namespace, subject="user-2", key="pet", value="a cat named Tom")
    [query] = embed_texts(["Which cat does the user have?"])
    # when the walk is asked for the subject's nearest rows, with the search settings retrieval uses
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute(
            "SELECT id, distance FROM fact_nearest(%s, 'user-1', %s::vector, now(), NULL, 10)",
            [namespace.pk, vector_literal(list(query))],
        )
        rows = cursor.fetchall()
    # then it finds the live ones alone, nearest first
    assert [row[0] for row in rows] == [near.pk, far.pk]
    assert rows[0][1] < rows[1][1]


def test_the_walk_hands_over_what_retrieval_reads_of_its_rows(namespace):
    # given a fact read before and one never read
    accessed = fact_put(namespace=namespace, key="pet", value="a cat named Tom", importance=0.8)
    FactVersion.objects.filter(pk=accessed.pk).update(last_accessed_at=accessed.created_at.replace(year=2031))
    never = fact_put(namespace=namespace, key="employer", value="a bank in Lyon", confidence=0.6)
    [query] = embed_texts(["Which cat does the user have?"])
    # when the walk is asked for the subject's nearest rows
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute(
            """SELECT id, key, search_vector::text, confidence, importance, last_touched
               FROM fact_nearest(%s, 'user-1', %s::vector, now(), NULL, 10)""",
            [namespace.pk, vector_literal(list(query))],
        )
        rows = {row[0]: row[1:] for row in cursor.fetchall()}
    # then each row comes with its key, its document and its scoring columns, as stored
    for fact in (accessed, never):
        stored = FactVersion.objects.values_list(
            "key", "search_vector", "confidence", "importance", "last_accessed_at", "created_at"
        ).get(pk=fact.pk)
        key, document, confidence, importance, last_accessed_at, created_at = stored
        assert rows[fact.pk] == (key, document, confidence, importance, last_accessed_at or created_at)
    # and the last touched moment is the last access where there was one, else the creation
    assert rows[accessed.pk][4].year == 2031
    assert rows[never.pk][4] == never.created_at


def _pending_pages_merged() -> int:
    """Merges the text index's pending list into its tree; how many pages it held."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT gin_clean_pending_list('fact_scoped_search_gin'::regclass)")
        (pages,) = cursor.fetchone()
    return int(pages)


def test_new_facts_go_straight_into_the_text_index_tree(namespace):
    # given an index with nothing pending
    _pending_pages_merged()
    # when facts are written
    for n in range(3):
        fact_put(namespace=namespace, key=f"drink_{n}", value=f"green tea number {n}")
    # then nothing waits in a pending list that every search would read
    assert _pending_pages_merged() == 0
    # while with the pending list that GIN keeps by default, they would wait there
    with connection.cursor() as cursor:
        cursor.execute("ALTER INDEX fact_scoped_search_gin SET (fastupdate = on)")
    fact_put(namespace=namespace, key="drink_pending", value="green tea, pending")
    assert _pending_pages_merged() > 0
