"""The soak charges each role the CPU it used during the run, also for processes killed meanwhile."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil

from scripts.soak_cpu import LOAD_GENERATOR, ProcessCpu, cpu_delta, cpu_snapshot


def test_a_killed_worker_is_charged_to_the_worker_and_not_below_zero():
    # given a launcher with a worker master (with a pool child) and a web server, before the run
    before = {
        1: ProcessCpu(role="launcher", parent=0, own=1.0, reaped=0.0),
        2: ProcessCpu(role="worker", parent=1, own=5.0, reaped=0.0),  # will be killed
        3: ProcessCpu(role="worker", parent=2, own=2.0, reaped=0.0),  # orphaned with it
        4: ProcessCpu(role="web", parent=1, own=10.0, reaped=0.0),
    }
    # when, by the end, the master used 1 s more and was killed and reaped by the launcher,
    # a new master used 0.5 s, the web server 4 s and the launcher 0.2 s
    after = {
        1: ProcessCpu(role="launcher", parent=0, own=1.2, reaped=6.0),
        5: ProcessCpu(role="worker", parent=1, own=0.5, reaped=0.0),
        4: ProcessCpu(role="web", parent=1, own=14.0, reaped=0.0),
    }
    # then each role is charged what it used during the run
    assert cpu_delta(before, after) == {"launcher": 0.2, "web": 4.0, "worker": 1.5}


def test_reaped_pool_children_stay_with_their_parents_role():
    # given a worker master whose pool child dies and is replaced during the run
    before = {
        1: ProcessCpu(role="worker", parent=0, own=3.0, reaped=0.0),
        2: ProcessCpu(role="worker", parent=1, own=1.0, reaped=0.0),
    }
    after = {
        1: ProcessCpu(role="worker", parent=0, own=3.5, reaped=4.0),  # the child's whole life: 4 s
        3: ProcessCpu(role="worker", parent=1, own=2.0, reaped=0.0),
    }
    assert cpu_delta(before, after) == {"worker": 5.5}


def test_a_snapshot_reads_real_processes_by_role():
    # given a child process that burns some CPU
    child = subprocess.Popen([sys.executable, "-c", "import time\nt=time.process_time()\nwhile time.process_time()-t<0.3: pass\ntime.sleep(60)"])  # fmt: skip
    try:
        time.sleep(1.0)
        # when the tree under this test is read
        snapshot = cpu_snapshot([psutil.Process(os.getpid())])
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    # then the child is there with its parent and its CPU, and this process is the load
    assert snapshot[child.pid].parent == os.getpid() and snapshot[child.pid].own >= 0.25
    assert snapshot[child.pid].role == "launcher"
    assert snapshot[os.getpid()].role == LOAD_GENERATOR
