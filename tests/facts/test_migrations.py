from __future__ import annotations

import importlib

import pytest
from django.db import connection

from memorypr.vectors.store import vector_index_options

pytestmark = pytest.mark.django_db

migration = importlib.import_module("memorypr.facts.migrations.0003_history_guard_hnsw_params")


def test_migrate_builds_the_hnsw_index_with_the_configured_parameters(settings):
    # given settings that differ from the declared m=16, ef_construction=64
    settings.MEMORYPR_HNSW_M = 24
    settings.MEMORYPR_HNSW_EF_CONSTRUCTION = 100
    # when the migration step runs
    with connection.schema_editor() as editor:
        migration.hnsw_from_settings(None, editor)
    # then
    assert vector_index_options() == {"m": "24", "ef_construction": "100"}


def test_migrate_keeps_the_declared_index_at_the_defaults():
    before = vector_index_options()
    with connection.schema_editor() as editor:
        migration.hnsw_from_settings(None, editor)
    assert vector_index_options() == before == {"m": "16", "ef_construction": "64"}
