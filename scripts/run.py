"""`make run`: the whole service on one machine.

Starts (or reuses) the embedded PostgreSQL 18 + pgvector under .data/pg unless DATABASE_URL
is set, migrates, loads the demo, then runs a Celery worker (with beat) and the web server
until Ctrl-C, which stops everything this script started.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", default=os.environ.get("PORT", "8000"))
    args = parser.parse_args()

    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memorypr.settings"}
    env.setdefault("DEBUG", "1")
    env.setdefault("HF_HUB_OFFLINE", "1")
    if not env.get("DATABASE_URL"):
        from memorypr.embedded import embedded_data_dir, embedded_database_url

        # This process holds the server for the whole run; it stops when we exit.
        env["DATABASE_URL"] = embedded_database_url()
        print(f"embedded PostgreSQL 18 + pgvector: {embedded_data_dir()}", flush=True)
    python = sys.executable

    def manage(*argv: str) -> None:
        subprocess.run([python, "manage.py", *argv], cwd=REPO, env=env, check=True)

    manage("migrate", "--verbosity", "0")
    manage("load_demo")

    data = REPO / ".data"
    data.mkdir(exist_ok=True)
    children = [
        subprocess.Popen(
            [
                python,
                "-m",
                "celery",
                "-A",
                "memorypr",
                "worker",
                "--beat",
                "--loglevel",
                "WARNING",
                "--concurrency",
                env.get("WORKER_CONCURRENCY", "2"),
                "--schedule",
                str(data / "celerybeat-schedule"),
            ],
            cwd=REPO,
            env=env,
        ),  # fmt: skip
        subprocess.Popen(
            [python, "manage.py", "runserver", f"127.0.0.1:{args.port}", "--noreload", "--skip-checks"],
            cwd=REPO,
            env=env,
        ),  # fmt: skip
    ]
    broker = env.get("CELERY_BROKER_URL") or env.get("REDIS_URL") or "SQLAlchemy transport on PostgreSQL"
    print(
        f"\nmemorypr on http://127.0.0.1:{args.port}/  (API docs /api/docs/, review dashboard /review/, "
        f"admin /admin/; broker: {broker.split('@')[-1]})\nCtrl-C stops everything.\n",
        flush=True,
    )

    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        while not stopping and all(child.poll() is None for child in children):
            time.sleep(0.5)
    finally:
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for child in children:
            try:
                child.wait(timeout=15)
            except subprocess.TimeoutExpired:
                child.kill()
    for child in children:
        if not stopping and child.returncode not in (None, 0, -signal.SIGTERM):
            print(f"stopped: {' '.join(map(str, child.args[:6]))} exited with {child.returncode}", flush=True)
    print("stopped.", flush=True)
    return 0 if stopping else 1


if __name__ == "__main__":
    sys.exit(main())
