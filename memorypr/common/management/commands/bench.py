from __future__ import annotations

import importlib
import json
import os
import pkgutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.management.base import BaseCommand, CommandError

import bench
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


class Command(BaseCommand):
    help = "Run benchmarks (all, or the named ones) and print their figures as JSON."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("names", nargs="*", help="benchmark modules under bench/ (default: all)")
        parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
        parser.add_argument("--split", help="the data split of the benchmarks that read one (valid or test)")

    def handle(self, *args: Any, **options: Any) -> None:
        with _own_redis():
            self._run(options)

    def _run(self, options: dict[str, Any]) -> None:
        available = sorted(m.name for m in pkgutil.iter_modules(bench.__path__) if not m.name.startswith("_"))
        # `review-quality` and `review_quality` name the same module.
        names = [name.replace("-", "_") for name in options["names"]] or available
        unknown = sorted(set(names) - set(available))
        if unknown:
            raise CommandError(f"unknown benchmark(s) {unknown}; available: {available}")
        results = {}
        for name in names:
            module = importlib.import_module(f"bench.{name}")
            self.stderr.write(f"running bench.{name} ...")
            results[name] = module.run({"quick": options["quick"], "split": options["split"]})
            self.stdout.write(json.dumps({name: results[name]}, indent=2, ensure_ascii=False))
