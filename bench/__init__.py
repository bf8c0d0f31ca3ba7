"""Benchmarks: `make bench` (or `manage.py bench NAME ...`). Each module exposes `run(options) -> dict`."""
