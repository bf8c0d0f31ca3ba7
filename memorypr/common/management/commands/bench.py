from __future__ import annotations

import importlib
import json
import os
import pkgutil
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

import bench
from bench._report import report_write, results_save
from memorypr.embedded import embedded_redis_start, embedded_redis_url, redis_ping


@contextmanager
def _own_redis() -> Iterator[None]:
    """Benchmarks run without `make run`: with no REDIS_URL, start the embedded Redis they point at."""
    url = embedded_redis_url()
    if os.environ.get("REDIS_URL") or redis_ping(url=url):
        yield
        return
    server = embedded_redis_start()
    try:
        yield
    finally:
        server.terminate()
        server.wait(timeout=10)


def _migrated_or_fail() -> None:
    """A database without the project's tables fails the run at once, saying what to do, rather than
    each benchmark failing on a missing table after minutes of loading."""
    executor = MigrationExecutor(connection)
    pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if pending:
        raise CommandError(
            f"the benchmark database lacks {len(pending)} migration(s) (first: {pending[0][0]}): "
            "`make bench` migrates it first; or run `manage.py migrate` against the same database"
        )


# Benchmarks that read what another one loaded run after it in the full set.
_AFTER = {"api": "retrieval"}


def _ordered(names: list[str]) -> list[str]:
    ordered = [name for name in names if name not in _AFTER]
    for name, after in _AFTER.items():
        if name in names:
            ordered.insert(ordered.index(after) + 1 if after in ordered else len(ordered), name)
    return ordered


class Command(BaseCommand):
    help = (
        "Run benchmarks (all, or the named ones), print their figures as JSON and keep them under "
        "bench/results/; the full set (or the name `report`) also writes bench/results/README.md."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "names", nargs="*", help="benchmark modules under bench/ (default: all), or `report`"
        )
        parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
        parser.add_argument("--split", help="the data split of the benchmarks that read one (valid or test)")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["names"] != ["report"]:
            _migrated_or_fail()
        with _own_redis():
            self._run(options)

    def _run(self, options: dict[str, Any]) -> None:
        available = sorted(m.name for m in pkgutil.iter_modules(bench.__path__) if not m.name.startswith("_"))
        # `review-quality` and `review_quality` name the same module.
        requested = [name.replace("-", "_") for name in options["names"]]
        report = not requested or "report" in requested
        names = _ordered([name for name in requested if name != "report"] or ([] if requested else available))
        unknown = sorted(set(names) - set(available))
        if unknown:
            raise CommandError(f"unknown benchmark(s) {unknown}; available: {available} and report")
        failed = {}
        for name in names:
            module = importlib.import_module(f"bench.{name}")
            self.stderr.write(f"running bench.{name} ...")
            started = timezone.now()
            try:
                result = module.run({"quick": options["quick"], "split": options["split"]})
            except Exception as exc:  # recorded and reported; the other benchmarks still run
                self.stderr.write(traceback.format_exc())
                failed[name] = f"{type(exc).__name__}: {exc}"
                result = {"failed": failed[name]}
            results_save(name=name, result=result, quick=options["quick"], started=started)
            self.stdout.write(json.dumps({name: result}, indent=2, ensure_ascii=False))
        if report:
            self.stderr.write(f"report: {report_write()}")
        if failed:
            raise CommandError("failed: " + "; ".join(f"{name}: {why}" for name, why in failed.items()))
