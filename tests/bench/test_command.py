"""`manage.py bench` on a database that was never migrated says what to do, before any work."""

from __future__ import annotations

from contextlib import nullcontext

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db.migrations.recorder import MigrationRecorder

pytestmark = pytest.mark.django_db


def test_a_benchmark_on_a_database_with_pending_migrations_fails_at_once_saying_how_to_migrate(monkeypatch):
    # given a database that misses the project's latest migration of the fact store
    latest = MigrationRecorder.Migration.objects.filter(app="facts").order_by("-name").first()
    assert latest is not None
    latest.delete()
    # and a benchmark that would fail loudly if it started at all
    started = []
    monkeypatch.setattr("memorypr.common.management.commands.bench._own_redis", lambda: started.append(1))
    # when a benchmark is run against it
    with pytest.raises(CommandError) as failure:
        call_command("bench", "retrieval")
    # then it fails before starting anything, naming the missing migration and the way out
    assert f"facts.{latest.name}" in str(failure.value)
    assert "make bench" in str(failure.value) and "migrate" in str(failure.value)
    assert started == []


def test_the_report_alone_needs_no_migrated_database(monkeypatch):
    # given a database that misses a migration
    MigrationRecorder.Migration.objects.filter(app="facts").order_by("-name").first().delete()
    written = []
    monkeypatch.setattr("memorypr.common.management.commands.bench._own_redis", nullcontext)
    monkeypatch.setattr(
        "memorypr.common.management.commands.bench.report_write", lambda: written.append(1) or "x"
    )
    # when only the report is asked for
    call_command("bench", "report")
    # then it is written from the results on disk
    assert written == [1]
