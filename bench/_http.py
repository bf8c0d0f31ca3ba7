"""Shared helpers for benchmarks that talk to a real server over HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

REPO = Path(__file__).resolve().parent.parent


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def gunicorn_server(*, workers: int | None = None) -> Iterator[int]:
    """The production web server (gunicorn, with the configuration `make run` uses: its worker
    class and processes, the pool and the warm model) on a free port, against this process's
    database; `workers` processes instead of the configuration's number when given."""
    port = free_port()
    env = {**os.environ, "DATABASE_URL": settings.DATABASE_URL, "DJANGO_SETTINGS_MODULE": "memorypr.settings"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", str(REPO / "memorypr" / "gunicorn_conf.py"),
         "memorypr.wsgi:application", "--bind", f"127.0.0.1:{port}",
         *(["--workers", str(workers)] if workers else []), "--log-level", "warning"],
        cwd=REPO, env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("gunicorn did not start") from None
                time.sleep(0.2)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=20)
