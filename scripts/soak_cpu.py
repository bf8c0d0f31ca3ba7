"""Where the machine's CPU went during a soak: seconds per role, from the processes' own counters.

A process that exits during the run (a killed worker) takes its counters with it: the kernel
adds them to its parent's `children_*` counters when the parent reaps it. So the CPU time
that a parent's children counters gained is given to the role of the children that died, and
what those children had already used before the run is taken off again: each role is charged
what it used during the run, whoever reaped it.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass

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
    parent: int
    own: float  # user + system of the process itself
    reaped: float  # user + system of its children that it has reaped


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
                        role=role_of(" ".join(process.cmdline())),
                        parent=process.ppid(),
                        own=times.user + times.system,
                        reaped=times.children_user + times.children_system,
                    )
            except psutil.Error:  # exited meanwhile: its parent will count it
                continue
    own = psutil.Process(me).cpu_times()
    found[me] = ProcessCpu(role=LOAD_GENERATOR, parent=0, own=own.user + own.system, reaped=0.0)
    return found


def cpu_delta(before: dict[int, ProcessCpu], after: dict[int, ProcessCpu]) -> dict[str, float]:
    """CPU seconds by role between two snapshots."""
    totals: dict[str, float] = defaultdict(float)
    died = {pid: cpu for pid, cpu in before.items() if pid not in after}
    for pid, cpu in after.items():
        earlier = before.get(pid)
        totals[cpu.role] += cpu.own - (earlier.own if earlier else 0.0)
        # A process's reaped children share its role (pool children, backends), except the
        # launcher's: theirs is the role of the children of it that died.
        gained = cpu.reaped - (earlier.reaped if earlier else 0.0)
        orphans = {child.role for child in died.values() if child.parent == pid}
        totals[orphans.pop() if len(orphans) == 1 else cpu.role] += gained
    for cpu in died.values():
        # Counted above with its whole life, through the parent that reaped it. A child of a
        # parent that died too was orphaned (reaped outside the service): neither counted nor
        # taken off, so its last moments are missing.
        if cpu.parent in after:
            totals[cpu.role] -= cpu.own + cpu.reaped
    return {role: round(seconds, 1) for role, seconds in sorted(totals.items())}
