from __future__ import annotations

import random
import re

import numpy
import pytest
from django.db import connection, transaction
from django.test import override_settings
from django.utils import timezone

from memorypr.agents.models import Namespace
from memorypr.facts.models import FactStatus, FactVersion
from memorypr.retrieval.candidates import full_text_candidates
from memorypr.vectors.embedding import embed_texts
from memorypr.vectors.nearest import Scope, vector_candidates, vector_candidates_sql
from memorypr.vectors.store import (
    GRAPH_GROUPS,
    VectorDocument,
    document_texts,
    vector_documents,
    vector_index_options,
    vector_index_rebuild,
    vector_literal,
    vector_upsert,
)

pytestmark = pytest.mark.django_db

FACTS = [
    ("home_city", "上个月我举家搬迁到了深圳"),
    ("drink", "drinks green tea every afternoon"),
    ("pet", "has a cat called Miso"),
    ("job", "works as a nurse on night shifts"),
]


@pytest.fixture
def namespace() -> Namespace:
    return Namespace.objects.create(name="vectors")


def store(namespace, items, *, subject="user-1", status=FactStatus.ACTIVE) -> list[FactVersion]:
    rows = FactVersion.objects.bulk_create(
        FactVersion(
            namespace=namespace, subject=subject, category="user_profile", key=key, value=value,
            version=1, status=status, confidence=0.9,
        )
        for key, value in items
    )  # fmt: skip
    vector_upsert(documents=dict(zip([r.pk for r in rows], vector_documents(items=items), strict=True)))
    return rows


def random_unit_vectors(count: int, seed: int = 7) -> list[list[float]]:
    rng = random.Random(seed)
    vectors = []
    for _ in range(count):
        v = [rng.gauss(0, 1) for _ in range(384)]
        norm = sum(x * x for x in v) ** 0.5
        vectors.append([x / norm for x in v])
    return vectors


def _scope(namespace, subject="user-1") -> Scope:
    return Scope(namespace_id=namespace.pk, subject=subject, at=timezone.now())


def test_what_the_store_writes_is_found_by_meaning(namespace):
    # given
    rows = store(namespace, FACTS)
    # when
    [query] = embed_texts(["Which pet does the user have?"])
    hits = vector_candidates(scope=_scope(namespace), embedding=query, limit=2)
    # then
    assert hits[0][0] == rows[2].pk
    assert hits[0][1] > hits[1][1]


def test_what_the_store_writes_is_searched_only_in_its_scope(namespace):
    store(namespace, FACTS[:1], subject="someone-else")
    store(namespace, FACTS[1:2], status=FactStatus.SUPERSEDED)
    [query] = embed_texts(["tea"])
    assert vector_candidates(scope=_scope(namespace), embedding=query, limit=5) == []
    assert len(vector_candidates(scope=_scope(namespace, "someone-else"), embedding=query, limit=5)) == 1


def test_chinese_is_found_by_its_words(namespace):
    # given a Chinese value and one made of the query's words
    rows = store(namespace, [*FACTS, ("plan", "搬到深圳")])

    def found(query: str) -> list[int]:
        return [hit.fact_id for hit in full_text_candidates(scope=_scope(namespace), query=query, limit=10)]

    # when / then: 深圳 finds both the full sentence and 搬到深圳
    assert set(found("深圳")) == {rows[0].pk, rows[4].pk}
    assert found("搬到深圳")[0] == rows[4].pk
    assert set(found("night nurse")) == {rows[3].pk}
    assert found("!!!") == []


def test_document_texts_make_keys_readable_and_searchable():
    text, tokens = document_texts(key="home_city", value={"city": "深圳"})
    assert text == 'home city: {"city": "深圳"}'
    assert {"home", "city", "深圳"} <= set(tokens.split())


def test_vector_upsert_rewrites_embeddings(namespace):
    [row] = store(namespace, FACTS[:1])
    [document] = vector_documents(items=[("home_city", "Hangzhou")])
    assert vector_upsert(documents={row.pk: document}) == 1
    row.refresh_from_db()
    assert row.search_text == "home city hangzhou"
    assert list(row.embedding) == pytest.approx(document.embedding, abs=1e-6)


def test_the_hnsw_index_serves_the_vector_channel(namespace):
    # given enough rows that the index pays off (at 1000 the planner still sorts a btree scan):
    # a few real facts among 3000 others
    filler = random_unit_vectors(3000)
    rows = FactVersion.objects.bulk_create(
        FactVersion(
            namespace=namespace, subject="user-1", category="domain_fact", key=f"filler_{i}", value=i,
            version=1, confidence=0.9,
        )
        for i in range(len(filler))
    )  # fmt: skip
    vector_upsert(
        documents={
            row.pk: VectorDocument(text="", search_text="filler", embedding=vector)
            for row, vector in zip(rows, filler, strict=True)
        }
    )
    real = store(namespace, FACTS)
    [query] = embed_texts(["Which pet does the user have?"])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE facts_factversion")
    sql, params = vector_candidates_sql(scope=_scope(namespace), embedding=query, limit=10, exact=False)
    # when the planner may not fall back to a sequential scan
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    # then the nearest rows come from the walk of the HNSW index (fact_nearest(), whose plan
    # tests/facts/test_migrations.py checks)
    assert "Function Scan on fact_nearest" in plan, plan
    # and the walk's rows are sorted again as a whole: relaxed order returns them slightly out of
    # order, and an incremental sort would take the index's order for exact
    assert "Presorted Key" not in plan and "Sort Key: ((v_near.distance + '0'::double precision))" in plan
    # and retrieval through it still finds the right fact (with a wide search: 3000 random unit
    # vectors make a graph that a narrow walk may cross without reaching the few real facts)
    with override_settings(MEMORYPR_EXACT_SEARCH_MAX_ROWS=0, MEMORYPR_HNSW_EF_SEARCH=400):
        hits = vector_candidates(scope=_scope(namespace), embedding=query, limit=10)
    assert hits[0][0] == real[2].pk and len(hits) == 10


def test_hnsw_parameters_come_from_settings(settings):
    # given the declared defaults
    assert vector_index_options() == {"m": "16", "ef_construction": "64"}
    # when the settings ask for others and the index is rebuilt
    settings.MEMORYPR_HNSW_M = 8
    settings.MEMORYPR_HNSW_EF_CONSTRUCTION = 32
    assert vector_index_rebuild() == {"m": 8, "ef_construction": 32}
    # then
    assert vector_index_options() == {"m": "8", "ef_construction": "32"}


def _hnsw_definitions() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE indexdef LIKE '%%USING hnsw%%'")
        return {str(name): str(definition) for name, definition in cursor.fetchall()}


def _groups_and_status(definitions: dict[str, str]) -> dict[str, tuple[bool, str]]:
    """Per graph: whether it holds active versions only, and the group it holds."""
    found = {}
    for name, definition in definitions.items():
        group = re.search(
            r"hashtextextended\(\(subject\)::text, namespace_id\) & \((\d+)\)::bigint\) = (\d+)", definition
        )
        found[name] = (
            "(status)::text = 'active'::text" in definition,
            f"{group[1]}:{group[2]}" if group else "",
        )
    return found


@pytest.mark.django_db
def test_each_hnsw_graph_holds_the_active_versions_of_one_group_of_subjects(settings):
    # given the migrated schema, then there is one graph per group, of active versions only
    expected = {f"fact_embedding_hnsw_{n}": (True, f"{GRAPH_GROUPS - 1}:{n}") for n in range(GRAPH_GROUPS)}
    assert _groups_and_status(_hnsw_definitions()) == expected
    # and a rebuild with other parameters keeps it so
    settings.MEMORYPR_HNSW_M = 8
    vector_index_rebuild()
    assert _groups_and_status(_hnsw_definitions()) == expected
    assert vector_index_options() == {"m": "8", "ef_construction": "64"}


def test_a_vector_literal_is_the_vector_the_server_stores():
    # given vectors of every kind of value: ordinary, tiny, huge, signed zeros, subnormal
    rng = numpy.random.default_rng(7)
    vectors = [rng.normal(0, 0.05, 384).tolist() for _ in range(200)]
    vectors.append([0.0, -0.0, 1e-45, -1e-40, 3.4e38, -3.4e38, 1 / 3, 0.1, 123456789.0])
    for vector in vectors:
        # when it is written as a literal
        literal = vector_literal(vector)
        # then it reads back as the same single-precision values as the full double's text
        written = numpy.array([float(x) for x in literal[1:-1].split(",")], dtype=numpy.float32)
        assert numpy.array_equal(written, numpy.asarray(vector, dtype=numpy.float32))
        assert literal.startswith("[") and literal.endswith("]")


def test_the_server_parses_a_vector_literal_to_the_same_vector():
    vector = numpy.random.default_rng(3).normal(0, 0.05, 384).tolist()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT %s::vector = %s::vector",
            [vector_literal(vector), "[" + ",".join(map(repr, vector)) + "]"],
        )
        assert cursor.fetchone()[0] is True
