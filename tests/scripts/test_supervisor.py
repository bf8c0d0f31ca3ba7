from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from scripts import supervisor as supervisor_module
from scripts.supervisor import Child, Supervisor, autogroups_in_effect, new_session_group


def _child(name: str, code: str, tmp_path: Path) -> Child:
    return Child(name=name, argv=[sys.executable, "-c", code], env={}, cwd=tmp_path, stop_timeout=5)


def _tick_until(supervisor: Supervisor, predicate, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        supervisor.tick()
        time.sleep(0.02)


def test_a_child_that_dies_is_restarted_with_growing_backoff(tmp_path, monkeypatch, capsys):
    # given a supervisor with short backoff steps and a child that exits at once
    monkeypatch.setattr(supervisor_module, "BACKOFF_FIRST", 0.05)
    supervisor = Supervisor()
    child = supervisor.add(_child("flaky", "raise SystemExit(3)", tmp_path))
    # when it is supervised for a while
    _tick_until(supervisor, lambda: child.restarts >= 3)
    # then each death is logged and each restart waits twice as long as the one before
    out = capsys.readouterr().out
    assert "flaky" in out and "died with exit code 3" in out and "restart #3" in out
    assert child.backoff == 0.05 * 2**3
    supervisor.stop_all()


def test_a_child_that_ran_long_enough_starts_again_from_the_first_backoff(tmp_path, monkeypatch):
    monkeypatch.setattr(supervisor_module, "BACKOFF_FIRST", 0.05)
    monkeypatch.setattr(supervisor_module, "STABLE_AFTER", 0.2)
    supervisor = Supervisor()
    child = supervisor.add(_child("stable", "import time; time.sleep(0.4)", tmp_path))
    child.backoff = 8.0  # as after several quick deaths
    _tick_until(supervisor, lambda: child.restarts >= 1)
    assert child.backoff == 0.1  # reset to the first step, then doubled for the next death
    supervisor.stop_all()


def test_a_killed_child_is_restarted_and_stop_all_stops_everything_in_reverse_order(tmp_path):
    # given two long-running children
    order_file = tmp_path / "order"
    code = (
        "import signal, sys, time\n"
        "def bye(*_):\n"
        f"    open({str(order_file)!r}, 'a').write(sys.argv[1] + '\\n'); sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, bye)\n"
        "while True: time.sleep(0.05)\n"
    )
    supervisor = Supervisor()
    first = supervisor.add(
        Child(name="first", argv=[sys.executable, "-c", code, "first"], env={}, cwd=tmp_path)
    )
    second = supervisor.add(
        Child(name="second", argv=[sys.executable, "-c", code, "second"], env={}, cwd=tmp_path)
    )
    time.sleep(0.5)
    # when one is SIGKILLed, it is started again
    assert first.proc is not None
    first.proc.kill()
    _tick_until(supervisor, lambda: first.restarts == 1 and first.running)
    time.sleep(0.5)
    # then stop_all stops the last started first, and leaves nothing running
    supervisor.stop_all()
    assert order_file.read_text().split() == ["second", "first"]
    assert not first.running and not second.running


def _background_and_web_child_report(tmp_path: Path, *, expression: str) -> tuple[str, str]:
    """Start a child niced by 7 ("worker") and one not ("web"); each writes `expression`'s value."""
    # Written aside and renamed: the report appears whole, never as the empty file open() creates.
    code = (
        f"import os, sys; path = {str(tmp_path)!r} + '/' + sys.argv[1]\n"
        f"open(path + '.part', 'w').write(str({expression})); os.replace(path + '.part', path)"
    )
    supervisor = Supervisor()
    supervisor.add(Child(name="worker", argv=[sys.executable, "-c", code, "worker"], env={}, cwd=tmp_path,
                         niceness=7))  # fmt: skip
    supervisor.add(Child(name="web", argv=[sys.executable, "-c", code, "web"], env={}, cwd=tmp_path))
    _tick_until(supervisor, lambda: (tmp_path / "worker").exists() and (tmp_path / "web").exists())
    supervisor.stop_all()
    return (tmp_path / "worker").read_text(), (tmp_path / "web").read_text()


def test_a_background_child_runs_at_a_lower_cpu_priority_than_the_supervisor(tmp_path):
    # given a child started with a niceness, and one without
    # when both have run
    worker, web = _background_and_web_child_report(tmp_path, expression="os.nice(0)")
    # then only the background child yields the CPU, by exactly its niceness (capped at 19)
    own = os.nice(0)
    assert int(web) == own
    assert int(worker) == min(own + 7, 19)


def _proc_text(path: str) -> str:
    return Path(path).read_text() if Path(path).exists() else ""


def test_the_background_niceness_follows_the_groups_new_sessions_really_get(tmp_path):
    # given a background child and a web child, each in a session of its own
    # when both have run and read their own autogroup (empty where the kernel gives them none)
    expression = "open('/proc/self/autogroup').read() if os.path.exists('/proc/self/autogroup') else ''"
    worker, web = _background_and_web_child_report(tmp_path, expression=expression)
    worker_group, web_group = worker.split(), web.split()
    session_group = new_session_group() if Path("/proc/self/autogroup").exists() else ""
    in_groups = autogroups_in_effect(
        enabled=_proc_text("/proc/sys/kernel/sched_autogroup_enabled"),
        cgroups=_proc_text("/proc/self/cgroup"),
        session_group=session_group,
    )
    # then a probe session gets what the children got, group or none
    assert bool(session_group.split()) == bool(web_group)
    if web_group:
        # and where sessions are groups, the background child's group is niced as the child
        # is and the web child's is not: the kernel weighs groups against each other by that alone
        own_group = _proc_text("/proc/self/autogroup").split()
        assert worker_group[0] not in (own_group[:1] + web_group[:1])
        assert worker_group[1:] == ["nice", "7"]
        assert web_group[1:] == ["nice", "0"]
    else:
        # and where a new session gets no group (no autogroups, or a sandbox that gives none),
        # the worker has none either, and the supervisor does not count on groups
        assert worker_group == []
        assert not in_groups


HYBRID_ROOT = "9:name=systemd:/\n4:memory:/box\n2:cpuacct:/\n1:cpu:/\n0::/\n"
IN_A_GROUP = "/autogroup-85 nice 0\n"


@pytest.mark.parametrize(
    ("enabled", "cgroups", "session_group", "in_groups"),
    [
        ("1\n", HYBRID_ROOT, IN_A_GROUP, True),  # a VM or a desktop: sessions are the groups
        ("0\n", HYBRID_ROOT, IN_A_GROUP, False),  # autogroups switched off
        ("1\n", "4:memory:/\n1:cpu,cpuacct:/docker/4f2a\n0::/\n", IN_A_GROUP, False),  # a container
        ("1\n", "0::/\n", IN_A_GROUP, True),  # cgroup v2 alone, at the root
        ("1\n", "0::/system.slice/memorypr.service\n", IN_A_GROUP, False),  # a systemd unit's cgroup
        ("1\n", HYBRID_ROOT, "", False),  # a sandbox whose sessions get no group
    ],
)
def test_autogroups_apply_only_when_on_and_at_the_root_of_the_cpu_hierarchy(
    enabled, cgroups, session_group, in_groups
):
    assert autogroups_in_effect(enabled=enabled, cgroups=cgroups, session_group=session_group) is in_groups
