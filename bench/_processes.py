"""Processes that benchmarks and the test suite start the same way: a Celery worker on a queue."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

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


def processes_settled(pid: int, *, idle_share: float = 0.1, timeout: float = 120.0) -> None:
    """Wait until process `pid` and its descendants together use under `idle_share` of one core
    for half a second: its children have finished loading what they load in the background
    (the models), which would otherwise share the cores with what is being measured."""
    import psutil

    def busy_seconds(processes: list[psutil.Process]) -> float:
        total = 0.0
        for process in processes:
            with contextlib.suppress(psutil.NoSuchProcess):
                times = process.cpu_times()
                total += times.user + times.system
        return total

    deadline = time.monotonic() + timeout
    root = psutil.Process(pid)
    while time.monotonic() < deadline:
        processes = [root, *root.children(recursive=True)]
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
