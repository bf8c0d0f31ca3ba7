"""`make run`: the whole service on one machine, production-shaped and smaller.

Starts (or reuses) the embedded PostgreSQL 18 + pgvector under .data/pg unless DATABASE_URL
is set, and the embedded Redis under .data/redis unless REDIS_URL is set; migrates, collects
the static files, loads the demo; then supervises gunicorn, a Celery worker and Celery beat,
restarting any of them (and Redis, and PostgreSQL) that dies. Ctrl-C stops everything it started.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from scripts.supervisor import BACKGROUND_NICENESS, Child, Supervisor, log  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", default=os.environ.get("PORT", "8000"))
    parser.add_argument(
        "--data",
        default=os.environ.get("MEMORYPR_DATA_DIR", str(REPO / ".data")),
        help="folder of the embedded servers' data, the beat schedule and the metrics",
    )
    parser.add_argument("--no-demo", action="store_true", help="skip loading the demo namespace")
    return parser.parse_args(argv)  # fmt: skip


def service_env(*, data: Path, port: str) -> dict[str, str]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memorypr.settings", "PORT": port}
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("MEMORYPR_PGDATA", str(data / "pg"))
    env.setdefault("MEMORYPR_REDIS_DIR", str(data / "redis"))
    metrics = data / "prometheus"
    shutil.rmtree(metrics, ignore_errors=True)  # multiprocess samples of an earlier run are stale
    metrics.mkdir(parents=True)
    env.setdefault("PROMETHEUS_MULTIPROC_DIR", str(metrics))
    return env


def start_storage(supervisor: Supervisor, env: dict[str, str]) -> None:
    """The embedded servers, unless DATABASE_URL / REDIS_URL point elsewhere."""
    from memorypr import embedded

    if not env.get("REDIS_URL"):
        if not env.get("CELERY_BROKER_URL"):
            # The broker is ours, and our one worker its only consumer: a restarted worker takes
            # back at once what a killed one had taken (memorypr.celery).
            env["MEMORYPR_WORKER_SOLE_CONSUMER"] = "1"
        folder = Path(env["MEMORYPR_REDIS_DIR"])
        embedded.embedded_redis_prepare(folder=folder)
        supervisor.add(
            Child(name="redis", argv=embedded.embedded_redis_command(folder=folder), env=env, cwd=REPO)
        )
        env["REDIS_URL"] = embedded.embedded_redis_url(folder=folder)
        embedded.redis_wait(url=env["REDIS_URL"])
        log(f"embedded Redis: {folder}")
    if not env.get("DATABASE_URL"):
        pgdata = Path(env["MEMORYPR_PGDATA"])
        os.environ["MEMORYPR_PGDATA"] = str(pgdata)
        # This process holds the server for the whole run; it stops when we exit.
        env["DATABASE_URL"] = embedded.embedded_database_url(pgdata=pgdata)
        log(f"embedded PostgreSQL 18 + pgvector: {pgdata}")

        def database_alive() -> None:
            if embedded.embedded_database_ensure_running(pgdata=pgdata):
                log("embedded PostgreSQL had stopped; started it again")

        supervisor.every(2.0, database_alive)


def prepare(env: dict[str, str], *, demo: bool) -> None:
    def manage(*argv: str) -> None:
        subprocess.run([sys.executable, "manage.py", *argv], cwd=REPO, env=env, check=True)

    manage("migrate", "--verbosity", "0")
    manage("collectstatic", "--noinput", "--verbosity", "0")
    if demo:
        manage("load_demo")


def start_services(supervisor: Supervisor, env: dict[str, str], *, data: Path) -> None:
    python = sys.executable
    celery = [python, "-m", "celery", "-A", "memorypr", "--quiet"]
    supervisor.add(Child(
        name="worker",
        argv=[*celery, "worker", "--loglevel", "WARNING", "--concurrency", env.get("WORKER_CONCURRENCY", "2"),
              "--without-gossip", "--without-mingle", "--hostname", f"worker@{os.uname().nodename}"],
        env=env, cwd=REPO, stop_timeout=30.0, niceness=BACKGROUND_NICENESS,
    ))  # fmt: skip
    supervisor.add(Child(
        name="beat",
        argv=[*celery, "beat", "--loglevel", "WARNING", "--schedule", str(data / "celerybeat-schedule")],
        env=env, cwd=REPO, niceness=BACKGROUND_NICENESS,
    ))  # fmt: skip
    supervisor.add(Child(
        name="web",
        argv=[python, "-m", "gunicorn", "-c", str(REPO / "memorypr" / "gunicorn_conf.py"),
              "memorypr.wsgi:application"],
        env=env, cwd=REPO,
    ))  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    data = Path(args.data).resolve()
    data.mkdir(parents=True, exist_ok=True)
    env = service_env(data=data, port=str(args.port))
    supervisor = Supervisor()
    supervisor.install_signal_handlers()
    try:
        start_storage(supervisor, env)
        prepare(env, demo=not args.no_demo)
        start_services(supervisor, env, data=data)
        debug = " (DEBUG on)" if env.get("DEBUG", "").lower() in {"1", "true", "yes", "on"} else ""
        print(
            f"\nmemorypr on http://127.0.0.1:{args.port}/{debug}  (API docs /api/docs/, review dashboard "
            f"/review/, admin /admin/, health /healthz, metrics /metrics)\nCtrl-C stops everything.\n",
            flush=True,
        )
        supervisor.run_until_stopped()
    finally:
        supervisor.stop_all()
        log("stopped.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
