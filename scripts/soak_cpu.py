"""Where the machine's CPU went during a soak: seconds per role, from the processes' own counters.

A process that exited during the run is counted through its parent (the kernel adds a reaped
child's time to the parent's `children_*` counters), so a killed worker child still shows up,
under its worker master or, for a killed master, under the launcher.
"""

from __future__ import annotations

import os
from collections import defaultdict

import psutil

ROLE_MARKERS = (
    ("gunicorn", "web"),
    (" beat", "beat"),
    ("celery", "worker"),
    ("redis-server", "redis"),
    ("postgres", "postgres"),
)


def role_of(cmdline: str) -> str:
    return next((role for marker, role in ROLE_MARKERS if marker in cmdline), "launcher")


def cpu_seconds_by_role(roots: list[psutil.Process]) -> dict[str, float]:
    """CPU seconds so far of every process under `roots`, by role; this process is the load."""
    me = os.getpid()
    totals: dict[str, float] = defaultdict(float)
    seen = {me}
    for root in roots:
        try:
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            continue
        for process in tree:
            if process.pid in seen:
                continue
            seen.add(process.pid)
            try:
                with process.oneshot():
                    times = process.cpu_times()
                    cmdline = " ".join(process.cmdline())
            except psutil.Error:  # exited meanwhile: its parent will count it
                continue
            totals[role_of(cmdline)] += (
                times.user + times.system + times.children_user + times.children_system
            )
    own = psutil.Process(me).cpu_times()
    totals["load generator"] = own.user + own.system
    return dict(totals)


def cpu_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {
        role: round(after.get(role, 0.0) - before.get(role, 0.0), 1)
        for role in sorted(set(before) | set(after))
    }
