"""Where the machine's CPU went during a soak: seconds per role, from the processes' own counters.

A process that dies during the run (a killed worker, a restarted server) takes its counters
with it, and the kernel hands them to a parent that may not be ours, or to none of the roles
it served. So the meter reads every process of the service once a second and keeps the last
reading of each: a process is charged, to its own role, what it used between the start (or
its birth) and the last time it was seen. What one used in its last second is missed.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

import psutil

ROLE_MARKERS = (
    ("gunicorn", "web"),
    (" beat", "beat"),
    ("celery", "worker"),
    ("redis-server", "redis"),
    ("postgres", "postgres"),
)
LOAD_GENERATOR = "load generator"


def role_of(cmdline: str) -> str:
    return next((role for marker, role in ROLE_MARKERS if marker in cmdline), "launcher")


@dataclass(frozen=True)
class ProcessCpu:
    role: str
    seconds: float  # user + system of the process itself, not of its children


def cpu_snapshot(roots: list[psutil.Process]) -> dict[int, ProcessCpu]:
    """The CPU counters of every process under `roots`, by pid; this process is the load."""
    me = os.getpid()
    found: dict[int, ProcessCpu] = {}
    for root in roots:
        try:
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            continue
        for process in tree:
            if process.pid in found or process.pid == me:
                continue
            try:
                with process.oneshot():
                    times = process.cpu_times()
                    found[process.pid] = ProcessCpu(
                        role_of(" ".join(process.cmdline())), times.user + times.system
                    )
            except psutil.Error:  # exited meanwhile
                continue
    own = psutil.Process(me).cpu_times()
    found[me] = ProcessCpu(LOAD_GENERATOR, own.user + own.system)
    return found


def cpu_delta(start: dict[int, ProcessCpu], last_seen: dict[int, ProcessCpu]) -> dict[str, float]:
    """CPU seconds by role between the start and each process's last reading."""
    totals: dict[str, float] = defaultdict(float)
    for pid, cpu in last_seen.items():
        earlier = start.get(pid)
        totals[cpu.role] += cpu.seconds - (earlier.seconds if earlier else 0.0)
    return {role: round(seconds, 1) for role, seconds in sorted(totals.items())}


@dataclass
class CpuMeter:
    """Reads the service's processes every `interval` seconds from `start()` to `stop()`."""

    roots: Callable[[], list[psutil.Process]]
    interval: float = 1.0
    start_snapshot: dict[int, ProcessCpu] = field(default_factory=dict)
    last_seen: dict[int, ProcessCpu] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def read(self) -> None:
        with contextlib.suppress(psutil.Error, OSError):  # a root restarting: the next reading finds it
            self.last_seen.update(cpu_snapshot(self.roots()))

    def start(self) -> None:
        self.start_snapshot = cpu_snapshot(self.roots())
        self.last_seen = dict(self.start_snapshot)
        self._thread = threading.Thread(target=self._run, name="soak-cpu-meter", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.read()

    def stop(self) -> dict[str, float]:
        """CPU seconds by role since `start()`."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.read()
        return cpu_delta(self.start_snapshot, self.last_seen)
