"""bench._processes: the CPU that benchmarks count per group of processes."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil
import pytest
from django.db import connection

from bench._processes import cpu_meter, cpu_ms_per, database_server_processes, process_tree

BURN = "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass\n"
# Waits for a line, runs a child that burns 0.4 s of CPU, says so, and waits for another line.
PARENT = f"import subprocess, sys\ninput()\nsubprocess.run([sys.executable, '-c', {BURN!r}])\nprint('done', flush=True)\ninput()\n"


def test_cpu_meter_counts_the_machine_and_leaves_out_a_process_that_ended_inside_the_block() -> None:
    # given a process that starts a busy child when told to, and a group that stays idle
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert parent.stdin is not None and parent.stdout is not None
    try:
        groups = {"tree": lambda: process_tree(parent.pid), "idle": lambda: [psutil.Process(1)]}
        # when the child starts and ends inside the block
        with cpu_meter(groups) as used:
            parent.stdin.write("\n")
            parent.stdin.flush()
            assert parent.stdout.readline().strip() == "done"
    finally:
        parent.communicate("\n", timeout=10)
    # then its burn is the machine's, but not its group's (the child was gone at the end)
    assert used["machine"] >= 0.35
    assert used["tree"] < 0.3
    assert used["idle"] < 0.1


def test_cpu_meter_counts_a_process_that_lives_through_the_block() -> None:
    # given a process that burns 0.5 s of CPU, then waits
    burner = subprocess.Popen(
        [sys.executable, "-c", BURN.replace("0.4", "0.5") + "input()"], stdin=subprocess.PIPE
    )
    try:
        # when the block lasts while it burns
        with cpu_meter({"burner": lambda: process_tree(burner.pid)}) as used:
            deadline = time.monotonic() + 30
            while sum(psutil.Process(burner.pid).cpu_times()[:2]) < 0.45 and time.monotonic() < deadline:
                time.sleep(0.01)
    finally:
        burner.communicate(b"\n", timeout=10)
    # then its group holds what it burnt meanwhile, and per unit of work it is divided
    assert 0.2 <= used["burner"] <= 0.6
    assert cpu_ms_per(used, 10)["burner"] == round(1000 * used["burner"] / 10, 2)


@pytest.mark.django_db
def test_database_server_processes_are_the_server_s_own_with_this_connection_s_backend() -> None:
    # given this test's connection to the embedded server
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    # when its processes are listed
    processes = database_server_processes()
    # then they are the postmaster first, and every one of them a PostgreSQL process, this backend too
    assert backend in [process.pid for process in processes]
    assert processes[0].pid == psutil.Process(backend).ppid()
    assert all(process.name() == "postgres" for process in processes)
