"""Processes that benchmarks and the test suite start the same way: a Celery worker on a queue."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class WorkerProcess:
    proc: subprocess.Popen[bytes]
    queue: str
    log_path: Path

    @property
    def hostname(self) -> str:
        """The node name the worker answers remote control as (`app.control.inspect`)."""
        return f"{self.queue}@localhost"


def _cpu_seconds(process: Any) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def _cpu_by_pid(processes: list[Any]) -> dict[int, float]:
    import psutil

    seconds = {}
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            seconds[process.pid] = _cpu_seconds(process)
    return seconds


def process_tree(pid: int) -> list[Any]:
    """Process `pid` and its descendants now (none when it has ended)."""
    import psutil

    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _machine_busy_seconds() -> float:
    """CPU seconds the kernel counted busy on all cores since boot (not idle, I/O wait or steal)."""
    import psutil

    times = psutil.cpu_times()
    return float(times.user + times.nice + times.system + times.irq + times.softirq)


@contextmanager
def cpu_meter(groups: dict[str, Callable[[], list[Any]]]) -> Iterator[dict[str, float]]:
    """The CPU seconds each group of processes used inside the block, and the whole machine's.

    Yields a dict that holds them once the block has ended: one entry per group (each group a
    function that lists its processes, asked at the start and at the end) and `machine`. A
    process that starts inside the block counts whole; one that ends inside it is left out of
    its group (the machine's figure still holds it).
    """
    machine = _machine_busy_seconds()
    before = {name: _cpu_by_pid(find()) for name, find in groups.items()}
    used: dict[str, float] = {}
    yield used
    for name, find in groups.items():
        after = _cpu_by_pid(find())
        used[name] = sum(seconds - before[name].get(pid, 0.0) for pid, seconds in after.items())
    used["machine"] = _machine_busy_seconds() - machine


def database_server_processes() -> list[Any]:
    """The PostgreSQL server's processes (its postmaster, every backend and its background
    processes: autovacuum and checkpoints count too), when it runs on this machine where this
    process may see it; else none."""
    import psutil
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = int(cursor.fetchone()[0])
    try:
        process = psutil.Process(backend)
        # A server elsewhere: the same number may be some other process of this machine.
        if "postgres" not in process.name():
            return []
        postmaster = process.parent()
    except psutil.Error:
        return []
    return [] if postmaster is None else process_tree(postmaster.pid)


def database_server_group() -> Callable[[], list[Any]]:
    """A `cpu_meter` group of the database server's processes: the postmaster found now, its
    processes listed at each count (backends come and go)."""
    postmaster = database_server_processes()[:1]
    return lambda: [process for root in postmaster for process in process_tree(root.pid)]


def cpu_ms_per(used: dict[str, float], count: int) -> dict[str, float]:
    """CPU milliseconds per unit of work (request, KPR) of each group `cpu_meter` measured."""
    return {name: round(1000 * seconds / max(count, 1), 2) for name, seconds in used.items()}


def processes_settled(pid: int, *, idle_share: float = 0.1, timeout: float = 120.0) -> None:
    """Wait until process `pid` and its descendants together use under `idle_share` of one core
    for half a second: its children have finished loading what they load in the background
    (the models), which would otherwise share the cores with what is being measured."""

    def busy_seconds(processes: list[Any]) -> float:
        return sum(_cpu_by_pid(processes).values())

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        processes = process_tree(pid)
        before = busy_seconds(processes)
        time.sleep(0.5)
        if busy_seconds(processes) - before < idle_share * 0.5:
            return
    raise RuntimeError(f"process {pid} and its children stayed busy for {timeout:.0f} s")


def worker_settled(worker: WorkerProcess, *, idle_share: float = 0.1, timeout: float = 120.0) -> None:
    processes_settled(worker.proc.pid, idle_share=idle_share, timeout=timeout)


@contextmanager
def celery_worker(
    *, queue: str, env: dict[str, str], concurrency: int = 2, ready_timeout: float = 90.0
) -> Iterator[WorkerProcess]:
    """A real Celery worker consuming `queue` only, with `env` on top of this process's environment.

    Yields once the worker says it is ready; stops it (TERM, then KILL) on the way out. Its log
    goes to a file in TMPDIR named after the queue, quoted in the error when it fails to start.
    """
    log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"{queue}.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "memorypr", "worker", "-Q", queue, "--hostname", f"{queue}@localhost", "--concurrency",
             str(concurrency), "--loglevel", "INFO", "--without-gossip", "--without-mingle", "--without-heartbeat"],
            cwd=REPO, env={**os.environ, "CELERY_TASK_ALWAYS_EAGER": "0", **env},
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + ready_timeout
            while b" ready." not in log_path.read_bytes():
                if proc.poll() is not None or time.monotonic() > deadline:
                    tail = log_path.read_text(errors="replace")[-4000:]
                    raise RuntimeError(f"Celery worker did not start:\n{tail}")
                time.sleep(0.2)
            yield WorkerProcess(proc=proc, queue=queue, log_path=log_path)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
