from __future__ import annotations

import importlib
import json
import pkgutil
from typing import Any

from django.core.management.base import BaseCommand, CommandError

import bench


class Command(BaseCommand):
    help = "Run benchmarks (all, or the named ones) and print their figures as JSON."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("names", nargs="*", help="benchmark modules under bench/ (default: all)")
        parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
        parser.add_argument("--split", help="the data split of the benchmarks that read one (valid or test)")

    def handle(self, *args: Any, **options: Any) -> None:
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
