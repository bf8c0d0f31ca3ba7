"""A small process supervisor: start children, restart any that dies with backoff, stop in order.

Used by `make run` (scripts/run.py) and `make soak`. Each child runs in a session of its own,
so a Ctrl-C in the terminal reaches only the supervisor, which then stops the children in the
reverse order of their start; each child also gets SIGTERM if the supervisor itself dies.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

_PR_SET_PDEATHSIG = 1
BACKOFF_FIRST = 0.5
BACKOFF_MAX = 30.0
# A child that stayed up this long had started (supervisord's `startsecs`): when it dies later
# (the OOM killer, an operator's kill -9), it starts again from the first backoff step. Only
# deaths sooner than this, a crash loop at start-up, wait longer each time. At 10 s, a worker
# killed every 6 s under load was kept down for 8 and then 16 s.
STABLE_AFTER = 3.0


def autogroups_in_effect(*, enabled: str, cgroups: str, session_group: str) -> bool:
    """Whether the kernel schedules sessions as groups (autogroups), given
    /proc/sys/kernel/sched_autogroup_enabled, /proc/self/cgroup, and what a new session's
    /proc/<pid>/autogroup reads (`new_session_group`).

    Autogroups apply only in the root of the CPU controller's hierarchy: in a container's or a
    systemd unit's own cgroup, that cgroup is the group, and processes share it by nice value.
    A new session whose autogroup reads empty is in none (some sandboxes emulate /proc and give
    sessions no groups).
    """
    if enabled.strip() != "1" or not session_group.strip():
        return False
    paths = {}
    for line in cgroups.splitlines():
        _, controllers, path = line.split(":", 2)
        paths[controllers] = path
    # cgroup v1 (or hybrid) names the cpu controller; in cgroup v2 alone, one line names none,
    # and a path below the root counts as a cgroup of its own even where the cpu controller is
    # off there: the side on which the worker is not starved.
    cpu = next((path for controllers, path in paths.items() if "cpu" in controllers.split(",")), None)
    return (cpu if cpu is not None else paths.get("", "/")) == "/"


def new_session_group() -> str:
    """What /proc/<pid>/autogroup reads for a process started in a session of its own, as every
    child is: the kernel's answer, not a guess from settings ("" where there is none)."""
    probe = subprocess.Popen(["sleep", "5"], start_new_session=True)
    try:
        return Path(f"/proc/{probe.pid}/autogroup").read_text()
    finally:
        probe.kill()
        probe.wait()


def _default_background_niceness() -> int:
    """Workers and beat run at a lower CPU priority than the web tier: on a saturated machine a
    request waits less, and review and merge use the CPU time requests leave over, yet enough of
    it to keep up with what the agents propose (measured: 32 agents without a pause, 2 cores).

    With autogroups each child's session is one group, as a systemd unit or a container is one
    cgroup: the web tier with all its processes, the worker, beat, Redis, and PostgreSQL (pg_ctl
    starts it in a session of its own). At 3 the worker's group weighs 526 against the web's
    1024: 189-229 requests/s with p95 <= 242 ms, submit -> merged p50 2.1-2.9 s, steady. At 0,
    merges took 0.26 s, but requests p95 293 ms at 174/s. (At 5 with every web process a group of
    its own, the worker had a tenth of the CPU: merges fell behind without bound, p50 31 s after
    a minute, and a killed worker took 17 s to start again.)

    Without autogroups, processes share the CPU one by one: the worker's two children against
    six web processes and the database's. At 3 merges fell behind (p50 14 s after a minute); at
    0, 278 requests/s with p95 <= 171 ms and submit -> merged p50 4.1 s.
    """
    try:
        in_groups = autogroups_in_effect(
            enabled=Path("/proc/sys/kernel/sched_autogroup_enabled").read_text(),
            cgroups=Path("/proc/self/cgroup").read_text(),
            session_group=new_session_group(),
        )
    except OSError:  # not Linux, or no such files: processes share the CPU one by one
        in_groups = False
    return 3 if in_groups else 0


BACKGROUND_NICENESS = int(os.environ.get("MEMORYPR_BACKGROUND_NICENESS") or _default_background_niceness())


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')} supervisor] {message}", flush=True)


def _die_with_parent() -> None:
    """Runs in the child between fork and exec: SIGTERM when the supervisor goes away."""
    # Off Linux this does nothing: Ctrl-C still stops everything; only a killed supervisor leaks.
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _scheduling_group_nice(niceness: int) -> None:
    """Runs in the child after setsid: the new session's scheduling group yields as the child does.

    With the kernel's autogroups on (the default on desktops and many servers), every session is
    one scheduling group, and groups share the CPU by their own nice value, not their processes'.
    A niced worker alone in its session would get as much CPU as the web tier's whole group.
    """
    # Without CAP_SYS_ADMIN the kernel takes one such change per 100 ms, machine-wide (EAGAIN).
    for _attempt in range(10):
        try:
            Path("/proc/self/autogroup").write_text(f"{niceness}\n")
            return
        except BlockingIOError:
            time.sleep(0.05)
        except OSError:
            return  # no autogroups here: the process's own niceness is what counts


@dataclass
class Child:
    name: str
    argv: Sequence[str]
    env: dict[str, str]
    cwd: Path
    stop_timeout: float = 15.0
    # Added to the child's nice value: background work yields the CPU to the requests it serves.
    niceness: int = 0
    proc: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    restarts: int = 0
    backoff: float | None = None  # the next restart's delay; None until the first death
    restart_at: float | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            list(self.argv), cwd=self.cwd, env=self.env, stdin=subprocess.DEVNULL,
            start_new_session=True, preexec_fn=self._in_child_before_exec,
        )  # fmt: skip
        self.started_at = time.monotonic()
        self.restart_at = None

    def _in_child_before_exec(self) -> None:
        if sys.platform == "linux":
            _die_with_parent()
        if self.niceness:
            os.nice(self.niceness)
            _scheduling_group_nice(self.niceness)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if not self.running:
            return
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=self.stop_timeout)
        except subprocess.TimeoutExpired:
            log(f"{self.name} did not stop in {self.stop_timeout:.0f} s; killing it")
            self.proc.kill()
            self.proc.wait()


class Supervisor:
    def __init__(self) -> None:
        self.children: list[Child] = []
        self.stopping = False
        self.checks: list[tuple[float, Callable[[], None]]] = []
        self._next_check: dict[int, float] = {}

    def add(self, child: Child) -> Child:
        self.children.append(child)
        child.start()
        log(f"started {child.name} (pid {child.proc.pid if child.proc else '?'})")
        return child

    def every(self, seconds: float, check: Callable[[], None]) -> None:
        """Run `check` every `seconds` while supervising (e.g. the embedded database's liveness)."""
        self.checks.append((seconds, check))

    def install_signal_handlers(self) -> None:
        def stop(signum: int, _frame: object) -> None:
            self.stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)

    def tick(self) -> None:
        now = time.monotonic()
        for child in self.children:
            if child.running or self.stopping:
                continue
            if child.restart_at is None:
                self._schedule_restart(child, now)
            elif now >= child.restart_at:
                child.restarts += 1
                child.start()
                log(
                    f"restarted {child.name} (pid {child.proc.pid if child.proc else '?'}, restart #{child.restarts})"
                )
        for index, (seconds, check) in enumerate(self.checks):
            if now >= self._next_check.get(index, 0.0):
                self._next_check[index] = now + seconds
                try:
                    check()
                except Exception as exc:  # a failing check is logged and tried again next period
                    log(f"check {getattr(check, '__name__', check)} failed: {exc}")

    def _schedule_restart(self, child: Child, now: float) -> None:
        assert child.proc is not None
        code = child.proc.returncode
        uptime = now - child.started_at
        if child.backoff is None or uptime >= STABLE_AFTER:
            child.backoff = BACKOFF_FIRST
        how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
        log(f"{child.name} (pid {child.proc.pid}) died with {how} after {uptime:.1f} s; "
            f"restarting in {child.backoff:.0f} s")  # fmt: skip
        child.restart_at = now + child.backoff
        child.backoff = min(child.backoff * 2, BACKOFF_MAX)

    def run_until_stopped(self, *, interval: float = 0.25) -> None:
        while not self.stopping:
            self.tick()
            time.sleep(interval)

    def stop_all(self) -> None:
        """Stop the children in the reverse order of their start (web first, storage last)."""
        self.stopping = True
        for child in reversed(self.children):
            child.stop()
